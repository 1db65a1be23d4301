import { KeyObject } from 'node:crypto';
import type { SharedInformer } from '@certkit/runtime';
import { ExperimentalAnnotations } from '../../api/experimental.ts';
import { signCertificate } from '../../pki/index.ts';
import { privateKeyFromSecret } from '../certificaterequests/selfsigned.ts';
import { signingFailure, type SignOutcome } from '../certificaterequests/signer.ts';
import type { ControllerContext } from '../context.ts';
import { resourceNamespace, type IssuerHandle } from '../issuers/generic.ts';
import type { CsrCertificateSigningRequest, CsrSigner } from './controller.ts';
import { csrSigningOptions } from './request.ts';

/**
 * The SelfSigned signer of CSRs (cert-manager's certificatesigningrequests/selfsigned): a CSR carries no
 * private key, so the requester names the Secret holding it in the
 * `experimental.cert-manager.io/private-key-secret-name` annotation; the Secret is read from the Issuer's
 * namespace, or the cluster resource namespace for a ClusterIssuer. The key is read as the CertificateRequest
 * SelfSigned signer reads it (certificaterequests/selfsigned.ts), and must be the CSR's.
 */

const KEY_ANNOTATION = ExperimentalAnnotations.privateKeySecretName;
export const CSR_KEY_SECRET_INDEX = 'privateKeySecretName';

/** The CertificateRequest signer's Pending reasons, as cert-manager's CSR signer words its Events. */
const EVENT_REASONS: Record<string, string> = { MissingSecret: 'SecretNotFound' };

async function sign(
  ctx: ControllerContext,
  csr: CsrCertificateSigningRequest,
  handle: IssuerHandle,
  durationMs: number,
): Promise<SignOutcome> {
  const secretName = csr.metadata?.annotations?.[KEY_ANNOTATION];
  if (!secretName) {
    const message = `Missing private key reference annotation: "${KEY_ANNOTATION}"`;
    return { failed: { reason: 'MissingAnnotation', message } };
  }
  const key = await privateKeyFromSecret(ctx, resourceNamespace(ctx, handle), secretName, KEY_ANNOTATION);
  if (!(key instanceof KeyObject)) {
    if ('pending' in key) {
      const reason = EVENT_REASONS[key.pending.reason] ?? key.pending.reason;
      return { pending: { ...key.pending, reason } };
    }
    return key;
  }
  try {
    const { certPem, leaf } = await signCertificate(
      csrSigningOptions(csr, durationMs, { selfSignedKey: key }, ctx.now(), {
        crlDistributionPoints: handle.issuer.spec?.selfSigned?.crlDistributionPoints,
      }),
    );
    return { issued: { certPem, caPem: certPem, leaf } };
  } catch (err) {
    return signingFailure('selfsigned', err);
  }
}

/** The private key Secret a CSR names (any namespace: which one depends on the issuer). */
export const csrKeySecretIndex = (obj: { metadata?: { annotations?: Record<string, string> } }): string[] => {
  const name = obj.metadata?.annotations?.[KEY_ANNOTATION];
  return name ? [name] : [];
};

export function selfSignedCsrSigner(
  ctx: ControllerContext,
  csrs: SharedInformer<CsrCertificateSigningRequest>,
): CsrSigner {
  return {
    type: 'selfsigned',
    issuedMessage: 'Certificate self signed successfully',
    sign: (csr, handle, durationMs) => sign(ctx, csr, handle, durationMs),
    // The key Secret, created after the CSR or fixed, brings back the CSRs naming it.
    watch(enqueue) {
      ctx.secrets.onChange((secret) => {
        const name = secret.metadata?.name;
        if (!name) return;
        for (const csr of csrs.getStore().byIndex(CSR_KEY_SECRET_INDEX, name)) enqueue(csr);
      });
    },
  };
}
