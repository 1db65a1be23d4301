import { realClock, type Clock, type TimerHandle } from '../workqueue/clock.ts';

/**
 * Notices when a burst of reconciles has ended, so that the process can give back what the burst left
 * behind (docs/adr/1141-memory-given-back-after-a-burst.md): V8 keeps the heap pages and the young
 * generation a burst grew until its memory reducer gets to them, tens of seconds later or not at all.
 *
 * A burst is at least `minReconciles` reconciles, across all controllers, since the last time it fired; it
 * has ended once no reconcile has run for `quietMs`. The watch fires once per burst: an idle controller
 * (no reconciles) never arms a timer, and a lone reconcile (a resync, one renewal) is not a burst.
 */
export interface BurstEndOptions {
  /** Called once after each burst, when no reconcile has run for `quietMs`. */
  onBurstEnd: () => void;
  /** Default 3 s. */
  quietMs?: number;
  /** Default 50: about five Certificates issued. */
  minReconciles?: number;
  /** Default: the process's clock. */
  clock?: Clock;
}

/** Reconciles as a controller reports them to whoever watches its activity. */
export interface ReconcileActivity {
  /** A reconcile started. */
  begin(): void;
  /** A reconcile ended (whatever its outcome). */
  end(): void;
  /** A request was queued (the controller has work); not for a request already waiting. */
  queued?(): void;
}

export class BurstEndWatch implements ReconcileActivity {
  private readonly onBurstEnd: () => void;
  private readonly quietMs: number;
  private readonly minReconciles: number;
  private readonly clock: Clock;
  private inFlight = 0;
  private sinceLastFired = 0;
  private lastEnd = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(options: BurstEndOptions) {
    this.onBurstEnd = options.onBurstEnd;
    this.quietMs = options.quietMs ?? 3_000;
    this.minReconciles = options.minReconciles ?? 50;
    this.clock = options.clock ?? realClock;
  }

  begin(): void {
    this.inFlight++;
    this.sinceLastFired++;
  }

  end(): void {
    this.inFlight--;
    this.lastEnd = this.clock.now();
    // One timer per burst, not one per reconcile: it re-arms itself for the rest of the quiet period if
    // reconciles ran meanwhile.
    if (this.inFlight === 0 && this.sinceLastFired >= this.minReconciles && this.timer === undefined)
      this.arm(this.quietMs);
  }

  /** Cancels a pending check; nothing fires after this. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    const timer = this.clock.setTimeout(() => this.check(), ms);
    // Never what keeps the process alive.
    (timer as { unref?: () => void } | undefined)?.unref?.();
    this.timer = timer;
  }

  private check(): void {
    this.timer = undefined;
    // Still busy: the last end() arms it again.
    if (this.inFlight > 0) return;
    const quiet = this.clock.now() - this.lastEnd;
    if (quiet < this.quietMs) return this.arm(this.quietMs - quiet);
    this.sinceLastFired = 0;
    this.onBurstEnd();
  }
}
