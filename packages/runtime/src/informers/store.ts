import type { KubeObject } from '@certkit/apimachinery';

/**
 * The informer's local store: objects by `namespace/name` (or `name` for cluster-scoped objects), with
 * secondary indices (client-go's thread_safe_store + Indexer). JavaScript is single-threaded, so "thread
 * safe" here means no aliasing: the store never hands out its internal maps or sets, copies what index
 * functions return, and replaces objects instead of mutating them.
 */

/** Values an object is indexed under; several values mean "any of these". */
export type IndexFunc = (obj: KubeObject) => readonly string[];

/** Index functions by index name. */
export type Indexers = Record<string, IndexFunc>;

/** The built-in index every informer store has: objects by namespace. */
export const NAMESPACE_INDEX = 'namespace';

/** MetaNamespaceIndexFunc: cluster-scoped objects are indexed under '' so that they can still be found. */
export const namespaceIndexFunc: IndexFunc = (obj) => [obj.metadata?.namespace ?? ''];

/** MetaNamespaceKeyFunc: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** The store key of an object reference; an empty namespace means cluster scope. */
export function keyFor(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a store key back into namespace ('' for cluster scope) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * index value → keys of the objects indexed under it: the key itself while there is one, a Set from the
 * second. Most indices map a value to one object (a Certificate by its Secret, a request by its Certificate),
 * and a Set per value cost about 200 bytes per cached object and index.
 */
type Index = Map<string, string | Set<string>>;

/** The keys an index entry holds, as an iterable (no copy). */
function keysOf(entry: string | Set<string> | undefined): Iterable<string> {
  return entry === undefined ? [] : typeof entry === 'string' ? [entry] : entry;
}

/**
 * client-go's thread-safe store with indexers: objects by `namespace/name` key, and indexes of keys by value.
 */
export class Indexer<T extends KubeObject = KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc>();
  readonly #indices = new Map<string, Index>();
  #resourceVersion = '';

  constructor(indexers: Indexers = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc, ...indexers });
  }

  get size(): number {
    return this.#items.size;
  }

  /** The resourceVersion the last replace() was given (the list it came from). */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Adds or replaces the object under its key; returns the object it replaced, if any. */
  add(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    this.#reindex(key, old, obj);
    return old;
  }

  /** Same as add: an update of an unknown object is an add (client-go does the same). */
  update(obj: T): T | undefined {
    return this.add(obj);
  }

  /** Removes the object with the key of `objOrKey`; returns the removed object, if there was one. */
  delete(objOrKey: T | string): T | undefined {
    const key = typeof objOrKey === 'string' ? objOrKey : objectKey(objOrKey);
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#items.delete(key);
    this.#reindex(key, old, undefined);
    return old;
  }

  /** Replaces the whole contents (a relist): indices are rebuilt from scratch. */
  replace(items: Iterable<T>, resourceVersion: string): void {
    this.#items.clear();
    for (const index of this.#indices.values()) index.clear();
    for (const obj of items) {
      const key = objectKey(obj);
      const old = this.#items.get(key);
      this.#items.set(key, obj);
      this.#reindex(key, old, obj);
    }
    this.#resourceVersion = resourceVersion;
  }

  /** Records the resourceVersion the contents now correspond to (after an incremental relist). */
  setResourceVersion(resourceVersion: string): void {
    this.#resourceVersion = resourceVersion;
  }

  /** The object stored under a key (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** Whether an object is stored under a key. */
  has(key: string): boolean {
    return this.#items.has(key);
  }

  /** A new array of all objects (the objects themselves are shared, not copied). */
  list(): T[] {
    return [...this.#items.values()];
  }

  /** The keys of every stored object. */
  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  /** Iterates without allocating an array; do not add or delete while iterating. */
  values(): IterableIterator<T> {
    return this.#items.values();
  }

  /** Every key and object, without copying the store. */
  entries(): IterableIterator<[string, T]> {
    return this.#items.entries();
  }

  /**
   * Adds indices; allowed at any time (existing objects are indexed right away). A name that is already
   * registered throws `indexer conflict: <name>` and adds none of the given indexers.
   */
  addIndexers(indexers: Indexers): void {
    const names = Object.keys(indexers);
    const conflicts = names.filter((name) => this.#indexers.has(name));
    if (conflicts.length > 0) throw new Error(`indexer conflict: ${conflicts.join(', ')}`);
    for (const name of names) {
      const fn = indexers[name];
      const index: Index = new Map();
      this.#indexers.set(name, fn);
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) {
        for (const value of indexValues(fn, obj)) addToIndex(index, value, key);
      }
    }
  }

  /** The index functions, by index name. */
  getIndexers(): Readonly<Record<string, IndexFunc>> {
    return Object.freeze(Object.fromEntries(this.#indexers));
  }

  /** Whether an index of that name exists. */
  hasIndex(name: string): boolean {
    return this.#indexers.has(name);
  }

  /** Objects indexed under `value`; throws `Index with name <name> does not exist` for unknown indices. */
  byIndex(name: string, value: string): T[] {
    const keys = this.#index(name).get(value);
    if (keys === undefined) return [];
    if (typeof keys === 'string') return [this.#items.get(keys)!];
    const out: T[] = [];
    for (const key of keys) out.push(this.#items.get(key)!);
    return out;
  }

  /** Keys of the objects indexed under `value`. */
  indexKeys(name: string, value: string): string[] {
    return [...keysOf(this.#index(name).get(value))];
  }

  /** All values that `name` currently holds objects under. */
  listIndexFuncValues(name: string): string[] {
    return [...this.#index(name).keys()];
  }

  /** The values `obj` is (or would be) indexed under by index `name`. */
  indexValuesOf(name: string, obj: T): string[] {
    const fn = this.#indexers.get(name);
    if (!fn) throw new Error(`Index with name ${name} does not exist`);
    return indexValues(fn, obj);
  }

  #index(name: string): Index {
    const index = this.#indices.get(name);
    if (!index) throw new Error(`Index with name ${name} does not exist`);
    return index;
  }

  #reindex(key: string, old: T | undefined, obj: T | undefined): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      const oldValues = old ? indexValues(fn, old) : [];
      const newValues = obj ? indexValues(fn, obj) : [];
      // The common case (one value, unchanged, e.g. the namespace) costs no set operations.
      if (oldValues.length === 1 && newValues.length === 1 && oldValues[0] === newValues[0]) continue;
      for (const value of oldValues) removeFromIndex(index, value, key);
      for (const value of newValues) addToIndex(index, value, key);
    }
  }
}

/** A copy of what the index function returned, deduplicated: callers may reuse or mutate their array. */
function indexValues(fn: IndexFunc, obj: KubeObject): string[] {
  const values = fn(obj);
  return values.length <= 1 ? [...values] : [...new Set(values)];
}

function addToIndex(index: Index, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) index.set(value, key);
  else if (typeof keys === 'string') {
    if (keys !== key) index.set(value, new Set([keys, key]));
  } else keys.add(key);
}

function removeFromIndex(index: Index, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) return;
  if (typeof keys === 'string') {
    if (keys === key) index.delete(value);
    return;
  }
  keys.delete(key);
  // Drop empty sets so that an index over a churning value space does not grow without bound; one key left
  // goes back to being held alone.
  if (keys.size === 0) index.delete(value);
  else if (keys.size === 1) index.set(value, keys.values().next().value!);
}
