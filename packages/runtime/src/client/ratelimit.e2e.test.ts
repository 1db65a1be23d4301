import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configMaps } from './builtins.ts';
import { KubeClient } from './kube-client.ts';
import { DEFAULT_BURST, DEFAULT_QPS, RateLimiter } from './ratelimit.ts';
import { type LocalServer, sendJson, startLocalServer } from '@certkit/testenv/http/local-server';

describe('RateLimiter', () => {
  it("defaults to client-go's 5 QPS and burst 10 when unset or 0", () => {
    const limiter = new RateLimiter({ qps: 0, burst: 0 });
    assert.equal(limiter.qps, DEFAULT_QPS);
    assert.equal(limiter.burst, DEFAULT_BURST);
    assert.equal(new RateLimiter().qps, 5);
  });

  it('lets a burst through at once, then paces at qps', async () => {
    const limiter = new RateLimiter({ qps: 50, burst: 5 });
    const started = performance.now();
    for (let i = 0; i < 5; i++) await limiter.take();
    assert.ok(performance.now() - started < 15, 'the burst does not wait');
    for (let i = 0; i < 10; i++) await limiter.take();
    const elapsed = performance.now() - started;
    // 10 tokens beyond the burst at 50/s: 200 ms.
    assert.ok(elapsed >= 190 && elapsed < 400, `took ${elapsed} ms`);
  });

  it('serves waiters in arrival order', async () => {
    const limiter = new RateLimiter({ qps: 100, burst: 1 });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 10 }, (_, i) => limiter.take().then(() => order.push(i))));
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('gives up the place of an aborted waiter without spending a token', async () => {
    const limiter = new RateLimiter({ qps: 10, burst: 1 });
    await limiter.take();
    const controller = new AbortController();
    const aborted = limiter.take(controller.signal);
    const next = limiter.take();
    assert.equal(limiter.waiting, 2);
    controller.abort(new Error('cancelled'));
    await assert.rejects(aborted, /cancelled/);
    assert.equal(limiter.waiting, 1);
    const started = performance.now();
    await next;
    // The aborted waiter's token went to the next one: about one interval (100 ms), not two.
    assert.ok(performance.now() - started < 150);
    await assert.rejects(limiter.take(AbortSignal.abort(new Error('already'))), /already/);
  });

  it('never waits when qps is negative', async () => {
    const limiter = new RateLimiter({ qps: -1 });
    assert.equal(limiter.enabled, false);
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) await limiter.take();
    assert.ok(performance.now() - started < 500);
  });
});

describe('rate limiting of requests', () => {
  let server: LocalServer;
  before(async () => {
    server = await startLocalServer((_req, res) => sendJson(res, 200, { metadata: { name: 'x' } }));
  });
  after(() => server.close());

  it('holds 45 requests at qps 20 / burst 5 to at least 2 s, shared by all resource clients', async () => {
    const kube = new KubeClient({ server: server.url, qps: 20, burst: 5 });
    const a = kube.resource(configMaps);
    const b = kube.resource(configMaps, 'metadata');
    const started = performance.now();
    await Promise.all(Array.from({ length: 45 }, (_, i) => (i % 2 ? a : b).get('ns', `cm-${i}`)));
    const elapsed = performance.now() - started;
    kube.close();
    // 40 requests beyond the burst at 20/s.
    assert.ok(elapsed >= 1950 && elapsed < 3500, `took ${elapsed} ms`);
  });

  it('does not limit at qps -1', async () => {
    const kube = new KubeClient({ server: server.url, qps: -1 });
    const client = kube.resource(configMaps);
    const started = performance.now();
    await Promise.all(Array.from({ length: 45 }, (_, i) => client.get('ns', `cm-${i}`)));
    const elapsed = performance.now() - started;
    kube.close();
    assert.ok(elapsed < 1000, `took ${elapsed} ms`);
  });
});
