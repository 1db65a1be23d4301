import { createHash } from 'node:crypto';

/**
 * What a challenge solver publishes (RFC 8555 §8.1, §8.3, §8.4): pure functions of the challenge token and
 * the account key's thumbprint (`AccountKey.thumbprint`).
 */

/** `token.thumbprint`: the key authorization, and also the exact body of the HTTP-01 response. */
export function keyAuthorization(token: string, thumbprint: string): string {
  return `${token}.${thumbprint}`;
}

/** The path the ACME server fetches for HTTP-01. */
export function http01Path(token: string): string {
  return `/.well-known/acme-challenge/${token}`;
}

/** The DNS-01 TXT value: unpadded base64url of SHA-256 over the key authorization. */
export function dns01TxtValue(keyAuth: string): string {
  return createHash('sha256').update(keyAuth).digest('base64url');
}

/** The DNS-01 record name, fully qualified; a wildcard and its apex share it (`*.` is not part of it). */
export function dns01RecordName(dnsName: string): string {
  const name = dnsName.startsWith('*.') ? dnsName.slice(2) : dnsName;
  return `_acme-challenge.${name.endsWith('.') ? name : `${name}.`}`;
}
