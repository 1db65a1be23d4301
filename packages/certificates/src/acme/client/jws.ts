// jose is imported when the first request is signed (an ACME issuer exists), not with this module: the
// controller loads the ACME code with its other controllers (docs/adr/1101-controller-process-setup.md).
import type { FlattenedJWS, JWK } from 'jose';
import type { AccountKey } from './account-key.ts';

/**
 * The JWS of RFC 8555 §6.2: flattened JSON serialization, protected header with `alg`, `nonce`, `url` and
 * either `jwk` (newAccount, before there is an account URL) or `kid` (the account URL, every other request).
 */

const encoder = new TextEncoder();

export interface SignRequest {
  key: AccountKey;
  url: string;
  nonce: string;
  /** The account URL; without it the public JWK goes into the header. */
  kid?: string;
  /** A JSON payload, or undefined for POST-as-GET (an empty payload, §6.3). */
  payload: unknown;
}

export async function signRequest({ key, url, nonce, kid, payload }: SignRequest): Promise<FlattenedJWS> {
  const header = kid
    ? { alg: key.algorithm, nonce, url, kid }
    : { alg: key.algorithm, nonce, url, jwk: key.publicJwk };
  const body = payload === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(payload));
  const { FlattenedSign } = await import('jose');
  return new FlattenedSign(body).setProtectedHeader(header).sign(key.privateKey);
}

/**
 * The `externalAccountBinding` member of a newAccount payload (RFC 8555 §7.3.4): the account's public JWK
 * signed with the CA-issued MAC key, header {alg: HS256, kid: keyID, url: newAccount URL} and no nonce.
 * HS256 always: cert-manager ignores the deprecated `keyAlgorithm` field and so do we.
 */
export async function externalAccountBinding(opts: {
  keyID: string;
  hmacKey: Uint8Array;
  url: string;
  accountJwk: JWK;
}): Promise<FlattenedJWS> {
  const { FlattenedSign } = await import('jose');
  return new FlattenedSign(encoder.encode(JSON.stringify(opts.accountJwk)))
    .setProtectedHeader({ alg: 'HS256', kid: opts.keyID, url: opts.url })
    .sign(opts.hmacKey);
}

/**
 * The EAB MAC key as cert-manager reads it from its Secret: unpadded base64url (Go's RawURLEncoding), which
 * refuses padding and the standard alphabet's `+` and `/` rather than guessing.
 */
export function decodeEabHmacKey(text: string): Uint8Array {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9_-]*$/.test(trimmed) || trimmed.length % 4 === 1) {
    throw new Error('the external account binding key is not valid unpadded base64url');
  }
  if (trimmed.length === 0) throw new Error('the external account binding key is empty');
  return Buffer.from(trimmed, 'base64url');
}
