/**
 * When the SQLite store holds a group commit back for more writes (ADR 1210).
 *
 * A commit has a fixed cost (an fsync, the writer thread's two wake-ups: ~0.3 ms of the process's CPU)
 * shared by the writes of its group. Writes arriving together already share one: those made while a group
 * commits form the next. But when the writer is free, a group goes as soon as the turn that opened it ends,
 * often with a write or two, and the writes that follow a moment later (the clients' answers to the
 * acknowledgements just sent) pay for a commit of their own.
 *
 * So a group waits, up to `ms` and once, until it has as many writes as the group committed before it
 * (at most `maxWrites`): the size of the last group is how many clients are writing together now. A group
 * of one write holds nothing back, so a write made alone (a sequential client, an idle server) is never
 * held, and a burst's groups are held only as long as the burst lasts.
 */
export class GroupHold {
  readonly #maxWrites: number;
  readonly #ms: number;
  readonly #release: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** The size of the group committed last. */
  #last = 0;
  /** Groups held back so far (for the store's metrics). */
  held = 0;

  /** `release` is called when a hold's time is up; `ms` 0 turns holding off. */
  constructor(maxWrites: number, ms: number, release: () => void) {
    this.#maxWrites = maxWrites;
    this.#ms = ms;
    this.#release = release;
  }

  /** Records the size of a group that committed: how many writes the next one waits for. */
  committed(size: number): void {
    this.#last = size;
  }

  /**
   * Whether the group, ready to go to a free writer, stays back. The first time it starts the wait; a group
   * that filled up ends it.
   */
  holds(group: { writes: readonly unknown[]; held: boolean }): boolean {
    const size = group.writes.length;
    const target = Math.min(this.#maxWrites, this.#last);
    if (this.#timer !== undefined) {
      if (size < target) return true;
      this.cancel();
      return false;
    }
    if (group.held || this.#ms <= 0 || size === 0 || size >= target) return false;
    group.held = true;
    this.held++;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#release();
    }, this.#ms);
    return true;
  }

  /** Ends a wait at once (the store closes). */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
