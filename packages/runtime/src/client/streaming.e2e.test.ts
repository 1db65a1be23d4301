import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { configMaps } from './builtins.ts';
import { KubeClient } from './kube-client.ts';
import {
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  resourcePath,
  watchInactivityTimeoutMs,
} from './resource-client.ts';
import {
  type Handler,
  type LocalServer,
  sendJson,
  startLocalServer,
} from '@certkit/testenv/http/local-server';
import { WatchInactivityError } from './watch-stream.ts';

/** Streaming behaviour that needs a server under the test's control: partial bodies, silence, dropped sockets. */

const servers: LocalServer[] = [];
const clients: KubeClient[] = [];
after(async () => {
  for (const c of clients) c.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(handler: Handler) {
  const server = await startLocalServer(handler);
  servers.push(server);
  const kube = new KubeClient({ server: server.url, qps: -1 });
  clients.push(kube);
  return { server, kube };
}

const item = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { secret: 'x' },
});

describe('listEach', () => {
  it('hands items over while the body is still arriving', async () => {
    let itemsBeforeRest = -1;
    let delivered = 0;
    let releaseRest: () => void = () => {};
    const restWritten = new Promise<void>((resolve) => {
      releaseRest = resolve;
    });
    const { kube } = await setup(async (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(
        `{"kind":"ConfigMapList","items":[${JSON.stringify(item('a'))},${JSON.stringify(item('b'))},{"meta`,
      );
      // The rest of the body goes out only once the client has decoded what it got so far.
      const deadline = Date.now() + 5000;
      while (delivered < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      itemsBeforeRest = delivered;
      res.end(`data":{"name":"c"}}],"metadata":{"resourceVersion":"9"}}`);
      releaseRest();
    });
    const names: string[] = [];
    const meta = await kube.resource(configMaps).listEach('ns', {}, (i) => {
      delivered++;
      names.push(i.metadata!.name!);
    });
    await restWritten;
    assert.equal(itemsBeforeRest, 2, 'two items were decoded before the server sent the rest');
    assert.deepEqual(names, ['a', 'b', 'c']);
    assert.deepEqual(meta, { resourceVersion: '9' });
  });

  it('fails when the connection drops mid-body', async () => {
    const { kube } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`{"items":[${JSON.stringify(item('a'))},`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    let count = 0;
    await assert.rejects(
      kube.resource(configMaps).listEach('ns', {}, () => count++),
      /aborted|closed|ECONNRESET|ended/,
    );
    assert.equal(count, 1);
  });
});

describe('metadata mode against a server that ignores it', () => {
  it('asks for PartialObjectMetadata and strips full objects client-side', async () => {
    const { server, kube } = await setup((req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(`${JSON.stringify({ type: 'ADDED', object: item('w') })}\n`);
      } else if (req.url?.endsWith('/configmaps')) {
        sendJson(res, 200, {
          kind: 'ConfigMapList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '5' },
          items: [item('l')],
        });
      } else {
        sendJson(res, 200, item('g'));
      }
    });
    const meta = kube.resource<KubeObject>(configMaps, 'metadata');
    const got = await meta.get('ns', 'g');
    assert.deepEqual(got, {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: { name: 'g' },
    });
    const list = await meta.list('ns');
    assert.deepEqual(list.items, [
      { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'l' } },
    ]);
    const streamed: KubeObject[] = [];
    await meta.listEach('ns', {}, (i) => streamed.push(i));
    assert.deepEqual(streamed, list.items);
    const events = [];
    for await (const e of await meta.watch('ns', {})) events.push(e);
    assert.deepEqual(events, [
      {
        type: 'ADDED',
        object: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'w' } },
      },
    ]);
    assert.deepEqual(
      server.requests.map((r) => r.headers.accept),
      [METADATA_ACCEPT, METADATA_LIST_ACCEPT, METADATA_LIST_ACCEPT, METADATA_ACCEPT],
    );
  });
});

describe('paths and defaults', () => {
  it('lays out URLs as kube-apiserver does', () => {
    const lease = {
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      kind: 'Lease',
      namespaced: true,
    };
    const ns = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false };
    assert.equal(resourcePath(configMaps, 'a'), '/api/v1/namespaces/a/configmaps');
    assert.equal(resourcePath(configMaps, undefined), '/api/v1/configmaps');
    assert.equal(
      resourcePath(lease, 'kube-system', 'x y'),
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x%20y',
    );
    assert.equal(resourcePath(ns, 'ignored', 'default', 'status'), '/api/v1/namespaces/default/status');
  });

  it('declares a watch dead after timeoutSeconds + 30 s, or 5 minutes without it', () => {
    assert.equal(watchInactivityTimeoutMs({ timeoutSeconds: 300 }), 330_000);
    assert.equal(watchInactivityTimeoutMs({}), 300_000);
    assert.equal(watchInactivityTimeoutMs({ timeoutSeconds: 300, inactivityTimeoutMs: 1000 }), 1000);
  });
});

describe('watch', () => {
  it('fails with WatchInactivityError when an open watch stays silent', async () => {
    const { kube } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders(); // and then nothing, like a half-open connection
    });
    const watch = await kube.resource(configMaps).watch('ns', { inactivityTimeoutMs: 300 });
    const started = performance.now();
    await assert.rejects(async () => {
      for await (const _ of watch) assert.fail('no events expected');
    }, WatchInactivityError);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 280 && elapsed < 2000, `failed after ${elapsed} ms`);
  });

  it('re-arms the inactivity timer on every chunk', async () => {
    const { kube } = await setup(async (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 150));
        res.write(`${JSON.stringify({ type: 'MODIFIED', object: item(`m${i}`) })}\n`);
      }
      res.end();
    });
    const types: string[] = [];
    for await (const e of await kube.resource(configMaps).watch('ns', { inactivityTimeoutMs: 300 }))
      types.push(e.type);
    assert.equal(types.length, 5, 'five events 150 ms apart survive a 300 ms inactivity timeout');
  });

  it('parses events split across chunks and several events in one chunk', async () => {
    const lines = ['a', 'b', 'c']
      .map((n) => `${JSON.stringify({ type: 'ADDED', object: item(n) })}\n`)
      .join('');
    const { kube } = await setup(async (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const cut = lines.length - 30;
      res.write(lines.slice(0, 7));
      await new Promise((r) => setTimeout(r, 20));
      res.write(lines.slice(7, cut));
      await new Promise((r) => setTimeout(r, 20));
      res.end(lines.slice(cut));
    });
    const names: string[] = [];
    for await (const e of await kube.resource(configMaps).watch('ns', {}))
      names.push((e.object as KubeObject).metadata!.name!);
    assert.deepEqual(names, ['a', 'b', 'c']);
  });

  it('delivers the events received, then fails, when the connection drops', async () => {
    const { kube } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: item('before') })}\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const names: string[] = [];
    await assert.rejects(async () => {
      for await (const e of await kube.resource(configMaps).watch('ns', {}))
        names.push((e.object as KubeObject).metadata!.name!);
    });
    assert.deepEqual(names, ['before']);
  });

  it('ends cleanly when the signal aborts', async () => {
    const { server, kube } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
    });
    const controller = new AbortController();
    const watch = await kube.resource(configMaps).watch('ns', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const events = [];
    for await (const e of watch) events.push(e);
    assert.equal(events.length, 0);
    // The server sees the connection close.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.requests[0].socket.destroyed, true);
  });

  it('fails on a line that is not a watch event', async () => {
    const { kube } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind":"ConfigMap"}\n');
    });
    await assert.rejects(async () => {
      for await (const _ of await kube.resource(configMaps).watch('ns', {}))
        assert.fail('no events expected');
    }, /not a watch event/);
  });
});
