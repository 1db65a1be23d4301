import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { CertificateRequest } from '../api/types.ts';
import { type CertificateRequestView, parseCertificateRequest } from '../pki/index.ts';
import { readyReason, ReadyReason } from './certificaterequests/conditions.ts';

/**
 * What the controller keeps of an issued CertificateRequest in its cache: the facts the Certificate
 * controllers decide with, not the CSR and certificate bytes (docs/adr/1114). Once a request is issued, no
 * signer looks at it again; the Certificate controllers only compare its CSR with the Certificate's spec and
 * key (policies, request manager, issuing) and its certificate with the Secret's (readiness). The bytes are
 * read live on the one path that needs them: the issuing controller copying the certificate into the Secret.
 */

/** A digest in place of a stripped value: `sha256:` and the base64url SHA-256 of the text it replaces. */
export type DigestToken = `sha256:${string}`;

const TOKEN_PREFIX = 'sha256:';

export function digestToken(text: string): DigestToken {
  return `${TOKEN_PREFIX}${createHash('sha256').update(text).digest('base64url')}`;
}

/** Whether a field holds a digest token (never valid base64: base64 has no ':'). */
export function isDigestToken(value: unknown): value is DigestToken {
  return typeof value === 'string' && value.startsWith(TOKEN_PREFIX);
}

/** The digest of a public key (its SubjectPublicKeyInfo DER), the form keys are compared in. */
export type PublicKeyDigest = string;

function spkiDigest(spki: Buffer): PublicKeyDigest {
  return createHash('sha256').update(spki).digest('base64url');
}

const keyDigests = new WeakMap<KeyObject, PublicKeyDigest>();

/**
 * The public key digest of a key (private or public), remembered per KeyObject: the controllers compare the
 * same key (from the bounded parse caches) on every reconcile of a burst.
 */
export function publicKeyDigest(key: KeyObject): PublicKeyDigest {
  let digest = keyDigests.get(key);
  if (digest === undefined) {
    const publicKey = key.type === 'private' ? createPublicKey(key) : key;
    digest = spkiDigest(publicKey.export({ type: 'spki', format: 'der' }));
    keyDigests.set(key, digest);
  }
  return digest;
}

/**
 * A CSR as the Certificate controllers compare it: the parsed view without its KeyObject and raw extensions
 * (which none of them reads), the public key as its digest.
 */
export type RequestFacts = Omit<CertificateRequestView, 'publicKey' | 'extensions'> & {
  publicKeyDigest: PublicKeyDigest;
};

/** One frozen empty array for every empty list of the facts: most of a subject's attribute lists are empty. */
const EMPTY: readonly never[] = Object.freeze([]);

function withSharedEmptyArrays<T>(value: T): T {
  if (Array.isArray(value)) return (value.length === 0 ? EMPTY : value.map(withSharedEmptyArrays)) as T;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = withSharedEmptyArrays(item);
  return out as T;
}

/** Parses a base64 PEM CSR (spec.request) into its facts; throws what parsing throws. */
export function parseRequestFacts(base64: string): RequestFacts {
  const {
    publicKey,
    extensions: _extensions,
    ...view
  } = parseCertificateRequest(Buffer.from(base64, 'base64'));
  return Object.freeze({ ...withSharedEmptyArrays(view), publicKeyDigest: publicKeyDigest(publicKey) });
}

/** The facts of cached requests whose spec.request was stripped, by the cached object. */
const factsByRequest = new WeakMap<CertificateRequest, RequestFacts>();

/** The facts kept for a stripped cached request, if `cr` is one. */
export function strippedRequestFacts(cr: CertificateRequest): RequestFacts | undefined {
  return factsByRequest.get(cr);
}

/** Whether `cr` is a cached copy without its bytes (spec.request, status.certificate and status.ca). */
export function isStrippedRequest(cr: CertificateRequest): boolean {
  return isDigestToken(cr.spec?.request) || isDigestToken(cr.status?.certificate);
}

/**
 * Replaces, in place, an issued request's spec.request, status.certificate and status.ca by digest tokens and
 * remembers the CSR's facts for the object. Requests not issued yet keep their bytes: the signers read them.
 * A CSR that does not parse is kept as it is (its error is reported from the bytes, as before). Idempotent.
 */
export function stripIssuedRequest(cr: CertificateRequest): CertificateRequest {
  const status = cr.status;
  if (!status?.certificate || isDigestToken(status.certificate) || readyReason(cr) !== ReadyReason.Issued) {
    return cr;
  }
  const request = cr.spec?.request;
  if (!request || isDigestToken(request)) return cr;
  let facts: RequestFacts;
  try {
    facts = parseRequestFacts(request);
  } catch {
    return cr;
  }
  cr.spec = { ...cr.spec, request: digestToken(request) };
  cr.status = {
    ...status,
    certificate: digestToken(status.certificate),
    ...(status.ca ? { ca: digestToken(status.ca) } : {}),
  };
  factsByRequest.set(cr, facts);
  return cr;
}
