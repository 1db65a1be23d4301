import { formatGoDuration, parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.d.ts';
import { Defaults } from '../../api/constants.ts';
import { CSR_MINIMUM_DURATION_MS, ExperimentalAnnotations } from '../../api/experimental.ts';
import type { CertificateIssuer, SignCertificateOptions } from '../../pki/index.ts';

/**
 * What a Kubernetes CertificateSigningRequest asks a signer for (cert-manager's
 * CertificateTemplateFromCertificateSigningRequest's inputs): the CSR in spec.request, the lifetime, whether
 * it is a CA, and the usages, which are kube's usage names, the same strings as cert-manager's.
 */

/** spec.request is base64 of the PEM (a []byte in Go). */
export function csrPemOf(csr: CertificateSigningRequest): string {
  return Buffer.from(csr.spec?.request ?? '', 'base64').toString('latin1');
}

/**
 * The lifetime (DurationFromCertificateSigningRequest): the request-duration annotation, else
 * spec.expirationSeconds, else 90 days. `problem` when it is unreadable or shorter than 600 s, worded as
 * cert-manager's Failed condition, with its reason.
 */
export function requestedDuration(
  csr: CertificateSigningRequest,
): { ms: number } | { problem: { reason: string; message: string } } {
  const annotation = csr.metadata?.annotations?.[ExperimentalAnnotations.requestDuration];
  let ns: bigint;
  if (annotation === undefined) {
    const seconds = csr.spec?.expirationSeconds;
    if (seconds === undefined) return { ms: Defaults.durationMs };
    ns = BigInt(seconds) * 1_000_000_000n;
  } else {
    try {
      ns = parseGoDuration(annotation);
    } catch (err) {
      return {
        problem: {
          reason: 'ErrorParseDuration',
          message: `Failed to parse requested duration: ${(err as Error).message}`,
        },
      };
    }
  }
  const ms = toMilliseconds(ns);
  if (ms < CSR_MINIMUM_DURATION_MS) {
    const minimum = formatGoDuration(BigInt(CSR_MINIMUM_DURATION_MS) * 1_000_000n);
    return {
      problem: {
        reason: 'InvalidDuration',
        message: `CertificateSigningRequest minimum allowed duration is ${minimum}, requested ${formatGoDuration(ns)}`,
      },
    };
  }
  return { ms };
}

/** Only the exact string `"true"` makes a CA, as cert-manager compares it. */
export function requestsCA(csr: CertificateSigningRequest): boolean {
  return csr.metadata?.annotations?.[ExperimentalAnnotations.requestIsCA] === 'true';
}

/** The signing options of a CSR whose duration has been checked (requestedDuration gave `ms`). */
export function csrSigningOptions(
  csr: CertificateSigningRequest,
  durationMs: number,
  issuer: CertificateIssuer,
  now: Date,
  extensions: Pick<
    SignCertificateOptions,
    'crlDistributionPoints' | 'ocspServers' | 'issuingCertificateURLs'
  > = {},
): SignCertificateOptions {
  return {
    csrPem: csrPemOf(csr),
    duration: durationMs,
    isCA: requestsCA(csr),
    usages: csr.spec?.usages,
    issuer,
    now,
    ...extensions,
  };
}
