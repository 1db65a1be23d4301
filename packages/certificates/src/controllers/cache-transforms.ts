import type { KubeObject } from '@certkit/apimachinery';
import type { TransformFunc } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../api/constants.ts';
import type { CertificateRequest } from '../api/types.ts';
import { csrFacts, secretFactsForCache } from './parsed.ts';
import { isStrippedRequest, stripIssuedRequest } from './request-facts.ts';
import { certificateFactsText, isPlainCertificateData, keyFactsText } from './secret-facts.ts';
import { adoptCertManagerTemplateKeys } from './secret-template-keys.ts';
import { strippedBytes } from './stripped-bytes.ts';

/**
 * What the controller's informers keep of each object, applied before an object enters a cache (controller-
 * runtime's cache transforms). Every cached object loses `metadata.managedFields`, which no controller here
 * reads. The rest is kept, but without repeating itself: JSON decoding gives every string of every object an
 * instance of its own, while most of them say the same as thousands of others (`cert-manager.io/v1`, condition
 * reasons and messages, issuer names, timestamps of one burst), and the PEM a Certificate's objects carry is
 * mostly the same text more than once: the CA bundle in every Secret's `ca.crt` and every request's
 * `status.ca`, the issued certificate in both its request's `status.certificate` and its Secret's `tls.crt`.
 * The transforms hand the cache one shared string per content instead (strings are immutable, so nothing can
 * tell).
 */

/**
 * How many distinct PEM (base64) texts are remembered for sharing: every CA bundle in use, which come back
 * all the time and so stay, and the certificates issued lately, whose request and Secret arrive close
 * together. Bounded, so a text nobody carries any more is forgotten; at most a few MB of strings, most of them
 * held by cached objects anyway.
 */
export const SHARED_PEM_CAPACITY = 4096;

/**
 * One string per content, for about the last `capacity` contents seen. Two generations of half the capacity
 * rather than an LRU: a hit in the current generation is one Map lookup, where an LRU deletes and re-inserts
 * the entry on every hit, and the transforms look up every short string of every object an informer receives
 * (that re-insertion, with the Map's rehashing of its holes, was about 5% of the controller's CPU during an
 * issuance burst; docs/adr/1150). A content met again in the older generation moves to the current one; when the
 * current one is full it becomes the older, and what the older held and nobody asked for since is forgotten.
 */
export class StringSharing {
  readonly #generationSize: number;
  #current = new Map<string, string>();
  #previous = new Map<string, string>();

  constructor(capacity: number) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  share(text: string): string {
    const known = this.#current.get(text);
    if (known !== undefined) return known;
    const kept = this.#previous.get(text) ?? text;
    if (this.#current.size >= this.#generationSize) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(kept, kept);
    return kept;
  }

  /** Whether the content is remembered, so that its next share hands out the remembered instance. */
  remembers(text: string): boolean {
    return this.#current.has(text) || this.#previous.has(text);
  }

  /** How many contents are remembered (at most the capacity). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }
}

const sharedPem = new StringSharing(SHARED_PEM_CAPACITY);

/** Strings up to this length are shared wherever they are in an object: names, reasons, timestamps. */
export const SHORT_STRING_LENGTH = 128;
/** How many distinct short strings are remembered for sharing. */
export const SHARED_SHORT_CAPACITY = 8192;

const sharedShort = new StringSharing(SHARED_SHORT_CAPACITY);

/**
 * Replaces every string of at most SHORT_STRING_LENGTH in `value` (objects and arrays, walked in place) by the
 * shared string with its content. Keys need nothing: V8 shares property names already.
 */
function shareShortStrings(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') {
        if (item.length <= SHORT_STRING_LENGTH) value[i] = sharedShort.share(item);
      } else shareShortStrings(item);
    }
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'string') {
      if (item.length <= SHORT_STRING_LENGTH) record[key] = sharedShort.share(item);
    } else shareShortStrings(item);
  }
}

/** Without managedFields, its short strings shared: the default for every cached kind. */
export const leanObject: TransformFunc = (obj) => {
  const lean = withoutManagedFields(obj);
  shareShortStrings(lean);
  return lean;
};

/**
 * Without managedFields. The metadata is rebuilt rather than the field deleted: deleting a property turns a
 * V8 object into a dictionary, about twice its size (see secrets/metadata-stub.ts). Objects already cached
 * (frozen) are passed through: transforms must be idempotent.
 */
export const withoutManagedFields: TransformFunc = (obj) => {
  const metadata = obj?.metadata;
  if (!metadata || metadata.managedFields === undefined || Object.isFrozen(obj)) return obj;
  const { managedFields: _managedFields, ...rest } = metadata;
  obj.metadata = rest;
  return obj;
};

/** Replaces `holder[key]`, a string, by the shared string with its content, in place. */
function shareField(holder: Record<string, unknown> | undefined, key: string): void {
  const value = holder?.[key];
  if (typeof value === 'string' && value) holder![key] = sharedPem.share(value);
}

/**
 * A Secret of the full cache: as leanObject, but that the secretTemplate keys cert-manager's managedFields
 * record on a Secret it wrote are kept, as certkit's annotation (secret-template-keys.ts); a certificate Secret (a key and a certificate that parse, a CA
 * bundle or none, nothing else) with the facts of its certificate and key in place of `tls.crt` and `tls.key`
 * (secret-facts.ts, docs/adr/1140); any other with its certificate and CA bundle shared.
 */
export const leanSecret: TransformFunc = (obj) => {
  if (!Object.isFrozen(obj)) adoptCertManagerTemplateKeys(obj as Secret);
  const secret = leanObject(obj) as KubeObject & { data?: Record<string, string> };
  if (Object.isFrozen(secret) || !secret.data || Object.isFrozen(secret.data)) return secret;
  if (cacheAsFacts(secret as Secret)) return secret;
  shareField(secret.data, SecretKeys.tlsCert);
  shareField(secret.data, SecretKeys.ca);
  return secret;
};

/** Replaces a certificate Secret's `tls.crt` and `tls.key` by their facts, in place; whether it did. */
function cacheAsFacts(secret: Secret): boolean {
  const data = secret.data;
  if (!isPlainCertificateData(data)) return false;
  const { key, certificate } = secretFactsForCache(secret);
  // A key or certificate that does not parse is kept as it is: its error is reported from the bytes.
  if ('error' in key || 'error' in certificate) return false;
  const facts: Record<string, string> = {
    [SecretKeys.tlsCert]: certificateFactsText(certificate.value),
    [SecretKeys.tlsKey]: keyFactsText(key.value),
  };
  const ca = data![SecretKeys.ca];
  if (ca) facts[SecretKeys.ca] = sharedPem.share(ca);
  secret.data = facts;
  return true;
}

/**
 * A CertificateRequest: as leanObject; an issued one without its CSR, certificate and CA bundle, which the
 * cache holds as facts and digests (request-facts.ts, docs/adr/1114); one still in flight with its issued
 * certificate and CA bundle shared (the signers read its bytes).
 */
export const leanCertificateRequest: TransformFunc = (obj) => {
  const cr = leanObject(obj) as CertificateRequest;
  const status = cr.status as Record<string, unknown> | undefined;
  if (Object.isFrozen(cr) || !status || Object.isFrozen(status)) return cr;
  // The bytes as they came, kept a moment for the issuing controller (stripped-bytes.ts).
  const received = isStrippedRequest(cr) ? undefined : { metadata: cr.metadata, spec: cr.spec, status };
  if (isStrippedRequest(stripIssuedRequest(cr, shareShortStrings, csrFacts))) {
    if (received) strippedBytes.remember(received as CertificateRequest);
    return cr;
  }
  shareField(status, 'certificate');
  shareField(status, 'ca');
  return cr;
};
