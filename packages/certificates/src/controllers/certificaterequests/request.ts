import { formatFieldError, parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import { Defaults } from '../../api/constants.ts';
import type { CertificateRequest } from '../../api/types.ts';
import { validateCertificateRequestSpec } from '../../api/validation.ts';
import { requestSignatureVerified } from '../../api/validation/csr.ts';
import { SigningError, type CertificateIssuer, type SignCertificateOptions } from '../../pki/index.ts';

/**
 * What a CertificateRequest asks a signer for (pki.CertificateTemplateFromCertificateRequest's inputs): the
 * CSR, the lifetime (spec.duration, 90 days when unset or zero, as apiutil.DefaultCertDuration) and the
 * isCA/usages the certificate must carry.
 */

/** spec.request is base64 of the PEM; an undecodable one is caught by validation and by signing. */
export function csrPemOf(cr: CertificateRequest): string {
  return Buffer.from(cr.spec?.request ?? '', 'base64').toString('latin1');
}

/** The lifetime in milliseconds; an unparseable duration is an invalid request. */
export function requestedDuration(cr: CertificateRequest): number {
  const text = cr.spec?.duration;
  if (!text) return Defaults.durationMs;
  let ms: number;
  try {
    ms = toMilliseconds(parseGoDuration(text));
  } catch (err) {
    throw new SigningError('InvalidRequest', `invalid spec.duration: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return ms === 0 ? Defaults.durationMs : ms;
}

export function signingOptions(
  cr: CertificateRequest,
  issuer: CertificateIssuer,
  now: Date,
  extensions: Pick<
    SignCertificateOptions,
    'crlDistributionPoints' | 'ocspServers' | 'issuingCertificateURLs'
  > = {},
): SignCertificateOptions {
  return {
    csrPem: csrPemOf(cr),
    duration: requestedDuration(cr),
    isCA: cr.spec?.isCA ?? false,
    usages: cr.spec?.usages,
    issuer,
    now,
    ...extensions,
    // The signers run the webhook's checks (specProblem) first, which verified it, or knew it built here.
    csrSignatureVerified: requestSignatureVerified(cr.spec?.request ?? ''),
  };
}

/**
 * The webhook's checks of the spec (the controller must not trust that a webhook ran: against an API server
 * without one, a request with an unreadable CSR would otherwise be retried forever). Undefined when valid.
 */
export function specProblem(cr: CertificateRequest): string | undefined {
  const errors = validateCertificateRequestSpec(cr.spec);
  if (errors.length === 0) return undefined;
  const list = errors.map(formatFieldError);
  return list.length === 1 ? list[0] : `[${list.join(', ')}]`;
}
