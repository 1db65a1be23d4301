import { realClock, type Clock } from './clock.ts';
import { defaultKey, type KeyFunc } from './queue.ts';

/** client-go's `TypedRateLimiter`: how long an item should wait before it is retried. Delays in ms. */
export interface RateLimiter<T = string> {
  /** The delay before the item's next retry; records one more failure. */
  when(item: T): number;
  /** Stops tracking the item (it succeeded): its next failure starts from the base delay again. */
  forget(item: T): void;
  /** How many failures are recorded for the item. */
  numRequeues(item: T): number;
}

/**
 * Per-item exponential backoff (`ItemExponentialFailureRateLimiter`): base·2^failures, capped at max.
 */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly keyOf: KeyFunc<T>;

  constructor(baseDelayMs: number, maxDelayMs: number, key: KeyFunc<T> = defaultKey as KeyFunc<T>) {
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.keyOf = key;
  }

  when(item: T): number {
    const key = this.keyOf(item);
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    // 2^exp overflows to Infinity long before exp overflows, and Math.min handles Infinity.
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(this.keyOf(item));
  }

  numRequeues(item: T): number {
    return this.failures.get(this.keyOf(item)) ?? 0;
  }
}

/** Options of a token bucket rate limiter: rate, burst, clock. */
export interface BucketOptions {
  /** Tokens added per second. */
  qps: number;
  /** Bucket size: how many retries may go at once before the rate applies. */
  burst: number;
  clock?: Clock;
}

/**
 * An overall token bucket (`BucketRateLimiter` over golang.org/x/time/rate): the bucket starts full; every
 * `when` reserves one token, letting the balance go negative, and the delay is the time until the balance
 * is back to zero. So with burst 100 and 10 qps, the first 100 retries go at once and each further one
 * waits 100 ms more than the previous, until the bucket refills.
 */
export class BucketRateLimiter<T = string> implements RateLimiter<T> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: BucketOptions) {
    this.qps = options.qps;
    this.burst = options.burst;
    this.clock = options.clock ?? realClock;
    this.tokens = options.burst;
    this.last = this.clock.now();
  }

  when(_item: T): number {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.qps) - 1;
    this.last = now;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay any of the limiters asks for (`MaxOfRateLimiter`); every limiter records the failure. */
export class MaxOfRateLimiter<T = string> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** Options of `defaultControllerRateLimiter`: how items are keyed, and the clock. */
export interface DefaultRateLimiterOptions<T> {
  key?: KeyFunc<T>;
  clock?: Clock;
}

/**
 * client-go's `DefaultTypedControllerRateLimiter`: per-item backoff 5 ms → 1000 s, combined with an overall
 * bucket of 10 qps / burst 100 that only throttles retries as a whole.
 *
 * controller-runtime ≥ 0.23 defaults to its priority queue, which drops the bucket; certkit's controller uses
 * the classic queue, and with it this limiter, because the brief asks for client-go's queue semantics.
 */
export function defaultControllerRateLimiter<T = string>(
  options: DefaultRateLimiterOptions<T> = {},
): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1000 * 1000, options.key),
    new BucketRateLimiter<T>({ qps: 10, burst: 100, clock: options.clock }),
  );
}
