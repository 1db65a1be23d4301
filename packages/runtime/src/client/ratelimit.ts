/**
 * Client-side rate limiting as client-go's flowcontrol.NewTokenBucketRateLimiter: a bucket of `burst` tokens
 * refilled at `qps` per second; every request takes one. Waiters are served strictly in arrival order by a
 * single timer set for the moment the next token is due, so nothing polls.
 */

/** client-go rest.Config defaults, applied when qps or burst is 0 or unset. */
export const DEFAULT_QPS = 5;
/** client-go's default burst of the client-side rate limiter. */
export const DEFAULT_BURST = 10;

/** Options of the client-side rate limiter: requests per second and burst. */
export interface RateLimiterOptions {
  /** Tokens per second; 0 or unset means 5; negative disables limiting (as client-go's QPS < 0). */
  qps?: number;
  /** Bucket size; 0 or unset means 10. */
  burst?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * client-go's client-side token bucket (flowcontrol.NewTokenBucketRateLimiter): every request waits for a
 * token.
 */
export class RateLimiter {
  readonly qps: number;
  readonly burst: number;
  readonly #now: () => number;
  #tokens: number;
  #refilledAt: number;
  readonly #waiters: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RateLimiterOptions = {}) {
    this.qps = options.qps || DEFAULT_QPS;
    this.burst = options.burst || DEFAULT_BURST;
    if (this.burst < 1 || !Number.isFinite(this.burst))
      throw new RangeError(`burst must be ≥ 1, got ${this.burst}`);
    if (!Number.isFinite(this.qps)) throw new RangeError(`qps must be finite, got ${this.qps}`);
    this.#now = options.now ?? performance.now.bind(performance);
    this.#tokens = this.burst;
    this.#refilledAt = this.#now();
  }

  /** False when qps < 0: take() then never waits. */
  get enabled(): boolean {
    return this.qps > 0;
  }

  /** Requests waiting for a token. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Resolves when the caller may send one request. Rejects with the signal's reason if it aborts first;
   * the caller's place is then given up and no token is spent.
   */
  take(signal?: AbortSignal): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => this.#abandon(waiter);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
      this.#schedule();
    });
  }

  /** Tokens available now (fractional), for tests and metrics. */
  available(): number {
    if (!this.enabled) return Infinity;
    this.#refill();
    return this.#tokens;
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#refilledAt) / 1000) * this.qps);
    this.#refilledAt = now;
  }

  #schedule(): void {
    if (this.#timer || this.#waiters.length === 0) return;
    const missing = Math.max(0, 1 - this.#tokens);
    const delayMs = Math.ceil((missing / this.qps) * 1000);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#release();
    }, delayMs);
  }

  #release(): void {
    this.#refill();
    while (this.#waiters.length > 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      const waiter = this.#waiters.shift()!;
      if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    this.#schedule();
  }

  #abandon(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index < 0) return;
    this.#waiters.splice(index, 1);
    waiter.reject(waiter.signal!.reason);
    if (this.#waiters.length === 0 && this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
