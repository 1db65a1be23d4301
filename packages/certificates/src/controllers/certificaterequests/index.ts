import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { acmeSigner } from './acme.ts';
import { ApprovalHandOff, newApproverController } from './approver.ts';
import { caSigner } from './ca.ts';
import { selfSignedSigner } from './selfsigned.ts';
import { newSignerController } from './signer.ts';

/**
 * The CertificateRequest controllers: the approver and the SelfSigned, CA and ACME signers, with their event
 * handlers on the context's informers and Secret getter (added before or after startContext alike: a late
 * handler is handed the cache's contents as adds).
 */
export function registerCertificateRequestControllers(ctx: ControllerContext): Controller[] {
  const handOff = new ApprovalHandOff();
  return [
    newApproverController(ctx, handOff),
    // The SelfSigned signer also records what no in-tree signer would (missing issuers, denials of requests
    // for other issuer types), so each is recorded once.
    newSignerController(ctx, selfSignedSigner(ctx), handOff, { reportIssuerProblems: true }),
    newSignerController(ctx, caSigner(ctx), handOff, { reportIssuerProblems: false }),
    newSignerController(ctx, acmeSigner(ctx), handOff, { reportIssuerProblems: false }),
  ];
}

export { APPROVED_MESSAGE, APPROVED_REASON, APPROVER_NAME, newApproverController } from './approver.ts';
export { acmeSigner } from './acme.ts';
export { caSigner } from './ca.ts';
export { selfSignedSigner } from './selfsigned.ts';
export { newSignerController, type Signer, type SignOutcome } from './signer.ts';
