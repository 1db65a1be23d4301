import type { StorageEvent, WatchListener } from './types.ts';

/**
 * Hands a storage watch's events to its listener: in order, asynchronously, one call at a time, with the events
 * a listener's own writes cause picked up by the same loop. A failure is reported after the events queued before
 * it; a listener that throws ends the watch with that error. Shared by the SQLite and etcd backends.
 */
export class EventDelivery {
  readonly #listener: WatchListener;
  readonly #onFinish: () => void;
  /** Events, and progress marks (revision numbers) that follow the events before them. */
  #queue: (StorageEvent | number)[] = [];
  #head = 0;
  #done = false;
  #finished = false;
  #pendingError: Error | undefined;
  #flushing = false;

  /** onFinish runs once, when the watch is closed or fails: the backend stops feeding it. */
  constructor(listener: WatchListener, onFinish: () => void) {
    this.#listener = listener;
    this.#onFinish = onFinish;
  }

  /** False once closed or failed: nothing more is accepted. */
  get active(): boolean {
    return !this.#done && this.#pendingError === undefined;
  }

  push(event: StorageEvent): void {
    this.#queue.push(event);
    this.#schedule();
  }

  /** Queues a progress mark; consecutive marks collapse into the latest, so a busy store costs one per batch. */
  pushProgress(revision: number): void {
    if (this.#listener.progress === undefined) return;
    if (this.#queue.length > this.#head && typeof this.#queue[this.#queue.length - 1] === 'number') {
      this.#queue[this.#queue.length - 1] = revision;
      return;
    }
    this.#queue.push(revision);
    this.#schedule();
  }

  pushAll(events: StorageEvent[]): void {
    for (const event of events) this.#queue.push(event);
    this.#schedule();
  }

  /** Ends the watch with an error, after the events already queued. */
  fail(err: Error): void {
    if (!this.active) return;
    this.#pendingError = err;
    this.#finish();
    this.#schedule();
  }

  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#queue = [];
    this.#head = 0;
    this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#onFinish();
  }

  #schedule(): void {
    if (!this.#flushing) {
      this.#flushing = true;
      queueMicrotask(() => this.#flush());
    }
  }

  #flush(): void {
    try {
      while (!this.#done && this.#head < this.#queue.length) {
        const item = this.#queue[this.#head++];
        try {
          if (typeof item === 'number') this.#listener.progress?.(item);
          else this.#listener.event(item);
        } catch (err) {
          this.#end(err instanceof Error ? err : new Error(String(err)));
          return;
        }
      }
      this.#queue = [];
      this.#head = 0;
      if (!this.#done && this.#pendingError !== undefined) this.#end(this.#pendingError);
    } finally {
      this.#flushing = false;
    }
  }

  #end(err: Error): void {
    this.close();
    this.#listener.error(err);
  }
}
