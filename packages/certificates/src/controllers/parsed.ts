import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../api/constants.ts';
import type { CertificateRequest } from '../api/types.ts';
import { LruMap } from '../lru.ts';
import {
  encodedCertificateInfo,
  parseCertificate,
  parsePrivateKey,
  publicKeysEqual,
  type CertificateInfo,
  type DecodedCertificate,
} from '../pki/index.ts';
import {
  certificateFacts,
  isSecretFactsText,
  keyFacts,
  readCertificateFactsText,
  readKeyFactsText,
  type CertificateFacts,
  type KeyFacts,
} from './secret-facts.ts';
import {
  digestToken,
  isFactsText,
  isStrippedRequest,
  parseRequestFacts,
  publicKeyDigest,
  readFactsText,
  spkiDigest,
  type DigestToken,
  type PublicKeyDigest,
  type RequestFacts,
} from './request-facts.ts';

/**
 * Parsed views of cached objects, remembered per content in bounded caches. The six Certificate controllers
 * look at each Certificate's Secret, key and requests many times per issuance; without this each look parsed
 * the same PEM again, which was most of the controller's CPU. The caches are bounded and keyed by content, not
 * held per cached object: a parsed key or certificate (a KeyObject, an X509 certificate, DER buffers) costs
 * several times its PEM, so keeping one per cached object made the controller's memory grow by tens of KB per
 * managed Certificate (docs/adr/1102).
 */

export type Parsed<T> = { value: T } | { error: Error };

function attempt<T>(f: () => T): Parsed<T> {
  try {
    return { value: f() };
  } catch (err) {
    return { error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/**
 * How many distinct contents (PEM or base64 text) each parser remembers: what is in flight while a burst of
 * Certificates is issued (each request and key is read again at every version of its objects), not every
 * managed Certificate. Between bursts a Certificate is looked at once per resync or change, and parsing it
 * again then costs less than keeping its parse. At most a few MB per parser.
 */
export const CONTENT_CACHE_SIZE = 512;

/**
 * How long a parse cache may go unused before it lets go of everything (ms). What a burst parsed is of no use
 * once it is over (the next look at a Certificate comes with its next change or resync), and each parse holds
 * native memory V8 does not see (a parsed EC key is about 4 KB of OpenSSL's, a public key about 3 KB): held
 * until the caches turn over, it was 10–15 MB of the controller's RSS after any burst (docs/adr/1112).
 */
export const IDLE_RELEASE_MS = 5_000;

const contentCaches: ContentCache<unknown>[] = [];
let releaseTimer: NodeJS.Timeout | undefined;

/** Empties every parse cache that went unused for IDLE_RELEASE_MS; stops looking once all are empty. */
export function releaseIdleParses(now = Date.now()): void {
  let holding = false;
  for (const cache of contentCaches) holding = cache.releaseIfIdle(now) || holding;
  if (!holding && releaseTimer) {
    clearInterval(releaseTimer);
    releaseTimer = undefined;
  }
}

/**
 * Remembers `parse(content)` for the last CONTENT_CACHE_SIZE contents: a new version of an object (a status
 * or label change) mostly carries the same PEM, and a next-key Secret and the Secret issued from it carry the
 * same key. Failures are remembered too (the content will not change). Emptied when unused for a while.
 */
class ContentCache<T> {
  readonly #results = new LruMap<string, Parsed<T>>(CONTENT_CACHE_SIZE);
  readonly #parse: (content: string) => T;
  #lastUse = 0;

  constructor(parse: (content: string) => T) {
    this.#parse = parse;
    contentCaches.push(this as ContentCache<unknown>);
  }

  parsed = (content: string): Parsed<T> => {
    this.#used();
    return this.#results.getOrCompute(content, () => attempt(() => this.#parse(content)));
  };

  /** The remembered parse of `content`, without parsing it or making it the most recently used. */
  peek(content: string): Parsed<T> | undefined {
    return this.#results.has(content) ? this.#results.get(content) : undefined;
  }

  /** What parsing `content` would give, known already (the value it was encoded from). */
  remember(content: string, value: T): void {
    this.#used();
    this.#results.set(content, { value });
  }

  /** Empties the cache if unused for IDLE_RELEASE_MS; whether it still holds anything. */
  releaseIfIdle(now: number): boolean {
    if (this.#results.size > 0 && now - this.#lastUse >= IDLE_RELEASE_MS) this.#results.clear();
    return this.#results.size > 0;
  }

  #used(): void {
    this.#lastUse = Date.now();
    // One timer for all caches, only while something is held; unreferenced, so it keeps no process alive.
    // Checking twice per period lets go within 1.5 periods of the last use.
    releaseTimer ??= setInterval(releaseIdleParses, IDLE_RELEASE_MS / 2).unref();
  }
}

/**
 * The parse of an object's content through a content cache. Informer stores hand out the same strings until
 * an object changes, and V8 remembers a string's hash, so a lookup costs no more than a per-object cache did;
 * unlike one, it lets go of parses nobody looked at lately while their objects stay cached.
 */
function byContent<O extends object, T>(
  contentOf: (obj: O) => string,
  parsed: (content: string) => Parsed<T>,
): (obj: O) => Parsed<T> {
  return (obj) => parsed(contentOf(obj));
}

/** The value, or the remembered error thrown again (for callers that handle exceptions). */
export function valueOf<T>(parsed: Parsed<T>): T {
  if ('error' in parsed) throw parsed.error;
  return parsed.value;
}

/** The bytes of a Secret data key (base64 on the wire), or undefined when absent or empty. */
export function secretBytes(secret: Secret | undefined, key: string): Buffer | undefined {
  const value = secret?.data?.[key];
  if (!value) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length ? bytes : undefined;
}

/** Whether a Secret data key holds at least one byte, without decoding it. */
export function hasSecretBytes(secret: Secret | undefined, key: string): boolean {
  const value = secret?.data?.[key];
  return Boolean(value) && Buffer.byteLength(value!, 'base64') > 0;
}

// Secrets and requests carry PEM as base64 (Secret data, spec.request, status.certificate).
const privateKeys = new ContentCache((base64) => parsePrivateKey(Buffer.from(base64, 'base64')));
const certificates = new ContentCache((base64) => parseCertificate(Buffer.from(base64, 'base64')));
const csrs = new ContentCache(parseRequestFacts);
// The facts an issued request is cached with (request-facts.ts), read back from their text.
const factsTexts = new ContentCache(readFactsText);

/**
 * A private key PEM about to be written to a Secret, with the key it encodes: when the Secret comes back
 * from the cache its `tls.key` is known, instead of parsed again (an RSA key takes a good fraction of a
 * millisecond to parse).
 */
export function rememberPrivateKey(pem: string, key: KeyObject): string {
  const base64 = Buffer.from(pem).toString('base64');
  privateKeys.remember(base64, key);
  return base64;
}

/**
 * A certificate PEM as a request's status.certificate will carry it (base64), parsed through the same cache:
 * the signer checks what an issuer returned (ACME's; the CA and SelfSigned signers' own certificates go
 * through rememberSignedCertificate), and the issuing controller then finds it parsed.
 */
export function parsedCertificatePem(pem: string): Parsed<CertificateInfo> {
  return certificates.parsed(Buffer.from(pem).toString('base64'));
}

/**
 * A certificate this process has just signed, as `parsedCertificatePem` would give it, read from the DER the
 * signer decoded rather than parsed again by OpenSSL (docs/adr/1185); remembered for the issuing controller.
 */
export function rememberSignedCertificate(pem: string, leaf: DecodedCertificate): Parsed<CertificateInfo> {
  const parsed = attempt(() => encodedCertificateInfo(leaf));
  if ('error' in parsed) return parsedCertificatePem(pem);
  certificates.remember(Buffer.from(pem).toString('base64'), parsed.value);
  return parsed;
}

/**
 * `tls.key` of a Secret with its bytes, parsed. A Secret cached as facts (secret-facts.ts) has none: its
 * readers take secretKeyFacts, or read the Secret live (SecretGetter.getWithData).
 */
export const secretPrivateKey: (secret: Secret) => Parsed<KeyObject> = byContent(
  (secret) => secret.data?.[SecretKeys.tlsKey] ?? '',
  (content) => (isSecretFactsText(content) ? factsNotBytes('tls.key') : privateKeys.parsed(content)),
);

/** The leaf of `tls.crt` of a Secret with its bytes, parsed (see secretPrivateKey). */
export const secretCertificate: (secret: Secret) => Parsed<CertificateInfo> = byContent(
  (secret) => secret.data?.[SecretKeys.tlsCert] ?? '',
  (content) => (isSecretFactsText(content) ? factsNotBytes('tls.crt') : certificates.parsed(content)),
);

function factsNotBytes(key: string): { error: Error } {
  return { error: new Error(`${key} of a Secret cached as facts has no bytes: read it live`) };
}

// The facts of a Secret's key and certificate, from the facts text a cached Secret carries or from its bytes
// (a Secret read live, or one the cache keeps whole).
const keyFactsOf = new ContentCache((content) =>
  isSecretFactsText(content) ? readKeyFactsText(content) : keyFacts(valueOf(privateKeys.parsed(content))),
);
const certificateFactsOf = new ContentCache((content) =>
  isSecretFactsText(content)
    ? readCertificateFactsText(content)
    : certificateFacts(valueOf(certificates.parsed(content)), content),
);

/** `tls.key` of a Secret (cached as facts or with its bytes), as the policies compare it. */
export const secretKeyFacts: (secret: Secret) => Parsed<KeyFacts> = byContent(
  (secret) => secret.data?.[SecretKeys.tlsKey] ?? '',
  keyFactsOf.parsed,
);

/** The leaf of `tls.crt` of a Secret (cached as facts or with its bytes), as the policies compare it. */
export const secretCertificateFacts: (secret: Secret) => Parsed<CertificateFacts> = byContent(
  (secret) => secret.data?.[SecretKeys.tlsCert] ?? '',
  certificateFactsOf.parsed,
);

/**
 * The facts of a Secret's key and certificate as the cache transform takes them (cache-transforms.ts): from
 * the parse caches when they hold its bytes (a Secret the issuing controller just wrote, whose key and
 * certificate it remembered), else parsed and not remembered. A restart lists every Secret once; remembering
 * those parses would fill the caches, and OpenSSL's memory, with keys no controller asks for again soon.
 */
export function secretFactsForCache(secret: Secret): {
  key: Parsed<KeyFacts>;
  certificate: Parsed<CertificateFacts>;
} {
  const tlsKey = secret.data?.[SecretKeys.tlsKey] ?? '';
  const tlsCrt = secret.data?.[SecretKeys.tlsCert] ?? '';
  const key = privateKeys.peek(tlsKey) ?? attempt(() => parsePrivateKey(Buffer.from(tlsKey, 'base64')));
  const certificate =
    certificates.peek(tlsCrt) ?? attempt(() => parseCertificate(Buffer.from(tlsCrt, 'base64')));
  return {
    key: 'error' in key ? key : attempt(() => keyFacts(key.value)),
    certificate:
      'error' in certificate ? certificate : attempt(() => certificateFacts(certificate.value, tlsCrt)),
  };
}

/**
 * The digest of a Secret's `tls.crt` as the API server holds it (base64), whether the cache keeps its bytes or
 * its facts; undefined when it has none. Compared with a request's `status.certificate` and with what the
 * issuing controller just wrote.
 */
export function secretCertificateDigest(secret: Secret | undefined): DigestToken | undefined {
  const value = secret?.data?.[SecretKeys.tlsCert];
  if (value === undefined) return undefined;
  if (!isSecretFactsText(value)) return digestToken(value);
  const facts = certificateFactsOf.parsed(value);
  return 'error' in facts ? undefined : facts.value.digest;
}

/** Asking a cached issued request for its bytes is a bug of the caller: they are read live (request-facts.ts). */
const strippedError = (cr: CertificateRequest, field: string) => ({
  error: new Error(
    `${field} of CertificateRequest ${cr.metadata?.namespace}/${cr.metadata?.name} is not cached: read it live`,
  ),
});

/**
 * The CSR of a CertificateRequest, as facts: those the cache keeps in place of an issued request's CSR, else
 * parsed from spec.request.
 */
export function requestCsr(cr: CertificateRequest): Parsed<RequestFacts> {
  const request = cr.spec?.request ?? '';
  return isFactsText(request) ? factsTexts.parsed(request) : csrs.parsed(request);
}

/**
 * A CSR this process just built from `key`, as the request it is about to create carries it (base64): its
 * facts are parsed now with the key's digest, which the request manager has just compared, instead of
 * parsing the key out of the CSR again when the request comes back from the cache (docs/adr/1185).
 */
export function rememberBuiltRequest(base64: string, key: KeyObject): void {
  const facts = attempt(() => parseRequestFacts(base64, publicKeyDigest(key)));
  // A CSR of ours that did not parse is left to the ordinary parse, which says why.
  if ('value' in facts) csrs.remember(base64, facts.value);
}

/** The facts of a base64 PEM CSR (a request's spec.request), through the same cache; throws what parsing throws. */
export function csrFacts(base64: string): RequestFacts {
  return valueOf(csrs.parsed(base64));
}

/** The leaf of a CertificateRequest's status.certificate, parsed (from a live read for an issued request). */
export function requestCertificate(cr: CertificateRequest): Parsed<CertificateInfo> {
  if (isStrippedRequest(cr)) return strippedError(cr, 'status.certificate');
  return certificates.parsed(cr.status?.certificate ?? '');
}

/** Whether `key` has the public key whose digest is `digest` (a CSR's, from its facts). */
export function hasPublicKey(key: KeyObject, digest: PublicKeyDigest): boolean {
  return publicKeyDigest(key) === digest;
}

/**
 * Whether an issued certificate carries the public key whose digest is `digest` (a CSR's). A CA copies the
 * CSR's SubjectPublicKeyInfo into the certificate, and a CSR built here carries its key's in the form the
 * digest is taken of: the certificate's bytes then give the digest without exporting its key
 * (docs/adr/1185). Other bytes for the same key (a compressed EC point) are compared through the key.
 */
export function certificateHasPublicKey(cert: CertificateInfo, digest: PublicKeyDigest): boolean {
  return spkiDigest(cert.publicKeyInfo) === digest || publicKeyDigest(cert.publicKey) === digest;
}

/**
 * Whether two keys have the same public key, remembered per pair of key objects: the keys come from the
 * caches above, so the same pair is compared again on every reconcile until one of the objects changes.
 */
const comparisons = new WeakMap<KeyObject, WeakMap<KeyObject, boolean>>();

export function sameKeys(a: KeyObject, b: KeyObject): boolean {
  let withA = comparisons.get(a);
  if (!withA) comparisons.set(a, (withA = new WeakMap()));
  let equal = withA.get(b);
  if (equal === undefined) withA.set(b, (equal = publicKeysEqual(a, b)));
  return equal;
}
