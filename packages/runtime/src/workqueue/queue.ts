import { realClock, type Clock } from './clock.ts';

/**
 * client-go's work queue (`util/workqueue/queue.go`) for a single-threaded event loop.
 *
 * Three sets, as upstream: `queue` (waiting, in order), `dirty` (needs processing) and `processing` (handed
 * out by `get`, not yet `done`). An item is identified by its key, so objects that stand for the same thing
 * collapse into one entry. The guarantees that follow:
 * - an item added while it waits is not queued twice;
 * - an item added while it is processed is only marked dirty and re-queued by `done`, so no two workers
 *   ever hold the same item, and any number of adds during processing collapse into one rerun.
 */

/** How items are identified: two items with the same key are the same item. */
export type KeyFunc<T> = (item: T) => string;

/** Strings are their own key; other items are compared by their JSON, unless a key function is given. */
export function defaultKey(item: unknown): string {
  return typeof item === 'string' ? item : JSON.stringify(item);
}

/**
 * Hooks a queue reports through (see manager/metrics.ts for the Prometheus ones). Durations in seconds, as
 * client-go's workqueue metrics are.
 */
export interface QueueMetrics {
  /** The number of items waiting (not processing); called whenever it changes. */
  depth?(depth: number): void;
  /** An item was accepted by `add`. */
  add?(): void;
  /** How long an item waited between `add` and `get`. */
  queueLatency?(seconds: number): void;
  /** How long an item was processed, between `get` and `done`. */
  workDuration?(seconds: number): void;
  /** An item was re-added through `addAfter` / `addRateLimited`. */
  retry?(): void;
}

/** Options of a work queue: how items are keyed, and the clock (tests use a fake one). */
export interface QueueOptions<T> {
  key?: KeyFunc<T>;
  metrics?: QueueMetrics;
  clock?: Clock;
}

/**
 * client-go's work queue: items in order, each queued once, never handed to two workers at once; `get`, then
 * `done`.
 */
export class WorkQueue<T = string> {
  protected readonly keyOf: KeyFunc<T>;
  protected readonly metrics: QueueMetrics;
  protected readonly clock: Clock;
  /** Keys in order; a key here is always in `dirty` too. Consumed from `head` to avoid O(n) shifts. */
  private queue: string[] = [];
  private head = 0;
  /** Items that need processing, by key; the first instance added is kept, as upstream keeps it. */
  private readonly dirty = new Map<string, T>();
  private readonly processing = new Set<string>();
  /** When each waiting key was added, and when each processing key was handed out (for metrics). */
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  /** Pending `get` calls, served in order. */
  private waiters: ((item: T | undefined) => void)[] = [];
  private shuttingDownFlag = false;
  private drainWaiters: (() => void)[] = [];

  constructor(options: QueueOptions<T> = {}) {
    this.keyOf = options.key ?? (defaultKey as KeyFunc<T>);
    this.metrics = options.metrics ?? {};
    this.clock = options.clock ?? realClock;
  }

  /** Marks the item as needing processing. Ignored after shutdown. */
  add(item: T): void {
    if (this.shuttingDownFlag) return;
    const key = this.keyOf(item);
    if (this.dirty.has(key)) return;
    this.metrics.add?.();
    this.dirty.set(key, item);
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
    // Re-queued by done(): processing it now would run it twice at once.
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /**
   * The next item to process, which the caller must hand back with `done`. Waits while the queue is empty;
   * resolves `undefined` once the queue is shut down and empty (items queued before shutdown still drain).
   */
  get(): Promise<T | undefined> {
    if (this.waitingLen > 0) return Promise.resolve(this.pop());
    if (this.shuttingDownFlag) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends processing of the item; if it was added meanwhile, it is queued again. */
  done(item: T): void {
    const key = this.keyOf(item);
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.metrics.workDuration?.((this.clock.now() - started) / 1000);
    // As upstream, a dirty item is re-queued even during shutdown, so a drain finishes its work.
    if (this.dirty.has(key)) this.push(key);
    // push() may have handed the item straight to a waiting worker, which keeps the drain going.
    if (this.processing.size === 0) this.settleDrain();
  }

  /** Items waiting to be processed (not counting those being processed). */
  get len(): number {
    return this.waitingLen;
  }

  get shuttingDown(): boolean {
    return this.shuttingDownFlag;
  }

  /** Stops accepting items; pending and future `get`s resolve `undefined` once the queue is empty. */
  shutDown(): void {
    if (this.shuttingDownFlag) return;
    this.shuttingDownFlag = true;
    if (this.waitingLen === 0) this.releaseWaiters();
  }

  /** As `shutDown`, and resolves once every item handed out by `get` has been `done`. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private get waitingLen(): number {
    return this.queue.length - this.head;
  }

  private push(key: string): void {
    this.queue.push(key);
    this.metrics.depth?.(this.waitingLen);
    // A waiting worker takes it at once, so `get` order is the order items became ready.
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.pop());
  }

  private pop(): T {
    const key = this.queue[this.head++];
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.metrics.depth?.(this.waitingLen);
    const item = this.dirty.get(key) as T;
    this.dirty.delete(key);
    this.processing.add(key);
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics.queueLatency?.((now - added) / 1000);
    this.startedAt.set(key, now);
    if (this.shuttingDownFlag && this.waitingLen === 0) this.releaseWaiters();
    return item;
  }

  private releaseWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
  }

  private settleDrain(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
