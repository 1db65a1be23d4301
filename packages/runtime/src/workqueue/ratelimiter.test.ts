import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { RateLimitingQueue } from './rate-limiting-queue.ts';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from './ratelimiter.ts';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from 5 ms per failure and caps at 1000 s', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(5, 1000_000);
    const delays = Array.from({ length: 20 }, () => l.when('a'));
    assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
    assert.equal(delays[17], 655_360);
    assert.equal(delays[18], 1000_000, 'capped from the 19th failure (5 ms · 2^18 > 1000 s)');
    assert.equal(delays[19], 1000_000);
    assert.equal(l.numRequeues('a'), 20);
    for (let i = 0; i < 2000; i++) l.when('a');
    assert.equal(l.when('a'), 1000_000, 'no overflow after many failures');
  });

  it('tracks items separately and forget resets one', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(5, 1000_000);
    l.when('a');
    l.when('a');
    assert.equal(l.when('b'), 5);
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
    assert.equal(l.when('a'), 5);
    assert.equal(l.numRequeues('b'), 1);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst of 100 through, then one per 100 ms, and refills at 10/s', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>({ qps: 10, burst: 100, clock });
    for (let i = 0; i < 100; i++) assert.equal(l.when(`i${i}`), 0);
    assert.equal(l.when('x'), 100);
    assert.equal(l.when('y'), 200);
    assert.equal(l.when('z'), 300);
    // 3 tokens owed; after 1 s, 10 were added: 7 available.
    clock.step(1000);
    for (let i = 0; i < 7; i++) assert.equal(l.when(`j${i}`), 0);
    assert.equal(l.when('k'), 100);
    // It never holds more than the burst.
    clock.step(3600_000);
    for (let i = 0; i < 100; i++) assert.equal(l.when(`m${i}`), 0);
    assert.ok(Math.abs(l.when('n') - 100) < 1e-9);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is the max of per-item backoff and the overall bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>({ clock });
    assert.equal(l.when('a'), 5);
    assert.equal(l.when('a'), 10);
    assert.equal(l.when('a'), 20);
    for (let i = 0; i < 97; i++) l.when(`other${i}`);
    // 100 tokens used: the bucket now dominates a fresh item's 5 ms.
    assert.equal(l.when('fresh'), 100);
    assert.equal(l.numRequeues('a'), 3);
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
  });

  it('MaxOf takes the max of numRequeues and forgets in all', () => {
    const a = new ItemExponentialFailureRateLimiter<string>(1, 100);
    const b = new ItemExponentialFailureRateLimiter<string>(50, 100);
    const m = new MaxOfRateLimiter(a, b);
    assert.equal(m.when('x'), 50);
    assert.equal(m.when('x'), 100);
    assert.equal(m.numRequeues('x'), 2);
    m.forget('x');
    assert.equal(a.numRequeues('x') + b.numRequeues('x'), 0);
  });
});

describe('RateLimitingQueue', () => {
  it('delays retries by the backoff, and forget resets it', async () => {
    const clock = new FakeClock();
    let retries = 0;
    const q = new RateLimitingQueue<string>({ clock, metrics: { retry: () => retries++ } });
    q.addRateLimited('a');
    assert.equal(q.len, 0);
    clock.step(4);
    assert.equal(q.len, 0);
    clock.step(1);
    assert.equal(q.len, 1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    q.addRateLimited('a');
    clock.step(9);
    assert.equal(q.len, 0);
    clock.step(1);
    assert.equal(q.len, 1);
    assert.equal(q.numRequeues('a'), 2);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    assert.equal(retries, 2);
    q.shutDown();
  });
});
