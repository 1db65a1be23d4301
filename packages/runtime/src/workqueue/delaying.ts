import type { TimerHandle } from './clock.ts';
import { WorkQueue, type QueueOptions } from './queue.ts';

/**
 * client-go's delaying queue (`delaying_queue.go`): items wait in a min-heap ordered by ready time and
 * move to the work queue when due. One timer serves the whole heap (armed for its head), so a controller
 * with ten thousand requeued objects holds one timer, not ten thousand.
 *
 * The heap is kept as parallel arrays (key, item, ready time, insertion order) rather than an object per
 * waiting item: the trigger and readiness controllers keep every managed Certificate waiting for its renewal,
 * and an entry object with its boxed ready time cost ~80 bytes per item and queue where the arrays take ~20
 * (docs/adr/1142).
 */

/**
 * Upstream re-checks at least this often whatever the heap says, which bounds the cost of a missed wake-up.
 */
const MAX_WAIT_MS = 10_000;

/** client-go's delaying queue: a work queue whose items can be added after a delay (`addAfter`). */
export class DelayingQueue<T = string> extends WorkQueue<T> {
  // Heap slot i: keys[i], items[i], readyAt[i], seq[i] (insertion order, so that items due at the same
  // time leave in the order they were added).
  private readonly keys: string[] = [];
  private readonly items: T[] = [];
  private readonly readyAt: number[] = [];
  private readonly seqs: number[] = [];
  /** Heap slot of every waiting key. */
  private readonly slotByKey = new Map<string, number>();
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
    const slot = this.slotByKey.get(key);
    if (slot !== undefined) {
      if (readyAt < this.readyAt[slot]) {
        this.readyAt[slot] = readyAt;
        this.siftUp(slot);
      }
    } else {
      const i = this.keys.length;
      this.keys.push(key);
      this.items.push(item);
      this.readyAt.push(readyAt);
      this.seqs.push(this.seq++);
      this.slotByKey.set(key, i);
      this.siftUp(i);
    }
    this.arm();
  }

  /**
   * Drops the item if it is waiting for its delay (client-go has no such call): for a recheck that has become
   * pointless, so that it neither runs nor keeps the controller looking busy. Whether it was waiting; an item
   * already queued or being processed is left alone.
   */
  cancelAfter(item: T): boolean {
    const key = this.keyOf(item);
    const i = this.slotByKey.get(key);
    if (i === undefined) return false;
    this.slotByKey.delete(key);
    const last = this.keys.length - 1;
    if (i !== last) {
      this.move(last, i);
      this.dropLastSlot();
      this.siftDown(i);
      this.siftUp(i);
    } else this.dropLastSlot();
    this.arm();
    return true;
  }

  /** Items waiting for their delay to pass. */
  get delayedLen(): number {
    return this.keys.length;
  }

  override shutDown(): void {
    this.disarm();
    this.keys.length = 0;
    this.items.length = 0;
    this.readyAt.length = 0;
    this.seqs.length = 0;
    this.slotByKey.clear();
    super.shutDown();
  }

  private arm(): void {
    if (this.keys.length === 0) return this.disarm();
    const at = Math.min(this.readyAt[0], this.clock.now() + MAX_WAIT_MS);
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
    while (this.keys.length > 0 && this.readyAt[0] <= now) {
      const item = this.items[0];
      this.slotByKey.delete(this.keys[0]);
      const last = this.keys.length - 1;
      if (last > 0) {
        this.move(last, 0);
        this.dropLastSlot();
        this.siftDown(0);
      } else this.dropLastSlot();
      this.add(item);
    }
    this.arm();
  }

  private less(a: number, b: number): boolean {
    const ra = this.readyAt[a];
    const rb = this.readyAt[b];
    return ra < rb || (ra === rb && this.seqs[a] < this.seqs[b]);
  }

  /** Puts slot `from`'s entry in slot `to` (whose entry is overwritten). */
  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from];
    this.items[to] = this.items[from];
    this.readyAt[to] = this.readyAt[from];
    this.seqs[to] = this.seqs[from];
    this.slotByKey.set(this.keys[to], to);
  }

  /** Drops the last slot. */
  private dropLastSlot(): void {
    this.keys.pop();
    this.items.pop();
    this.readyAt.pop();
    this.seqs.pop();
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && this.less(l, min)) min = l;
      if (r < n && this.less(r, min)) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }

  private swap(i: number, j: number): void {
    const { keys, items, readyAt, seqs } = this;
    [keys[i], keys[j]] = [keys[j], keys[i]];
    [items[i], items[j]] = [items[j], items[i]];
    [readyAt[i], readyAt[j]] = [readyAt[j], readyAt[i]];
    [seqs[i], seqs[j]] = [seqs[j], seqs[i]];
    this.slotByKey.set(keys[i], i);
    this.slotByKey.set(keys[j], j);
  }
}
