/**
 * A superset of the names that have a row in the log, kept as 30-bit hashes: a name whose hash is not in it
 * has no row, so its latest row need not be read from SQLite. That read is what a create of a new name
 * costs most: the writer thread commits on its own connection, and SQLite empties a connection's page cache
 * whenever it starts a read after another connection changed the file, so the first read after each commit
 * (most of them, under a steady stream of writes) reads the index's pages again: ~20 µs, against ~0.1 µs
 * for the hash (ADR 1170). A name of the same hash as one written answers "maybe", and is read as before.
 *
 * Every row goes through the store's append on this thread and the file has one writer (a second one is
 * refused), so adding each appended name keeps the set a superset. Rows compacted away or rolled back leave
 * their names in it, which only makes it larger: `rebuild` starts it again from the file once it has doubled.
 */
export class WrittenNames {
  #hashes = new Set<number>();
  /** Its size when last built from the file: a rebuild is due once it has grown well past it. */
  #builtSize = 0;

  add(name: string): void {
    this.#hashes.add(nameHash(name));
  }

  /** False when the name has certainly never been written (since the set was built from the file). */
  mayHave(name: string): boolean {
    return this.#hashes.has(nameHash(name));
  }

  get size(): number {
    return this.#hashes.size;
  }

  /** Whether names no longer in the file (compacted, rolled back) may have come to fill half of it. */
  get rebuildDue(): boolean {
    return this.#hashes.size > 2 * this.#builtSize + REBUILD_MARGIN;
  }

  /** Starts again from these names: the file's, plus those of groups written but not committed yet. */
  rebuild(names: Iterable<string>): void {
    const hashes = new Set<number>();
    for (const name of names) hashes.add(nameHash(name));
    this.#hashes = hashes;
    this.#builtSize = hashes.size;
  }
}

/** Growth below this many names never asks for a rebuild: a small store's set is small anyway. */
const REBUILD_MARGIN = 4096;

/**
 * FNV-1a over the name's UTF-16 code units, cut to 30 bits so that V8 keeps every value a small integer
 * (no heap number per entry). Collisions only cost a read.
 */
export function nameHash(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash & 0x3fffffff;
}
