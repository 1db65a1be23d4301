import type { TimerHandle } from './clock.ts';
import { WorkQueue, type QueueOptions } from './queue.ts';

/**
 * client-go's delaying queue (`delaying_queue.go`): items wait in a min-heap ordered by ready time and
 * move to the work queue when due. One timer serves the whole heap (armed for its head), so a controller
 * with ten thousand requeued objects holds one timer, not ten thousand.
 */

interface Waiting<T> {
  key: string;
  item: T;
  readyAt: number;
  /** Insertion order, so items due at the same time leave in the order they were added. */
  seq: number;
  index: number;
}

/**
 * Upstream re-checks at least this often whatever the heap says, which bounds the cost of a missed wake-up.
 */
const MAX_WAIT_MS = 10_000;

/** client-go's delaying queue: a work queue whose items can be added after a delay (`addAfter`). */
export class DelayingQueue<T = string> extends WorkQueue<T> {
  private readonly heap: Waiting<T>[] = [];
  private readonly waitingByKey = new Map<string, Waiting<T>>();
  private seq = 0;
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;

  constructor(options: QueueOptions<T> = {}) {
    super(options);
  }

  /**
   * Adds the item after `ms` milliseconds (at once if `ms <= 0`). If it is already waiting, the earlier of
   * the two ready times wins: a re-add can bring an item forward, never push it back.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown) return;
    this.metrics.retry?.();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const key = this.keyOf(item);
    const readyAt = this.clock.now() + ms;
    const existing = this.waitingByKey.get(key);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.siftUp(existing.index);
      }
    } else {
      const entry: Waiting<T> = { key, item, readyAt, seq: this.seq++, index: this.heap.length };
      this.heap.push(entry);
      this.waitingByKey.set(key, entry);
      this.siftUp(entry.index);
    }
    this.arm();
  }

  /**
   * Drops the item if it is waiting for its delay (client-go has no such call): for a recheck that has become
   * pointless, so that it neither runs nor keeps the controller looking busy. Whether it was waiting; an item
   * already queued or being processed is left alone.
   */
  cancelAfter(item: T): boolean {
    const entry = this.waitingByKey.get(this.keyOf(item));
    if (!entry) return false;
    this.waitingByKey.delete(entry.key);
    const i = entry.index;
    const last = this.heap.pop()!;
    if (last !== entry) {
      this.heap[i] = last;
      last.index = i;
      this.siftDown(i);
      this.siftUp(last.index);
    }
    this.arm();
    return true;
  }

  /** Items waiting for their delay to pass. */
  get delayedLen(): number {
    return this.heap.length;
  }

  override shutDown(): void {
    this.disarm();
    this.heap.length = 0;
    this.waitingByKey.clear();
    super.shutDown();
  }

  private arm(): void {
    const head = this.heap[0];
    if (!head) return this.disarm();
    const at = Math.min(head.readyAt, this.clock.now() + MAX_WAIT_MS);
    if (this.timer !== undefined && this.timerAt <= at) return;
    this.disarm();
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0].readyAt <= now) {
      const entry = this.popHead();
      this.waitingByKey.delete(entry.key);
      this.add(entry.item);
    }
    this.arm();
  }

  private less(a: Waiting<T>, b: Waiting<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private popHead(): Waiting<T> {
    const top = this.heap[0];
    const last = this.heap.pop()!;
    if (last !== top) {
      this.heap[0] = last;
      last.index = 0;
      this.siftDown(0);
    }
    return top;
  }

  private siftUp(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i], h[parent])) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < h.length && this.less(h[l], h[min])) min = l;
      if (r < h.length && this.less(h[r], h[min])) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    [h[i], h[j]] = [h[j], h[i]];
    h[i].index = i;
    h[j].index = j;
  }
}
