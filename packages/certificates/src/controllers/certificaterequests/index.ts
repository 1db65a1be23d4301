import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { acmeSigner } from './acme.ts';
import { ApprovalHandOff, APPROVER_NAME, newApproverController } from './approver.ts';
import { caSigner } from './ca.ts';
import { selfSignedSigner } from './selfsigned.ts';
import { newSignerController, signerControllerName } from './signer.ts';

/**
 * The CertificateRequest controllers: the approver and the SelfSigned, CA and ACME signers, with their event
 * handlers on the context's informers and Secret getter (added before or after startContext alike: a late
 * handler is handed the cache's contents as adds).
 */
export function registerCertificateRequestControllers(
  ctx: ControllerContext,
  enabled: (name: string) => boolean = () => true,
): Controller[] {
  // Without the approver nothing is handed over: the signers wait for another approval controller.
  const handOff = new ApprovalHandOff();
  const controllers: Controller[] = [];
  if (enabled(APPROVER_NAME)) controllers.push(newApproverController(ctx, handOff));
  const signers = [selfSignedSigner(ctx), caSigner(ctx), acmeSigner(ctx)].filter((signer) =>
    enabled(signerControllerName(signer.type)),
  );
  // One signer also records what no in-tree signer would (missing issuers, denials of requests for other
  // issuer types), so each is recorded once: the SelfSigned one, or the first still running.
  signers.forEach((signer, i) =>
    controllers.push(newSignerController(ctx, signer, handOff, { reportIssuerProblems: i === 0 })),
  );
  return controllers;
}

export { APPROVED_MESSAGE, APPROVED_REASON, APPROVER_NAME, newApproverController } from './approver.ts';
export { acmeSigner } from './acme.ts';
export { caSigner } from './ca.ts';
export { selfSignedSigner } from './selfsigned.ts';
export { newSignerController, type Signer, type SignOutcome } from './signer.ts';
