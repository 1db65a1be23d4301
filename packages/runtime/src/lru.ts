/**
 * A Map that keeps its most recently used `capacity` entries, as client-go's LRU caches (k8s.io/utils/lru):
 * the Event correlator's caches, and the controllers' caches of results computed from content (PEM and
 * base64 text), where the same content comes back in new objects while an issuance is in flight.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The value, which becomes the most recently used; `has` first when `undefined` is a value. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    // Deleted and set again, so that the Map's insertion order is least recently used first.
    if (value !== undefined || this.#entries.has(key)) {
      this.#entries.delete(key);
      this.#entries.set(key, value as V);
    }
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** The remembered value, or `compute(key)` remembered. */
  getOrCompute(key: K, compute: (key: K) => V): V {
    if (this.#entries.has(key)) return this.get(key) as V;
    const value = compute(key);
    this.set(key, value);
    return value;
  }
}
