/**
 * Our own writes outrun the cache: right after a status write the informer may still hold the version we
 * replaced, and a reconcile that runs then (queued by some other event) would act on it again. For a signer
 * that means signing twice, with a second live GET of the CA Secret. This remembers, per object, the
 * resourceVersion each write replaced, so such a reconcile can stand down: the watch event for the write is
 * on its way and brings the object back with its new state.
 */
export class StaleReads {
  private readonly replaced = new Map<string, string>();

  /** A write of `key` succeeded; the cache showed `previousVersion` before it. */
  wrote(key: string, previousVersion: string | undefined): void {
    if (previousVersion) this.replaced.set(key, previousVersion);
  }

  /** Whether the cache still shows the version our last write replaced. */
  isStale(key: string, version: string | undefined): boolean {
    const replaced = this.replaced.get(key);
    if (replaced === undefined) return false;
    if (replaced === version) return true;
    this.replaced.delete(key);
    return false;
  }

  forget(key: string): void {
    this.replaced.delete(key);
  }
}

/** How soon a reconcile that found the cache behind our write looks again. */
export const STALE_RETRY_MS = 100;
