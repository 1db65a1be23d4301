import { DelayingQueue } from './delaying.ts';
import type { QueueOptions } from './queue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.ts';

/** Options of a rate-limiting queue: the work queue's, plus its rate limiter. */
export interface RateLimitingQueueOptions<T> extends QueueOptions<T> {
  /** Defaults to `defaultControllerRateLimiter` (5 ms → 1000 s per item, 10 qps / burst 100 overall). */
  rateLimiter?: RateLimiter<T>;
}

/** client-go's rate-limiting queue: retries wait as long as the rate limiter says. */
export class RateLimitingQueue<T = string> extends DelayingQueue<T> {
  readonly rateLimiter: RateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.rateLimiter =
      options.rateLimiter ?? defaultControllerRateLimiter({ key: options.key, clock: options.clock });
  }

  /** Adds the item once the rate limiter allows it; each call counts as one more failure. */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** The item succeeded: its backoff starts over. It does not remove the item from the queue. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times an item has been re-added with backoff since it was last forgotten. */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}
