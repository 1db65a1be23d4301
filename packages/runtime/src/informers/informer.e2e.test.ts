import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { KubeClient } from '../client/kube-client.ts';
import type { ResourceRef } from '../client/types.ts';
import { SharedInformerFactory } from './factory.ts';
import { type Cluster, keyOf, startCluster, until } from '@certkit/testenv/apiserver/cluster';
import { FaultProxy } from '@certkit/testenv/apiserver/fault-proxy';
import { type LogEntry, type Logger, silentLogger } from '../log.ts';
import type { SharedInformer } from './shared-informer.ts';

/**
 * An informer converges to exactly what the server holds (names and resourceVersions) after its watch is
 * cut, after a 410 during the watch, and after 429s with Retry-After, with writes during each outage.
 */

const NS = 'converge';
const secrets: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  namespaced: true,
};

const secret = (name: string, value = 'v'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { namespace: NS, name, labels: { app: 'converge' } },
  stringData: { value },
});

function contentsOf(informer: SharedInformer): Map<string, string> {
  return new Map(
    informer
      .getStore()
      .list()
      .map((o) => [keyOf(o), o.metadata?.resourceVersion ?? '']),
  );
}

function same(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

async function converged(cluster: Cluster, informer: SharedInformer, timeoutMs = 20_000): Promise<void> {
  let server = new Map<string, string>();
  await until(
    async () => {
      server = await cluster.contents('v1', 'Secret', NS);
      return same(server, contentsOf(informer));
    },
    'the informer to match the server',
    timeoutMs,
  ).catch((err: Error) => {
    const mine = contentsOf(informer);
    const missing = [...server].filter(([k, v]) => mine.get(k) !== v).slice(0, 5);
    const extra = [...mine].filter(([k]) => !server.has(k)).slice(0, 5);
    throw new Error(`${err.message}: differing ${JSON.stringify(missing)}, extra ${JSON.stringify(extra)}`);
  });
}

/** Creates, updates and deletes, so that every kind of event happens while the informer is away. */
async function churn(cluster: Cluster, prefix: string, count: number): Promise<void> {
  const resource = await cluster.client.forKind('v1', 'Secret');
  for (let i = 0; i < count; i++) await resource.create(NS, secret(`${prefix}-${i}`));
  for (let i = 0; i < count; i += 3) await resource.update(secret(`${prefix}-${i}`, 'changed'));
  for (let i = 1; i < count; i += 3) await resource.delete(NS, `${prefix}-${i}`);
}

function startInformer(
  client: KubeClient,
  log: Logger = silentLogger,
): { informer: SharedInformer; factory: SharedInformerFactory; stop: () => Promise<void> } {
  const factory = new SharedInformerFactory({ client, log, backoff: { initialMs: 100, capMs: 400 } });
  const informer = factory.informerFor(secrets, { namespace: NS });
  const controller = new AbortController();
  factory.start(controller.signal);
  return {
    informer,
    factory,
    stop: async () => {
      controller.abort();
      await factory.stopped();
    },
  };
}

describe('informer convergence against the real API server', () => {
  let cluster: Cluster;

  before(async () => {
    // A short watch-cache history makes a 410 reachable with a few hundred writes.
    cluster = await startCluster({ maxHistory: 50 });
    await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await churn(cluster, 'initial', 20);
  });

  after(async () => {
    await cluster?.close();
  });

  it('converges after the server restarts (watch cut), with writes right after', async () => {
    const { informer, stop } = startInformer(cluster.client);
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(10_000)), true);
      await converged(cluster, informer);
      await cluster.server.restart();
      await churn(cluster, 'after-restart', 12);
      await converged(cluster, informer);
    } finally {
      await stop();
    }
  });

  it('converges after a 410 during the watch (history gone while away), by relisting', async () => {
    const proxy = await FaultProxy.start(cluster.server);
    const client = new KubeClient({ ...proxy.clientConfig(cluster.config), qps: -1 });
    const logs: LogEntry[] = [];
    const { informer, stop } = startInformer(client, (e) => logs.push(e));
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(10_000)), true);
      await converged(cluster, informer);
      // Past the 1 s "very short watch" threshold, so that only the 410 can cause the relist.
      await new Promise((r) => setTimeout(r, 1100));
      const initialLists = proxy.requests.filter(
        (r) => r.query.has('sendInitialEvents') || !r.query.has('watch'),
      ).length;

      await proxy.refuse();
      await churn(cluster, 'while-away', 90); // well past the 50 events of history
      const latest = await cluster.contents('v1', 'Secret', NS);
      const revision = Math.max(...[...latest.values()].map(Number));
      await cluster.server.server.storage.compact(revision);
      await proxy.accept();

      await converged(cluster, informer);
      const relists = proxy.requests.filter(
        (r) => r.query.has('sendInitialEvents') || !r.query.has('watch'),
      ).length;
      assert.ok(relists > initialLists, 'the informer relisted');
      assert.ok(
        logs.some((e) => e.msg === 'watch expired, relisting'),
        `a 410 ended the watch: ${JSON.stringify(logs.map((e) => e.msg))}`,
      );
    } finally {
      await stop();
      client.close();
      await proxy.close();
    }
  });

  for (const maxRetries of [10, 0]) {
    const who = maxRetries ? 'the client retries' : 'the reflector backs off';
    it(`converges through 429s with Retry-After on the watch (${who}), without relisting`, async () => {
      const proxy = await FaultProxy.start(cluster.server);
      const client = new KubeClient({ ...proxy.clientConfig(cluster.config), qps: -1, maxRetries });
      const { informer, stop } = startInformer(client);
      try {
        assert.equal(await informer.waitForSync(AbortSignal.timeout(10_000)), true);
        // Let the watch live past the 1 s "very short watch" threshold, so its cut is a plain reconnect.
        await new Promise((r) => setTimeout(r, 1100));
        const lists = () =>
          proxy.requests.filter((r) => r.query.has('sendInitialEvents') || !r.query.has('watch'));
        const listsBefore = lists().length;

        proxy.retryAfterSeconds = 1;
        proxy.tooManyWatches = 3;
        proxy.cutConnections();
        await churn(cluster, `throttled-${maxRetries}`, 9);
        await converged(cluster, informer);

        assert.equal(proxy.tooManyWatches, 0, 'all three 429s were served');
        assert.equal(proxy.watchRequests().filter((r) => r.status === 429).length, 3);
        assert.equal(lists().length, listsBefore, 'no relist');
      } finally {
        await stop();
        client.close();
        await proxy.close();
      }
    });
  }

  it('stays converged when connections are refused for a while (backoff, no relist)', async () => {
    const proxy = await FaultProxy.start(cluster.server);
    const client = new KubeClient({ ...proxy.clientConfig(cluster.config), qps: -1 });
    const { informer, stop } = startInformer(client);
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(10_000)), true);
      await new Promise((r) => setTimeout(r, 1100));
      const lists = () =>
        proxy.requests.filter((r) => r.query.has('sendInitialEvents') || !r.query.has('watch'));
      const listsBefore = lists().length;
      await proxy.refuse();
      await churn(cluster, 'refused', 6);
      await new Promise((r) => setTimeout(r, 500));
      await proxy.accept();
      await converged(cluster, informer);
      assert.equal(lists().length, listsBefore, 'no relist');
    } finally {
      await stop();
      client.close();
      await proxy.close();
    }
  });
});
