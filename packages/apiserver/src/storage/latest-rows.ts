/** A key's newest row in the log: what a read of the key, or a write guarded by its revision, looks up. */
export interface LatestRow {
  id: number;
  create_revision: number;
  deleted: number;
  value: string;
}

/**
 * The newest rows of the keys written (or read from the table) last, the oldest first out, bounded by the
 * length of their values. An update reads its key twice (the object, then the row it replaces) and the key
 * was usually just written: each such read costs an indexed SELECT and a copy of the value out of SQLite,
 * where this costs a lookup. The values are the strings handed to or out of the store (shared with its
 * watchers), so holding them mostly costs nothing more. Lookups leave the order alone: a key in use is
 * written again soon, which renews it, and a cheap lookup is the point.
 */
export class LatestRows {
  readonly #rows = new Map<string, LatestRow>();
  readonly #maxChars: number;
  #chars = 0;
  /**
   * Every row set, oldest first, from #head on. A row replaced or deleted since stays in the queue and is
   * skipped when its turn comes: eviction takes the oldest row in constant time, where walking the map from
   * its start would step over every entry deleted since the map last compacted itself.
   */
  #queue: { key: string; row: LatestRow }[] = [];
  #head = 0;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  get(key: string): LatestRow | undefined {
    return this.#rows.get(key);
  }

  set(key: string, row: LatestRow): void {
    this.delete(key);
    if (row.value.length > this.#maxChars) return;
    this.#rows.set(key, row);
    this.#chars += row.value.length;
    this.#queue.push({ key, row });
    while (this.#chars > this.#maxChars) this.#evictOldest();
    // Keys written over and over under the bound leave stale entries that eviction never reaches.
    if (this.#queue.length - this.#head > 2 * this.#rows.size + 1024) this.#compact();
  }

  delete(key: string): void {
    const row = this.#rows.get(key);
    if (row === undefined) return;
    this.#rows.delete(key);
    this.#chars -= row.value.length;
  }

  clear(): void {
    this.#rows.clear();
    this.#chars = 0;
    this.#queue = [];
    this.#head = 0;
  }

  #evictOldest(): void {
    while (this.#head < this.#queue.length) {
      const { key, row } = this.#queue[this.#head++];
      if (this.#rows.get(key) !== row) continue;
      this.#rows.delete(key);
      this.#chars -= row.value.length;
      break;
    }
    // Drop the consumed part of the queue once it dominates, keeping eviction constant-time amortised.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Keeps the queue's live entries alone, in order. */
  #compact(): void {
    this.#queue = this.#queue.slice(this.#head).filter(({ key, row }) => this.#rows.get(key) === row);
    this.#head = 0;
  }
}
