import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { LruMap } from '../lru.ts';

/**
 * The Secrets read live lately because the cache holds them as facts (docs/adr/1140), by namespace/name, each
 * good for as long as the cache shows the same resourceVersion. A CA Issuer's key pair, or a Certificate's
 * Secret the issuing controller writes, is read several times in a burst; this keeps that to one GET per
 * version. Bounded, and emptied once unused for IDLE_RELEASE_MS, so that no Secret's bytes stay in memory
 * between bursts (as the parse caches, docs/adr/1112).
 */

/** How many Secrets are remembered: the issuers' key pairs and the Secrets a burst writes. */
export const RECENT_LIVE_READS = 64;
/** How long the reads may go unused before all are forgotten (ms). */
export const IDLE_RELEASE_MS = 5_000;

export class RecentLiveReads {
  readonly #secrets = new LruMap<string, Secret>(RECENT_LIVE_READS);
  #lastUse = 0;
  #timer: NodeJS.Timeout | undefined;

  /** The Secret read at `resourceVersion`, if it is remembered. */
  get(key: string, resourceVersion: string | undefined): Secret | undefined {
    const secret = this.#secrets.get(key);
    if (!secret || resourceVersion === undefined) return undefined;
    this.#used();
    return secret.metadata?.resourceVersion === resourceVersion ? secret : undefined;
  }

  /** Remembers a Secret just read; frozen (shallowly), as the cache's objects are, since it is handed out again. */
  set(key: string, secret: Secret): Secret {
    Object.freeze(secret.data);
    Object.freeze(secret.metadata);
    Object.freeze(secret);
    this.#secrets.set(key, secret);
    this.#used();
    return secret;
  }

  get size(): number {
    return this.#secrets.size;
  }

  /** Forgets everything if unused for IDLE_RELEASE_MS; stops its timer once empty. */
  releaseIfIdle(now = Date.now()): void {
    if (now - this.#lastUse >= IDLE_RELEASE_MS) this.#secrets.clear();
    if (this.#secrets.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #used(): void {
    this.#lastUse = Date.now();
    // Unreferenced: it keeps no process alive. Checking twice per period lets go within 1.5 periods.
    this.#timer ??= setInterval(() => this.releaseIfIdle(), IDLE_RELEASE_MS / 2).unref();
  }
}
