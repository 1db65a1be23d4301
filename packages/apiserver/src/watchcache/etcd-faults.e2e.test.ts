import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig, makeInformer, CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { EtcdStorage } from '../storage/etcd/store.ts';
import { etcdAvailable, startEtcd, startEtcdCluster } from '@certkit/testenv/etcd/etcd';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';

/**
 * The watch cache and the API server over real etcd: losing etcd under running watchers, and two API servers
 * on one three-member etcd cluster.
 */

const skip = etcdAvailable() ? false : 'etcd is not installed (CI installs Debian etcd-server)';
if (skip) console.log(`# skipping etcd fault tests: ${skip}`);

async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

describe('stopping etcd under running watchers', { skip }, () => {
  let t: TestServer | undefined;
  let stopEtcd: (() => Promise<void>) | undefined;
  after(async () => {
    await t?.close();
    await stopEtcd?.();
  });

  it('ends every watch, refuses watches with 429 while down, and converges an informer after', async () => {
    const etcd = await startEtcd();
    stopEtcd = () => etcd.cleanup();
    const prefix = `/${randomUUID()}`;
    t = await startTestServer({
      openStorage: () =>
        EtcdStorage.connect({ endpoints: [etcd.endpoint], prefix, watchReconnectTimeoutMs: 2000 }),
      watchCacheOptions: { relistDelayMs: 500 },
    });
    const server = t;
    await server.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'f' } } });
    for (let i = 0; i < 30; i++) {
      await server.fetch('POST', '/api/v1/namespaces/f/configmaps', {
        body: { metadata: { name: `c-${i}` }, data: { v: '0' } },
      });
    }
    const rv = (await server.fetch('GET', '/api/v1/namespaces/f/configmaps')).json.metadata.resourceVersion;
    const watchers = await Promise.all(
      Array.from({ length: 5 }, () =>
        openWatch(server, `/api/v1/namespaces/f/configmaps?watch=true&resourceVersion=${rv}`),
      ),
    );

    // client-node's informer, restarted on errors as its users do.
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/f/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'f' }),
    );
    let stopped = false;
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void informer.start().catch(() => {}), 500);
    });
    await informer.start();

    await etcd.stop();
    // Each watcher's stream ends (the cache went Pending and let its watchers go): none hangs silently.
    await Promise.all(
      watchers.map((w) =>
        Promise.race([
          w.ended,
          new Promise((_, reject) => setTimeout(() => reject(new Error('a watch hung')), 15_000)),
        ]),
      ),
    );
    const refused = await server.fetch('GET', '/api/v1/namespaces/f/configmaps?watch=true');
    assert.equal(refused.status, 429, refused.text);
    assert.ok(Number(refused.headers['retry-after']) >= 1);

    await etcd.restart();
    // The cache comes back by itself (no server restart).
    await eventually('the cache to be Ready again', async () => {
      const res = await server.fetch(
        'GET',
        '/api/v1/namespaces/f/configmaps?resourceVersion=0&labelSelector=x%21%3Dy',
      );
      return res.status === 200;
    });
    for (let i = 30; i < 45; i++) {
      await server.fetch('POST', '/api/v1/namespaces/f/configmaps', {
        body: { metadata: { name: `c-${i}` }, data: { v: '0' } },
      });
    }
    for (let i = 0; i < 10; i++) {
      await server.fetch('PATCH', `/api/v1/namespaces/f/configmaps/c-${i}`, {
        body: { data: { v: '1' } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
    }
    for (let i = 40; i < 45; i++) await server.fetch('DELETE', `/api/v1/namespaces/f/configmaps/c-${i}`);

    const storage = server.server.storage;
    const expected = async () => {
      const { kvs } = await storage.range('/registry/core/configmaps/f/', {});
      return kvs.map((kv) => `${kv.key.split('/').pop()}@${kv.modRevision}`).sort();
    };
    const want = await expected();
    assert.equal(want.length, 40);
    await eventually('the informer to converge to storage', async () => {
      const have = informer
        .list('f')
        .map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`)
        .sort();
      return JSON.stringify(have) === JSON.stringify(want);
    });
    stopped = true;
    await informer.stop();
  });
});

/** A `certkit apiserver` process on etcd, with what a test needs to call it. */
interface ServerProcess {
  child: ChildProcess;
  url: string;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  watch(path: string, onLine: (event: any) => void): Promise<() => void>;
  dir: string;
}

const main = CERTKIT_BIN;

async function startServerProcess(endpoints: string[]): Promise<ServerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-scale-'));
  const child = spawn(
    process.execPath,
    [
      main,
      'apiserver',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--storage',
      'etcd',
      '--etcd-endpoints',
      endpoints.join(','),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: certkitEnv() },
  );
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
  const agent = new Agent({ ca: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8'), keepAlive: true });
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  return {
    child,
    url,
    dir,
    call(method, path, body) {
      return new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(`${url}${path}`, { method, agent, headers }, (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => {
            const json = res.headers['content-type']?.startsWith('application/json')
              ? JSON.parse(text)
              : undefined;
            resolve({ status: res.statusCode ?? 0, json });
          });
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    watch(path, onLine) {
      return new Promise((resolve, reject) => {
        const req = request(
          `${url}${path}`,
          { agent: new Agent({ ca: agent.options.ca }), headers },
          (res) => {
            let buffer = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffer += chunk;
              for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
                onLine(JSON.parse(buffer.slice(0, nl)));
                buffer = buffer.slice(nl + 1);
              }
            });
            resolve(() => req.destroy());
          },
        );
        req.on('error', reject);
        req.end();
      });
    },
  };
}

describe('two API servers on one three-member etcd cluster', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('see each other’s writes, lose nothing when an etcd member dies, and survive each other', async () => {
    const cluster = await startEtcdCluster(3);
    cleanups.push(() => cluster.cleanup());
    const a = await startServerProcess(cluster.endpoints);
    const b = await startServerProcess(cluster.endpoints);
    for (const s of [a, b]) {
      cleanups.push(async () => {
        s.child.kill('SIGKILL');
        await rm(s.dir, { recursive: true, force: true });
      });
    }
    await eventually(
      'both servers ready',
      async () =>
        (await a.call('GET', '/readyz')).status === 200 && (await b.call('GET', '/readyz')).status === 200,
    );

    assert.ok(
      [200, 201, 409].includes(
        (await a.call('POST', '/api/v1/namespaces', { metadata: { name: 'scale' } })).status,
      ),
    );
    await eventually(
      'B to see the namespace',
      async () => (await b.call('GET', '/api/v1/namespaces/scale')).status === 200,
    );
    const rv = (await b.call('GET', '/api/v1/namespaces/scale/configmaps')).json.metadata.resourceVersion;
    const seenByB = new Set<string>();
    const stopWatch = await b.watch(
      `/api/v1/namespaces/scale/configmaps?watch=true&resourceVersion=${rv}`,
      (e) => {
        if (e.type === 'ADDED') seenByB.add(e.object.metadata.name);
      },
    );
    cleanups.push(async () => stopWatch());

    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await a.call('POST', '/api/v1/namespaces/scale/configmaps', {
        metadata: { name: `before-${i}` },
      });
      if (res.status === 201) acknowledged.push(`before-${i}`);
    }
    await eventually("B's watch to see A's writes", async () => acknowledged.every((n) => seenByB.has(n)));

    // A custom resource type defined through A is served by B too.
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    assert.equal(
      (await a.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
      201,
    );
    await eventually(
      'B to serve the CRD',
      async () => (await b.call('GET', '/apis/example.com/v1/namespaces/scale/gadgets')).status === 200,
    );

    // Lose an etcd member: writes continue, nothing acknowledged is lost, B keeps seeing them.
    await cluster.members[0].kill();
    for (let i = 0; i < 20; i++) {
      const res = await a.call('POST', '/api/v1/namespaces/scale/configmaps', {
        metadata: { name: `after-${i}` },
      });
      if (res.status === 201) acknowledged.push(`after-${i}`);
    }
    assert.ok(acknowledged.length >= 35, `only ${acknowledged.length} of 40 writes were acknowledged`);
    await eventually("B's watch to see every acknowledged write", async () =>
      acknowledged.every((n) => seenByB.has(n)),
    );
    const listed = await b.call('GET', '/api/v1/namespaces/scale/configmaps');
    const names = new Set(listed.json.items.map((i: { metadata: { name: string } }) => i.metadata.name));
    for (const n of acknowledged) assert.ok(names.has(n), `${n} was acknowledged but is gone`);

    // Lose server A: B serves on.
    a.child.kill('SIGKILL');
    const created = await b.call('POST', '/api/v1/namespaces/scale/configmaps', {
      metadata: { name: 'after-a' },
    });
    assert.equal(created.status, 201);
    assert.equal((await b.call('GET', '/api/v1/namespaces/scale/configmaps/after-a')).status, 200);
  });
});
