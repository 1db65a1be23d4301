import { signCertificate } from '../../pki/index.ts';
import { caKeyPair } from '../certificaterequests/ca.ts';
import { signingFailure, type SignOutcome } from '../certificaterequests/signer.ts';
import type { ControllerContext } from '../context.ts';
import { issuersForSecret } from '../issuers/ca-secret.ts';
import type { IssuerHandle } from '../issuers/generic.ts';
import type { SharedInformer } from '@certkit/runtime';
import { csrsForIssuer, type CsrCertificateSigningRequest, type CsrSigner } from './controller.ts';
import { csrSigningOptions } from './request.ts';

/**
 * The CA signer of CSRs (cert-manager's certificatesigningrequests/ca): signs with the key pair of the
 * issuer's `spec.ca.secretName`, read as the CertificateRequest CA signer reads it (certificaterequests/ca.ts),
 * and writes the chain without the root, as that signer writes status.certificate.
 */

/** The CertificateRequest signer's Pending reasons, as cert-manager's CSR signer words its Events. */
const EVENT_REASONS: Record<string, string> = { SecretMissing: 'SecretNotFound' };

async function sign(
  ctx: ControllerContext,
  csr: CsrCertificateSigningRequest,
  handle: IssuerHandle,
  durationMs: number,
): Promise<SignOutcome> {
  const pair = await caKeyPair(ctx, handle);
  if (!('key' in pair)) {
    if ('pending' in pair) {
      const reason = EVENT_REASONS[pair.pending.reason] ?? pair.pending.reason;
      return { pending: { ...pair.pending, reason } };
    }
    return pair;
  }
  const ca = handle.issuer.spec?.ca;
  try {
    const { certPem, caPem, leaf } = await signCertificate(
      csrSigningOptions(csr, durationMs, { certPem: pair.certPem, key: pair.key }, ctx.now(), {
        crlDistributionPoints: ca?.crlDistributionPoints,
        ocspServers: ca?.ocspServers,
        issuingCertificateURLs: ca?.issuingCertificateURLs,
      }),
    );
    return { issued: { certPem, caPem, leaf } };
  } catch (err) {
    return signingFailure('ca', err);
  }
}

export function caCsrSigner(
  ctx: ControllerContext,
  csrs: SharedInformer<CsrCertificateSigningRequest>,
): CsrSigner {
  return {
    type: 'ca',
    issuedMessage: 'Certificate signed successfully',
    sign: (csr, handle, durationMs) => sign(ctx, csr, handle, durationMs),
    // A change to an issuer's CA Secret brings back the CSRs naming that issuer.
    watch(enqueue) {
      ctx.secrets.onChange((secret) => {
        const { namespace, name } = secret.metadata ?? {};
        if (!namespace || !name) return;
        for (const { kind, issuer } of issuersForSecret(ctx, namespace, name))
          for (const csr of csrsForIssuer(csrs, kind, issuer)) enqueue(csr);
      });
    },
  };
}
