import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import type { Cache } from '../cache/cache.ts';
import { KubeClient } from '../client/kube-client.ts';
import { loadKubeconfig } from '../client/kubeconfig.ts';
import { LEASE_RESOURCE, type Lease } from './leader-election.ts';
import { Controller } from './controller.ts';
import { Manager, type Runnable } from './manager.ts';
import { MetricsRegistry, restClientMetricsHook } from './metrics.ts';
import { parseBindAddress } from './probes.ts';
import { MANAGER_SIGTERM_SCRIPT } from '@certkit/testenv/processes/scripts';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';
import { eventually } from '@certkit/testenv/eventually';

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

// cache/'s Cache is a Runnable as it stands: the manager starts it at once and waits for its sync.
void ((cache: Cache): Runnable => cache);

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
    const text = await res.text();
    const samples = parsePrometheus(text);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="widgets",result="success"}'), 1);
    // The process's own metrics, as prom-client's default collectors give them.
    assert.match(text, /^# TYPE process_resident_memory_bytes gauge$/m);
    assert.match(text, /^# TYPE nodejs_heap_size_used_bytes gauge$/m);
    assert.ok(samples.get('process_cpu_seconds_total')! > 0);
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
    const running = manager.start();
    assert.equal(await manager.listening, undefined, 'metrics disabled');
    await assert.rejects(running, /timed out waiting for cache to be synced/);
    assert.deepEqual(events, ['cache start', 'cache stop']);
  });

  it("accepts controller-runtime's waitForCacheSync name for caches", async () => {
    const events: string[] = [];
    let synced = false;
    const manager = new Manager({ metricsBindAddress: '0', log: () => {} });
    manager.add({
      async start(signal) {
        events.push('cache start');
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      },
      waitForCacheSync: async () => {
        await sleep(20);
        return (synced = true);
      },
    });
    manager.add({ start: async () => void events.push(`controller start, synced=${synced}`) });
    const running = manager.start();
    while (!manager.synced) await sleep(2);
    await sleep(5);
    await manager.stop();
    await running;
    assert.deepEqual(events, ['cache start', 'controller start, synced=true']);
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
    const fixture = MANAGER_SIGTERM_SCRIPT;
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const iterator = lines[Symbol.asyncIterator]();
    const nextLine = async () => JSON.parse(String((await iterator.next()).value));
    const first = await nextLine();
    assert.equal((await get(`${first.url}/readyz`)).status, 200);
    const started = performance.now();
    child.kill('SIGTERM');
    assert.deepEqual(await nextLine(), { stopped: true });
    const [code, signal] = await once(child, 'exit');
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.ok(performance.now() - started < 3000, 'exited promptly');
  });
});

describe('Manager with leader election', () => {
  let server: TestServer;
  const clients: KubeClient[] = [];
  const managers: Manager[] = [];

  before(async () => {
    server = await startTestServer();
  });

  after(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    for (const c of clients) c.close();
    await server?.close();
  });

  async function replica(identity: string) {
    const config = await loadKubeconfig({ path: server.kubeconfigPath });
    const metrics = new MetricsRegistry();
    // The client reports its requests into the manager's registry.
    const client = new KubeClient({ ...config, qps: -1, onRequest: restClientMetricsHook(metrics) });
    clients.push(client);
    const events: string[] = [];
    const cache = fakeCache(events);
    cache.sync();
    const manager = new Manager({
      metrics,
      metricsBindAddress: '0',
      onLeadershipLost: 'stop',
      log: () => {},
      leaderElection: {
        client: client.resource<Lease>(LEASE_RESOURCE),
        id: 'manager-lease',
        namespace: 'default',
        identity,
        leaseDurationMs: 2000,
        renewDeadlineMs: 1500,
        retryPeriodMs: 200,
        releaseOnCancel: true,
      },
    });
    manager.add(cache.runnable);
    manager.add({
      needLeaderElection: true,
      async start(signal) {
        events.push('leader start');
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        events.push('leader stop');
      },
    });
    managers.push(manager);
    const running = manager.start();
    running.catch(() => {}); // inspected by the test
    return { manager, events, metrics, running };
  }

  const leasePath = '/apis/coordination.k8s.io/v1/namespaces/default/leases/manager-lease';

  it('runs leader runnables only while leading, stops on loss, and releases on clean stop', async () => {
    const a = await replica('a');
    await eventually(() => a.events.includes('leader start'), 'a to start leading', 3_000, 5);
    assert.match(a.metrics.render(), /leader_election_master_status\{name="manager-lease"\} 1/);
    const b = await replica('b');
    await eventually(() => b.manager.synced, 'b to sync', 3_000, 5);
    await sleep(600);
    assert.deepEqual(
      b.events,
      ['cache start'],
      'caches run on every replica; leader runnables only on the leader',
    );
    const samples = parsePrometheus(a.metrics.render());
    assert.equal(samples.get('rest_client_requests_total{code="404",method="GET"}'), 1, 'no lease at first');
    assert.equal(samples.get('rest_client_requests_total{code="201",method="POST"}'), 1, 'so a created it');
    assert.ok(samples.get('rest_client_requests_total{code="200",method="PUT"}')! >= 2, 'and renews it');

    // Someone else takes the lease (for 2 s, then lets it lapse): a must stop leading and fail.
    // a renews every 200 ms: retry on conflict, as any optimistic writer would.
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 10, 'could not take the lease');
      const current = (await server.fetch('GET', leasePath)).json as Lease;
      const put = await server.fetch('PUT', leasePath, {
        body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 2 } },
      });
      if (put.status === 200) break;
      assert.equal(put.status, 409, put.text);
    }
    await assert.rejects(a.running, /leader election lost/);
    assert.deepEqual(a.events, ['cache start', 'leader start', 'leader stop', 'cache stop']);
    assert.match(a.metrics.render(), /leader_election_master_status\{name="manager-lease"\} 0/);

    // Once the intruder's lease lapses, b leads; a clean stop releases the lease.
    await eventually(() => b.events.includes('leader start'), 'b to start leading', 4000, 5);
    await b.manager.stop();
    await b.running;
    assert.deepEqual(b.events, ['cache start', 'leader start', 'leader stop', 'cache stop']);
    const released = (await server.fetch('GET', leasePath)).json as Lease;
    assert.equal(released.spec?.holderIdentity, '');
    assert.equal(released.spec?.leaseDurationSeconds, 1);
  });
});
