import type { CertificateRequest } from '../api/types.ts';

/**
 * The bytes the cache transform took out of the requests it stripped last (request-facts.ts), by request
 * uid and resourceVersion, so that the issuing controller, the one reader of an issued request's bytes, finds
 * them here instead of reading the request live: the request has just been issued when the issuing
 * controller looks, so a burst saves one GET per Certificate, on both sides (docs/adr/1150). A resourceVersion
 * names one content of an object, so the request put back together from the cached copy and its bytes is
 * the request as the API server stored it at that version, what a GET answered unless it had changed since.
 *
 * Bounded (two generations of half the capacity) and emptied when unused for a while, as the parse caches
 * (parsed.ts): held only while a burst is in flight, never per managed Certificate. A request whose bytes
 * were forgotten is read live, as before.
 */

/** How many requests' bytes are held, at most: a burst's requests in flight between signing and issuing. */
export const STRIPPED_BYTES_CAPACITY = 512;
/** How long the bytes are held without being asked for (ms). */
export const STRIPPED_BYTES_IDLE_MS = 5_000;

interface Bytes {
  request: string;
  certificate: string;
  ca: string | undefined;
}

function keyOf(cr: CertificateRequest): string | undefined {
  const { uid, resourceVersion } = cr.metadata ?? {};
  return uid && resourceVersion ? `${uid}/${resourceVersion}` : undefined;
}

export class StrippedBytes {
  readonly #generationSize: number;
  readonly #idleMs: number;
  #current = new Map<string, Bytes>();
  #previous = new Map<string, Bytes>();
  #timer: NodeJS.Timeout | undefined;
  #lastUse = 0;

  constructor(capacity = STRIPPED_BYTES_CAPACITY, idleMs = STRIPPED_BYTES_IDLE_MS) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
    this.#idleMs = idleMs;
  }

  /** Remembers the bytes of `cr` (as it came from the API server, before stripping). */
  remember(cr: CertificateRequest): void {
    const key = keyOf(cr);
    const request = cr.spec?.request;
    const certificate = cr.status?.certificate;
    if (!key || !request || !certificate) return;
    if (this.#current.size >= this.#generationSize) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, { request, certificate, ca: cr.status?.ca });
    this.#used();
  }

  /**
   * The stripped copy `cached` with its bytes back, or undefined when they are not held. Each request's
   * bytes are handed out once (they are read once per issuance), and so let go.
   */
  restore(cached: CertificateRequest): CertificateRequest | undefined {
    const key = keyOf(cached);
    if (!key) return undefined;
    const bytes = this.#current.get(key) ?? this.#previous.get(key);
    if (!bytes) return undefined;
    this.#current.delete(key);
    this.#previous.delete(key);
    this.#used();
    const { ca: _ca, ...status } = cached.status ?? {};
    return {
      ...cached,
      spec: { ...cached.spec, request: bytes.request },
      status: { ...status, certificate: bytes.certificate, ...(bytes.ca ? { ca: bytes.ca } : {}) },
    };
  }

  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /** Empties the bytes held when unused for the idle period; whether anything is still held. */
  releaseIfIdle(now = Date.now()): boolean {
    if (this.size > 0 && now - this.#lastUse >= this.#idleMs) {
      this.#current = new Map();
      this.#previous = new Map();
    }
    if (this.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    return this.size > 0;
  }

  #used(): void {
    this.#lastUse = Date.now();
    // Only while something is held; unreferenced, so it keeps no process alive.
    this.#timer ??= setInterval(() => this.releaseIfIdle(), this.#idleMs / 2).unref();
  }
}

/** The controller's: filled by the CertificateRequest cache transform, read by the issuing controller. */
export const strippedBytes = new StrippedBytes();
