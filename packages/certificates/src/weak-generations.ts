/**
 * Answers remembered per object, for about the last `capacity` objects asked about: for results computed
 * from an object the caches hand out (a Certificate's validation, a request's comparison with its spec), which
 * the six Certificate controllers ask for again and again while that version of the object is in flight, and
 * hardly ever once it has settled. A plain WeakMap would keep an entry (and its answer) for every cached
 * object for as long as it is cached: ~40 bytes of ephemeron table per managed Certificate and map, plus the
 * answer (docs/adr/1142). Keys are held weakly, so a remembered object can still be collected.
 *
 * Two generations of half the capacity rather than an LRU, as StringSharing (cache-transforms.ts): a hit in
 * the current generation is one lookup; an answer found in the older one moves to the current one; when the
 * current one is full it becomes the older one, and the older one is dropped whole.
 */
export class WeakGenerations<K extends WeakKey, V> {
  readonly #generationSize: number;
  #current = new WeakMap<K, V>();
  #previous = new WeakMap<K, V>();
  /** Keys set in the current generation (a WeakMap has no size). */
  #count = 0;

  constructor(capacity: number) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  /** Whether an answer is remembered for `key`; use it first when `undefined` is an answer. */
  has(key: K): boolean {
    return this.#current.has(key) || this.#previous.has(key);
  }

  /** The remembered answer for `key`, if any. */
  get(key: K): V | undefined {
    if (this.#current.has(key)) return this.#current.get(key);
    if (!this.#previous.has(key)) return undefined;
    const value = this.#previous.get(key) as V;
    this.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    if (!this.#current.has(key)) {
      if (this.#count >= this.#generationSize) {
        this.#previous = this.#current;
        this.#current = new WeakMap();
        this.#count = 0;
      }
      this.#count++;
    }
    this.#current.set(key, value);
  }
}
