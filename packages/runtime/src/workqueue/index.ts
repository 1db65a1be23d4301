export * from './clock.ts';
export * from './queue.ts';
export * from './delaying.ts';
export * from './ratelimiter.ts';
export * from './rate-limiting-queue.ts';
