/**
 * When the SQLite store holds a group commit back for more writes (ADR 1210).
 *
 * A commit has a fixed cost (an fsync, the writer thread's two wake-ups: ~0.3 ms of the process's CPU)
 * shared by the writes of its group. Writes arriving together already share one: those made while a group
 * commits form the next. But when the writer is free, a group goes as soon as the turn that opened it ends,
 * often with one or two writes, and the writes that follow a moment later (the clients' answers to the
 * acknowledgements just sent) pay for a commit of their own.
 *
 * So, while writes arrive together (the group committed last carried more than one write), a group of fewer
 * than `writes` writes waits up to `ms` for more, once; it goes as soon as it holds `writes` writes.
 * A write made alone, after a group of one (a sequential client, an idle server), is never held.
 */
export class GroupHold {
  readonly #writes: number;
  readonly #ms: number;
  readonly #release: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** Whether the group committed last carried more than one write. */
  #together = false;

  /** `release` is called when a hold's time is up; `ms` 0 turns holding off. */
  constructor(writes: number, ms: number, release: () => void) {
    this.#writes = writes;
    this.#ms = ms;
    this.#release = release;
  }

  /** Records the size of a group that committed: what tells writes arriving together from writes alone. */
  committed(size: number): void {
    this.#together = size > 1;
  }

  /**
   * Whether the group, ready to go to a free writer, stays back. The first time it starts the wait; a group
   * that filled up ends it.
   */
  holds(group: { writes: readonly unknown[]; held: boolean }): boolean {
    if (this.#timer !== undefined) {
      if (group.writes.length < this.#writes) return true;
      this.cancel();
      return false;
    }
    if (group.held || !this.#together || this.#ms <= 0 || group.writes.length >= this.#writes) return false;
    group.held = true;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#release();
    }, this.#ms);
    return true;
  }

  /** Ends a wait at once (the store closes, or the group went for another reason). */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
