/**
 * Time as the work queues see it. Production code uses the real clock; tests drive a FakeClock so delays
 * and token refills are exact and instant.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences are meaningful. */
  now(): number;
  /** Calls `fn` after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer set by `setTimeout`. */
  clearTimeout(handle: TimerHandle): void;
}

/** A timer, as the clock that set it identifies it. */
export type TimerHandle = unknown;

/** The clock of the process: performance.now and the global timers. */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** A clock that only moves when told to; `step` fires due timers in time order. */
export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /** Calls `fn` once the fake time has been advanced by `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.time + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  /** Cancels a fake timer. */
  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /** Advances time by `ms`, firing every timer that falls due on the way (including ones they schedule). */
  step(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.timers) if (t.at <= end && (!next || t.at < next.at)) next = t;
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = Math.max(this.time, next.at);
      next.fn();
    }
    this.time = end;
  }
}
