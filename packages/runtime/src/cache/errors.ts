import { newNotFound, newTimeout, type StatusError } from '@certkit/apimachinery';

/** controller-runtime's cache errors, with the same messages (pkg/cache). */

/** A read before start(): the informer is registered and starts with the cache. */
export class ErrCacheNotStarted extends Error {
  constructor() {
    super('the cache is not started, can not read objects');
    this.name = 'ErrCacheNotStarted';
  }
}

/**
 * With readerFailOnMissingInformer, a read of a kind (and read mode) that has no informer yet. Distinct
 * from NotFound: nothing was looked up.
 */
export class ErrResourceNotCached extends Error {
  readonly group: string;
  readonly version: string;
  readonly kind: string;

  constructor(group: string, version: string, kind: string) {
    // schema.GroupVersionKind.String(): `<group>/<version>, Kind=<kind>`, so core kinds start with '/'.
    super(`${group}/${version}, Kind=${kind} is not cached`);
    this.name = 'ErrResourceNotCached';
    this.group = group;
    this.version = version;
    this.kind = kind;
  }
}

/**
 * Whether a read failed because the cache was read before it started (controller-runtime's
 * ErrCacheNotStarted).
 */
export const isCacheNotStarted = (err: unknown): err is ErrCacheNotStarted =>
  err instanceof ErrCacheNotStarted;
/**
 * Whether a read asked for a kind or namespace this cache does not hold (controller-runtime's
 * ErrResourceNotCached).
 */
export const isResourceNotCached = (err: unknown): err is ErrResourceNotCached =>
  err instanceof ErrResourceNotCached;

/**
 * NotFound worded with the Kind, not the resource: `Secret "x" not found`, `Deployment.apps "x" not found`.
 */
export function cacheNotFound(group: string, kind: string, name: string): StatusError {
  return newNotFound({ group, resource: kind }, name);
}

/** 504 Timeout, as apierrors.NewTimeoutError("failed waiting for *v1.Pod Informer to sync", 0). */
export function syncTimeout(typeName: string): StatusError {
  return newTimeout(`failed waiting for ${typeName} Informer to sync`, 0);
}
