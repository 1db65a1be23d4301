import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Controller } from './controller.ts';
import { Manager, type Runnable } from './manager.ts';
import { MetricsRegistry } from './metrics.ts';
import { parseBindAddress } from './probes.ts';
import { parsePrometheus } from './testdata/prometheus.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A cache stand-in: syncs when told, records its lifetime. */
function fakeCache(events: string[], name = 'cache') {
  const synced = Promise.withResolvers<void>();
  const runnable: Runnable = {
    async start(signal) {
      events.push(`${name} start`);
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      events.push(`${name} stop`);
    },
    async waitForSync(signal) {
      const aborted = new Promise<boolean>((r) =>
        signal.addEventListener('abort', () => r(false), { once: true }),
      );
      return Promise.race([synced.promise.then(() => true), aborted]);
    },
  };
  return { runnable, sync: () => synced.resolve() };
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe('parseBindAddress', () => {
  it('parses controller-runtime bind addresses', () => {
    assert.equal(parseBindAddress('0'), undefined);
    assert.deepEqual(parseBindAddress('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseBindAddress(':8443'), { host: undefined, port: 8443 });
    assert.deepEqual(parseBindAddress('[::1]:9090'), { host: '::1', port: 9090 });
    assert.throws(() => parseBindAddress('8080'), /invalid bind address/);
  });
});

describe('Manager', () => {
  it('serves probes and metrics, flips /readyz after sync, and stops controllers before caches', async () => {
    const events: string[] = [];
    const metrics = new MetricsRegistry();
    const cache = fakeCache(events);
    let reconciled = 0;
    const controller = new Controller({
      name: 'widgets',
      metrics,
      log: () => {},
      reconcile: async () => {
        reconciled++;
      },
    });
    const controllerRun: Runnable = {
      needLeaderElection: true,
      async start(signal) {
        events.push('controller start');
        await controller.start(signal);
        events.push('controller stop');
      },
    };
    const manager = new Manager({ metrics, metricsBindAddress: '127.0.0.1:0', log: () => {} });
    manager.add(cache.runnable);
    manager.add(controllerRun);
    const running = manager.start();
    const url = await manager.listening;
    assert.ok(url);

    assert.deepEqual(await get(`${url}/healthz`), { status: 200, text: 'ok' });
    const notReady = await get(`${url}/readyz?verbose`);
    assert.equal(notReady.status, 500);
    assert.match(notReady.text, /\[-\]cache-sync failed/);
    assert.deepEqual(events, ['cache start'], 'controllers wait for caches to sync');

    cache.sync();
    while (!manager.synced) await sleep(2);
    assert.deepEqual(await get(`${url}/readyz`), { status: 200, text: 'ok' });
    assert.match((await get(`${url}/readyz?verbose`)).text, /\[\+\]cache-sync ok\nreadyz check passed/);
    assert.equal((await get(`${url}/nope`)).status, 404);

    controller.enqueue({ namespace: 'ns', name: 'w1' });
    while (reconciled === 0) await sleep(2);
    const res = await fetch(`${url}/metrics`);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(await res.text());
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="widgets",result="success"}'), 1);
    assert.equal(samples.get('workqueue_adds_total{name="widgets",controller="widgets"}'), 1);
    assert.equal(samples.get('workqueue_depth{name="widgets",controller="widgets"}'), 0);

    await manager.stop();
    await running;
    assert.deepEqual(events, ['cache start', 'controller start', 'controller stop', 'cache stop']);
    await assert.rejects(fetch(`${url}/healthz`), 'the probes server is closed');
  });

  it('fails start when caches do not sync in time, without starting controllers', async () => {
    const events: string[] = [];
    const manager = new Manager({ metricsBindAddress: '0', cacheSyncTimeoutMs: 50, log: () => {} });
    manager.add(fakeCache(events).runnable);
    manager.add({ start: async () => void events.push('controller start') });
    assert.equal(await manager.listening.then(() => undefined), undefined);
    await assert.rejects(manager.start(), /timed out waiting for cache to be synced/);
    assert.deepEqual(events, ['cache start', 'cache stop']);
  });

  it('stops everything when a runnable fails, and reports its error', async () => {
    const events: string[] = [];
    const cache = fakeCache(events);
    cache.sync();
    const manager = new Manager({ metricsBindAddress: '0', log: () => {} });
    manager.add(cache.runnable);
    manager.add({
      start: () => {
        throw new Error('controller exploded');
      },
    });
    await assert.rejects(manager.start(), /controller exploded/);
    assert.deepEqual(events, ['cache start', 'cache stop']);
  });

  it('rejects when stopping overruns the grace period', async () => {
    const manager = new Manager({ metricsBindAddress: '0', gracefulShutdownTimeoutMs: 50, log: () => {} });
    let started = false;
    manager.add({
      start: () => {
        started = true;
        return new Promise(() => {}); // ignores its signal
      },
    });
    const running = manager.start();
    while (!started) await sleep(2);
    void manager.stop();
    await assert.rejects(running, /grace period/);
  });

  it('stops cleanly on SIGTERM and leaves nothing running (the process exits by itself)', async () => {
    const fixture = fileURLToPath(new URL('./testdata/manager-sigterm.ts', import.meta.url));
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const iterator = lines[Symbol.asyncIterator]();
    const first = JSON.parse((await iterator.next()).value);
    assert.equal((await get(`${first.url}/readyz`)).status, 200);
    const started = performance.now();
    child.kill('SIGTERM');
    assert.deepEqual(JSON.parse((await iterator.next()).value), { stopped: true });
    const [code, signal] = await once(child, 'exit');
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.ok(performance.now() - started < 3000, 'exited promptly');
  });
});
