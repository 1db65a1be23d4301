import type { KubeObject } from '@certkit/apimachinery';

/**
 * Runs on every object before it enters an informer's store (initial list, watch events, relists). It may
 * change the object in place or return another one, and must be idempotent: the same object can be
 * transformed again (client-go gives the same guarantee and asks the same of transforms).
 */
export type TransformFunc = (obj: KubeObject) => KubeObject;

/**
 * Drops `metadata.managedFields`, which is often the largest part of an object's metadata and which a
 * controller rarely reads (controller-runtime's TransformStripManagedFields). Passes anything that is not
 * an object with metadata through unchanged.
 */
export const stripManagedFields: TransformFunc = (obj) => {
  const metadata = obj?.metadata;
  if (metadata && typeof metadata === 'object' && metadata.managedFields !== undefined) {
    delete metadata.managedFields;
  }
  return obj;
};

/** Applies the given transforms in order; undefined entries are skipped. */
export function composeTransforms(...transforms: (TransformFunc | undefined)[]): TransformFunc | undefined {
  const present = transforms.filter((t): t is TransformFunc => t !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return (obj) => present.reduce((o, t) => t(o), obj);
}

/**
 * Freezes an object and everything reachable from it, so that code holding a shared reference to a cached
 * object fails loudly (TypeError in strict mode) instead of silently corrupting the cache. Idempotent, and
 * stops at already-frozen subtrees.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** A deep copy a caller may mutate freely. Plain JSON in, plain JSON out. */
export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}
