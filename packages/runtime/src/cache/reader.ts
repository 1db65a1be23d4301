import type { FieldSelector, KubeObject, LabelSelector } from '@certkit/apimachinery';
import { deepCopy, deepFreeze } from '../informers/objects.ts';
import { type Indexer, keyFor, NAMESPACE_INDEX } from '../informers/store.ts';
import { cacheNotFound } from './errors.ts';

/**
 * Reads from one informer's store, as controller-runtime's CacheReader: copies unless told otherwise,
 * field selectors answered from `field:<name>` indices only, labels filtered in memory.
 */

/** The sentinel continue token of every cache list, so that naive paginators fail fast instead of looping. */
export const CONTINUE_NOT_SUPPORTED = 'continue-not-supported';

/** The value space of IndexField indices for lookups across all namespaces. */
export const ALL_NAMESPACES_INDEX_PREFIX = '__all_namespaces';

/**
 * The name of the index that `Cache.indexField` creates for a field (controller-runtime's `field:<name>`).
 */
export function fieldIndexName(field: string): string {
  return `field:${field}`;
}

/** KeyToNamespacedKey: `<ns>/<value>`, or `__all_namespaces/<value>` without a namespace. */
export function namespacedIndexValue(namespace: string | undefined, value: string): string {
  return `${namespace || ALL_NAMESPACES_INDEX_PREFIX}/${value}`;
}

export interface KindInfo {
  group: string;
  kind: string;
  namespaced: boolean;
}

export interface ReadOptions {
  /** Return the cached object itself (deep-frozen: changing it throws) instead of a copy. */
  unsafeDisableDeepCopy?: boolean;
}

export interface ReaderListOptions extends ReadOptions {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
}

/** A copy the caller owns, or (unsafe) the shared object, frozen so that it cannot be corrupted. */
function output<T extends KubeObject>(obj: T, unsafe: boolean): T {
  return unsafe ? deepFreeze(obj) : deepCopy(obj);
}

export function readOne<T extends KubeObject>(
  store: Indexer<T>,
  kind: KindInfo,
  namespace: string | undefined,
  name: string,
  unsafe: boolean,
): T {
  // The namespace of a cluster-scoped object's key is ignored, as upstream clears it.
  const obj = store.get(keyFor(kind.namespaced ? namespace : undefined, name));
  if (obj === undefined) throw cacheNotFound(kind.group, kind.kind, name);
  return output(obj, unsafe);
}

export function readMany<T extends KubeObject>(
  store: Indexer<T>,
  options: ReaderListOptions,
  unsafe: boolean,
): T[] {
  let candidates: Iterable<T>;
  if (options.fieldSelector && !options.fieldSelector.empty) {
    candidates = byFieldIndexes(store, options.fieldSelector, options.namespace);
  } else if (options.namespace) {
    candidates = store.byIndex(NAMESPACE_INDEX, options.namespace);
  } else {
    candidates = store.values();
  }
  const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
  const out: T[] = [];
  for (const obj of candidates) {
    if (out.length >= limit) break;
    if (options.labelSelector && !options.labelSelector.matches(obj.metadata?.labels)) continue;
    out.push(output(obj, unsafe));
  }
  return out;
}

/**
 * byIndexes: the first requirement picks candidates from its index, the others filter them by re-running
 * their index functions. Only exact matches can be answered from an index.
 */
function byFieldIndexes<T extends KubeObject>(
  store: Indexer<T>,
  selector: FieldSelector,
  namespace?: string,
): T[] {
  if (!selector.requirements.every((r) => r.operator === '=')) {
    throw new Error('non-exact field matches are not supported by the cache');
  }
  let objects: T[] = [];
  selector.requirements.forEach((requirement, i) => {
    const indexName = fieldIndexName(requirement.field);
    const value = namespacedIndexValue(namespace, requirement.value);
    if (i === 0) {
      objects = store.byIndex(indexName, value);
      return;
    }
    if (!store.hasIndex(indexName)) throw new Error(`index with name ${indexName} does not exist`);
    objects = objects.filter((obj) => store.indexValuesOf(indexName, obj).includes(value));
  });
  return objects;
}
