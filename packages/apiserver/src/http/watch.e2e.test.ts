import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';

/** Watch semantics over HTTPS: start points, selectors, initial events, bookmarks, 410, timeouts, metadata. */

for (const watchCache of [true, false]) {
  describe(watchCache ? 'served from the watch cache' : 'served from storage', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({ watchCache, maxHistory: 20 });
      await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'w' } } });
    });
    after(async () => {
      await t.close();
    });
    watchSuite(() => t, watchCache);
  });
}

const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => ({
  metadata: { name, labels },
  data,
});

function watchSuite(server: () => TestServer, watchCache: boolean): void {
  let t: TestServer;
  before(() => {
    t = server();
  });

  it('delivers ADDED, MODIFIED and DELETED in order from a resourceVersion', async () => {
    const list = await t.fetch('GET', '/api/v1/namespaces/w/configmaps');
    const rv = list.json.metadata.resourceVersion;
    const w = await openWatch(t, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}`);
    assert.equal(w.status, 200);
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('order') });
    await t.fetch('PATCH', '/api/v1/namespaces/w/configmaps/order', {
      body: { data: { a: '1' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    const deleted = await t.fetch('DELETE', '/api/v1/namespaces/w/configmaps/order');
    const events = await w.waitFor(3);
    w.close();
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    assert.equal(events[1].object.data.a, '1');
    assert.equal(events[2].object.metadata.resourceVersion, deleted.json.metadata.resourceVersion);
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual(
      rvs,
      [...rvs].sort((a, b) => a - b),
    );
  });

  it('starts with synthetic ADDED events without a resourceVersion', async () => {
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('existing-1') });
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('existing-2') });
    const w = await openWatch(
      t,
      '/api/v1/namespaces/w/configmaps?watch=1&fieldSelector=metadata.name%3Dexisting-2',
    );
    const [first] = await w.waitFor(1);
    w.close();
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.metadata.name, 'existing-2');
  });

  it('ends sendInitialEvents with the initial-events-end bookmark', async () => {
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('initial', { set: 'initial' }) });
    const w = await openWatch(
      t,
      '/api/v1/namespaces/w/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=set%3Dinitial',
    );
    const events = await w.waitFor(2);
    assert.equal(events[0].type, 'ADDED');
    assert.equal(events[1].type, 'BOOKMARK');
    assert.equal(events[1].object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    assert.equal(events[1].object.kind, 'ConfigMap');
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('initial-2', { set: 'initial' }) });
    const [, , third] = await w.waitFor(3);
    w.close();
    assert.equal(third.type, 'ADDED');
    assert.equal(third.object.metadata.name, 'initial-2');
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('mover', { tier: 'a' }) });
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/configmaps/mover')).json.metadata.resourceVersion;
    const w = await openWatch(
      t,
      `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}&labelSelector=tier%3Db`,
    );
    const patch = (tier: string) =>
      t.fetch('PATCH', '/api/v1/namespaces/w/configmaps/mover', {
        body: { metadata: { labels: { tier } } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
    await patch('b');
    await patch('c');
    const events = await w.waitFor(2);
    w.close();
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'DELETED'],
    );
    assert.equal(events[1].object.metadata.labels.tier, 'b', 'DELETED carries the last state that matched');
  });

  it('selects by labels, by name and by fields outside metadata alike', async () => {
    const secret = (name: string, labels: Record<string, string>, type: string) => ({
      metadata: { name, labels },
      type,
      data: { k: Buffer.from('v').toString('base64') },
    });
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/secrets')).json.metadata.resourceVersion;
    const path = (selector: string) =>
      `/api/v1/namespaces/w/secrets?watch=true&resourceVersion=${rv}&${selector}`;
    const byLabel = await openWatch(t, path('labelSelector=pick%3Dyes'));
    const byName = await openWatch(t, path('fieldSelector=metadata.name%3Dsel-1&labelSelector=pick'));
    const byType = await openWatch(t, path('fieldSelector=type%3Dexample.com%2Fpicked'));
    await t.fetch('POST', '/api/v1/namespaces/w/secrets', {
      body: secret('sel-1', { pick: 'yes' }, 'Opaque'),
    });
    await t.fetch('POST', '/api/v1/namespaces/w/secrets', {
      body: secret('sel-2', { pick: 'no' }, 'example.com/picked'),
    });
    await t.fetch('DELETE', '/api/v1/namespaces/w/secrets/sel-1');
    await t.fetch('DELETE', '/api/v1/namespaces/w/secrets/sel-2');
    const seen = async (w: Awaited<ReturnType<typeof openWatch>>) => {
      const events = await w.waitFor(2);
      w.close();
      return events.map((e) => `${e.type} ${e.object.metadata.name}`);
    };
    assert.deepEqual(await seen(byLabel), ['ADDED sel-1', 'DELETED sel-1']);
    assert.deepEqual(await seen(byName), ['ADDED sel-1', 'DELETED sel-1']);
    assert.deepEqual(await seen(byType), ['ADDED sel-2', 'DELETED sel-2']);
  });

  it('answers a resourceVersion older than the history with an ERROR event carrying 410 Expired', async () => {
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/configmaps')).json.metadata.resourceVersion;
    // Storage forgets through compaction; the watch cache through its bounded history (20 events here).
    for (let i = 0; i < 25; i++)
      await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm(`old-${i}`) });
    if (!watchCache) await t.server.storage.compact(await t.server.storage.currentRevision());
    const w = await openWatch(t, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}`);
    assert.equal(w.status, 200);
    const [event] = await w.waitFor(1);
    await w.ended;
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.kind, 'Status');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
    assert.match(event.object.message, /too old resource version/);
  });

  it('ends the stream cleanly at timeoutSeconds, with a bookmark before when asked', async () => {
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/configmaps')).json.metadata.resourceVersion;
    const started = Date.now();
    const w = await openWatch(
      t,
      `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=3&allowWatchBookmarks=true`,
    );
    await w.ended;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 2900 && elapsed < 6000, `ended after ${elapsed} ms`);
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['BOOKMARK'],
    );
    assert.equal(w.events[0].object.metadata.resourceVersion, rv);
  });

  it('keeps a watch open whose timeoutSeconds is beyond what a Node timer holds', async () => {
    // 30 days and 10^12 s: the timer overflowed and fired at once, so the watch ended as it began.
    for (const timeoutSeconds of ['2592000', '999999999999']) {
      const w = await openWatch(
        t,
        `/api/v1/namespaces/w/configmaps?watch=true&timeoutSeconds=${timeoutSeconds}`,
      );
      const early = await Promise.race([
        w.ended.then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 1000)),
      ]);
      w.close();
      assert.equal(early, false, `timeoutSeconds=${timeoutSeconds} ended within a second`);
    }
  });

  it('sends an initial state larger than the watch buffer bound, at the pace of the connection', async () => {
    // 11 MB of ConfigMaps, more than MAX_WATCH_BUFFER_BYTES: queued whole, the stream was cut off at once, so
    // no watch without a resourceVersion (the Python client's default) could start on such a namespace.
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'large' } } });
    const count = 12;
    for (let i = 0; i < count; i++) {
      const res = await t.fetch('POST', '/api/v1/namespaces/large/configmaps', {
        body: cm(`large-${i}`, {}, { payload: `${i}`.padEnd(900_000, 'x') }),
      });
      assert.equal(res.status, 201, res.text);
    }
    const w = await openWatch(t, '/api/v1/namespaces/large/configmaps?watch=true&timeoutSeconds=30');
    const events = await w.waitFor(count);
    w.close();
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.data.payload.length}`).sort(),
      Array.from({ length: count }, (_, i) => `ADDED large-${i} 900000`).sort(),
    );
  });

  it('sends only metadata on a PartialObjectMetadata watch', async () => {
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/configmaps')).json.metadata.resourceVersion;
    const w = await openWatch(
      t,
      `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}`,
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    );
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', {
      body: cm('secretive', {}, { password: 'hunter2' }),
    });
    const [event] = await w.waitFor(1);
    w.close();
    assert.equal(event.object.kind, 'PartialObjectMetadata');
    assert.equal(event.object.apiVersion, 'meta.k8s.io/v1');
    assert.equal(event.object.metadata.name, 'secretive');
    assert.ok(!JSON.stringify(event).includes('hunter2'));
  });

  it('sends Table rows, with column definitions only on the first event', async () => {
    const rv = (await t.fetch('GET', '/api/v1/namespaces/w/configmaps')).json.metadata.resourceVersion;
    const w = await openWatch(
      t,
      `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}`,
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    );
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('row-1') });
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('row-2') });
    const events = await w.waitFor(2);
    w.close();
    assert.equal(events[0].object.kind, 'Table');
    assert.ok(events[0].object.columnDefinitions.length > 0);
    assert.equal(events[1].object.columnDefinitions.length, 0);
    assert.equal(events[1].object.rows[0].cells[0], 'row-2');
  });

  it('streams to an HTTP/1.0 client without chunks, ending with the connection (HTTP/1.1: chunked)', async () => {
    await t.fetch('POST', '/api/v1/namespaces/w/configmaps', { body: cm('old-client') });
    const url = new URL(t.url);
    const exchange = async (version: string) => {
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      await once(socket, 'secureConnect');
      const path =
        '/api/v1/namespaces/w/configmaps?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dold-client';
      const host = version === '1.1' ? 'Host: x\r\nConnection: close\r\n' : '';
      socket.write(`GET ${path} HTTP/${version}\r\n${host}Authorization: Bearer ${t.token}\r\n\r\n`);
      await once(socket, 'close');
      return Buffer.concat(chunks).toString('utf8');
    };
    // RFC 9112 §6.1: no Transfer-Encoding to a client that did not say HTTP/1.1; nginx proxies in HTTP/1.0.
    const old = await exchange('1.0');
    const [head, body] = old.split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(head!, /transfer-encoding/i);
    assert.match(head!, /\r\nConnection: close/i);
    const event = JSON.parse(body!.trim());
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.metadata.name, 'old-client');
    const current = await exchange('1.1');
    assert.match(current, /\r\nTransfer-Encoding: chunked\r\n/i);
  });

  it('refuses invalid watch options with 422 before streaming', async () => {
    const res = await t.fetch(
      'GET',
      '/api/v1/namespaces/w/configmaps?watch=true&resourceVersionMatch=Exact&resourceVersion=1',
    );
    assert.equal(res.status, 422);
    assert.equal(res.json.reason, 'Invalid');
  });
}
