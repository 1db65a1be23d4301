/**
 * The reflector's backoff (client-go: `wait.Backoff{800ms, ×2, jitter 1.0, cap 30s}` wrapped in
 * `DelayWithReset(2m)`): delays of [d, 2d) with d = 0.8 s, 1.6 s, … capped at 30 s, so at most one retry
 * every 30–60 s against a server that stays down.
 *
 * The reset differs slightly from apimachinery's backoffManager, which resets every 2 minutes counted from
 * the previous reset whatever happened in between; we reset once 2 minutes passed without a step (that is,
 * after 2 minutes of health), which is what that reset is meant to achieve and never resets mid-outage.
 */
export interface BackoffOptions {
  initialMs?: number;
  factor?: number;
  capMs?: number;
  /** Each delay d is stretched to d × (1 + jitter × U[0,1)). */
  jitter?: number;
  resetAfterMs?: number;
  /** The source of jitter; Math.random by default (tests pass a fixed one). */
  random?: () => number;
  /** The clock for `resetAfterMs`; performance.now by default. */
  now?: () => number;
}

/**
 * Delays between a reflector's retries: growing by `factor` up to `capMs`, jittered, reset after
 * `resetAfterMs` without a retry.
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #factor: number;
  readonly #capMs: number;
  readonly #jitter: number;
  readonly #resetAfterMs: number;
  readonly #random: () => number;
  readonly #now: () => number;
  #durationMs: number;
  #lastStep = -Infinity;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 800;
    this.#factor = options.factor ?? 2;
    this.#capMs = options.capMs ?? 30_000;
    this.#jitter = options.jitter ?? 1;
    this.#resetAfterMs = options.resetAfterMs ?? 120_000;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#durationMs = this.#initialMs;
  }

  /** The next delay, in milliseconds. */
  next(): number {
    const now = this.#now();
    if (now - this.#lastStep > this.#resetAfterMs) this.#durationMs = this.#initialMs;
    this.#lastStep = now;
    const base = this.#durationMs;
    this.#durationMs = Math.min(this.#durationMs * this.#factor, this.#capMs);
    return base + this.#jitter * this.#random() * base;
  }

  /** Starts again from the initial delay. */
  reset(): void {
    this.#durationMs = this.#initialMs;
    this.#lastStep = -Infinity;
  }
}

/** Waits `ms`, or less if the signal aborts; resolves true when the full time passed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
