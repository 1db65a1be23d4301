import type { Controller, ResourceRef } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { acmeCsrSigner } from './acme.ts';
import { caCsrSigner } from './ca.ts';
import {
  CSR_SIGNER_NAME_INDEX,
  csrSignerControllerName,
  newCsrSignerController,
  type CsrCertificateSigningRequest,
} from './controller.ts';
import { CSR_KEY_SECRET_INDEX, csrKeySecretIndex, selfSignedCsrSigner } from './selfsigned.ts';

/**
 * cert-manager's Kubernetes CertificateSigningRequest signers (`certificatesigningrequests-issuer-ca`,
 * `-selfsigned` and `-acme`), behind the ExperimentalCertificateSigningRequestControllers gate or named in
 * `--controllers`. The CSR informer is made only when one of them runs: a controller without them watches no
 * CSRs and keeps nothing of them.
 */

export const certificateSigningRequestsRef: ResourceRef = {
  group: 'certificates.k8s.io',
  version: 'v1',
  resource: 'certificatesigningrequests',
  kind: 'CertificateSigningRequest',
  namespaced: false,
};

export function registerCertificateSigningRequestControllers(
  ctx: ControllerContext,
  enabled: (name: string) => boolean,
): Controller[] {
  // CSRs are cluster-scoped: a controller limited to one namespace (--namespace) signs none, as cert-manager's.
  if (ctx.options.namespace) return [];
  const types = (['selfsigned', 'ca', 'acme'] as const).filter((type) =>
    enabled(csrSignerControllerName(type)),
  );
  if (types.length === 0) return [];
  const csrs = ctx.factory.informerFor<CsrCertificateSigningRequest>(certificateSigningRequestsRef, {
    indexers: {
      [CSR_SIGNER_NAME_INDEX]: (obj) => {
        const signerName = (obj as CsrCertificateSigningRequest).spec?.signerName;
        return signerName ? [signerName] : [];
      },
      [CSR_KEY_SECRET_INDEX]: csrKeySecretIndex,
    },
  });
  const client = ctx.client.resource<CsrCertificateSigningRequest>(certificateSigningRequestsRef);
  // The first signer still running also records the Events of CSRs whose issuer no signer takes.
  return types.map((type, i) =>
    newCsrSignerController(
      ctx,
      csrs,
      client,
      type === 'ca'
        ? caCsrSigner(ctx, csrs)
        : type === 'acme'
          ? acmeCsrSigner(ctx, csrs)
          : selfSignedCsrSigner(ctx, csrs),
      { reportIssuerProblems: i === 0 },
    ),
  );
}
