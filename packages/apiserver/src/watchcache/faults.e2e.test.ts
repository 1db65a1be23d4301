import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStorage } from '../storage/sqlite.ts';
import type { Storage } from '../storage/types.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';
import { seedNamespace, seedSecrets } from '@certkit/testenv/apiserver/seed';

/**
 * Fault tests of the watch cache (KEP-4568): serving while 30,000 Secrets load, and watchers that fall
 * behind history.
 */

const SECRETS = 30_000;

async function seedBulk(storage: Storage): Promise<void> {
  await seedNamespace(storage, 'bulk');
  await seedSecrets(storage, 'bulk', SECRETS, { labels: (i) => ({ shard: String(i % 10) }) });
}

/**
 * SQLite storage whose Secrets cache holds its initial list until the test lets it go: the cache stays
 * Pending for as long as the test asks its questions, however loaded the machine (a cache that turned ready
 * before a `watch=true` request arrived would answer 200 and stream, and the request would never end).
 * Reads of one namespace (the requests under test) pass; only the cache's list of every Secret waits.
 */
function holdingSecretsCache(): {
  openStorage: (dir: string) => Promise<Storage>;
  release(): void;
  held(): boolean;
} {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held = false;
  return {
    async openStorage(dir) {
      const storage = SqliteStorage.open(join(dir, 'state.db'));
      const range = storage.range.bind(storage);
      storage.range = async (prefix, options) => {
        if (prefix === '/registry/core/secrets/') {
          held = true;
          await released;
        }
        return range(prefix, options);
      };
      return storage;
    },
    release,
    held: () => held,
  };
}

describe('a server starting over 30,000 Secrets', () => {
  let t: TestServer;
  const hold = holdingSecretsCache();
  after(async () => {
    hold.release();
    await t?.close();
  });

  it('answers while its caches initialise, by the KEP-4568 rules, then becomes ready', async () => {
    t = await startTestServer({ seed: seedBulk, waitReady: false, openStorage: hold.openStorage });
    const started = performance.now();
    const [watch, get, limited, selective, readyz] = await Promise.all([
      t.fetch('GET', '/api/v1/namespaces/bulk/secrets?watch=true&resourceVersion=0'),
      t.fetch('GET', '/api/v1/namespaces/bulk/secrets/s-00042'),
      t.fetch('GET', '/api/v1/namespaces/bulk/secrets?resourceVersion=0&limit=500'),
      t.fetch('GET', '/api/v1/namespaces/bulk/secrets?resourceVersion=0&labelSelector=shard%3D3'),
      t.fetch('GET', '/readyz', { anonymous: true }),
    ]);
    const elapsed = performance.now() - started;

    assert.equal(watch.status, 429, 'a watch is refused while the cache is Pending, never left hanging');
    assert.ok(elapsed < 1000, `answers came within ${elapsed} ms`);
    assert.equal(watch.json.reason, 'TooManyRequests');
    assert.match(watch.json.message, /storage is \(re\)initializing/);
    assert.equal(watch.headers['retry-after'], '1');
    assert.equal(watch.json.details.retryAfterSeconds, 1);

    assert.equal(get.status, 200, 'gets are served from storage');
    assert.equal(get.json.metadata.name, 's-00042');

    assert.equal(limited.status, 200, 'an unselective list with a limit is served from storage');
    assert.equal(limited.json.items.length, 500);
    assert.ok(limited.json.metadata.continue);

    assert.equal(selective.status, 429, 'a selective list would be costly from storage: 429');
    assert.equal(selective.headers['retry-after'], '1');

    assert.equal(readyz.status, 500);
    assert.match(readyz.text, /\[-\]poststarthook\/storage-readiness failed/);
    assert.ok(hold.held(), 'the Secrets cache was Pending on its initial list');

    // Once initialised: ready, and everything is served from the cache.
    hold.release();
    const deadline = Date.now() + 30_000;
    while ((await t.fetch('GET', '/readyz', { anonymous: true })).status !== 200) {
      assert.ok(Date.now() < deadline, '/readyz did not flip to ok');
      await new Promise((r) => setTimeout(r, 20));
    }
    const verbose = await t.fetch('GET', '/readyz?verbose', { anonymous: true });
    assert.match(verbose.text, /\[\+\]poststarthook\/storage-readiness ok/);
    const all = await t.fetch(
      'GET',
      '/api/v1/namespaces/bulk/secrets?resourceVersion=0&labelSelector=shard%3D3',
      {
        headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
      },
    );
    assert.equal(all.status, 200);
    assert.equal(all.json.items.length, SECRETS / 10);
    const w = await openWatch(
      t,
      '/api/v1/namespaces/bulk/secrets?watch=true&resourceVersion=' + all.json.metadata.resourceVersion,
    );
    assert.equal(w.status, 200);
    w.close();
  });

  it('measures a watch refusal under 50 ms while Pending', async () => {
    // Re-check the latency on its own, on a fresh server, without the other requests in flight.
    const hold = holdingSecretsCache();
    const fresh = await startTestServer({ seed: seedBulk, waitReady: false, openStorage: hold.openStorage });
    try {
      // Measure on an established connection: the TLS handshake is the client's cost, not the server's answer.
      await fresh.fetch('GET', '/version');
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await fresh.fetch('GET', '/api/v1/secrets?watch=true');
        times.push(performance.now() - started);
        assert.equal(res.status, 429, `request ${i} while initialising`);
      }
      // Within 50 ms as a rule; a loaded CI machine may stall one answer (GC, another test process), never hang it.
      const sorted = [...times].sort((a, b) => a - b);
      const report = `429s took ${times.map((t) => t.toFixed(1)).join(', ')} ms`;
      assert.ok(sorted[2] < 50, `median over 50 ms: ${report}`);
      assert.ok(sorted[4] < 250, `one answer took too long: ${report}`);
      assert.ok(hold.held(), 'the Secrets cache was Pending on its initial list');
    } finally {
      hold.release();
      await fresh.close();
    }
  });
});

for (const watchCache of [true, false]) {
  describe(`a watcher that falls behind (${watchCache ? 'watch cache' : 'storage'})`, () => {
    let t: TestServer;
    after(async () => {
      await t?.close();
    });

    it('gets 410 on resuming, and its relist yields exactly the current set', async () => {
      t = await startTestServer({ watchCache, maxHistory: 50 });
      await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'behind' } } });
      for (let i = 0; i < 10; i++) {
        await t.fetch('POST', '/api/v1/namespaces/behind/configmaps', {
          body: { metadata: { name: `c-${i}` } },
        });
      }
      const first = await t.fetch('GET', '/api/v1/namespaces/behind/configmaps');
      const seen = first.json.metadata.resourceVersion;
      // While the watcher is away: more changes than the history holds, and a compaction of storage.
      for (let i = 10; i < 80; i++) {
        await t.fetch('POST', '/api/v1/namespaces/behind/configmaps', {
          body: { metadata: { name: `c-${i}` } },
        });
      }
      for (let i = 0; i < 5; i++) await t.fetch('DELETE', `/api/v1/namespaces/behind/configmaps/c-${i}`);
      await t.server.storage.compact(await t.server.storage.currentRevision());

      const resumed = await openWatch(
        t,
        `/api/v1/namespaces/behind/configmaps?watch=true&resourceVersion=${seen}`,
      );
      const [event] = await resumed.waitFor(1);
      await resumed.ended;
      assert.equal(event.type, 'ERROR');
      assert.equal(event.object.code, 410);

      const relist = await t.fetch('GET', '/api/v1/namespaces/behind/configmaps');
      const names = relist.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
      const expected = Array.from({ length: 75 }, (_, i) => `c-${i + 5}`).sort();
      assert.deepEqual(names, expected);
      const fromStorage = await t.server.storage.range('/registry/core/configmaps/behind/', {});
      assert.deepEqual(
        relist.json.items.map((i: { metadata: { resourceVersion: string } }) => i.metadata.resourceVersion),
        fromStorage.kvs.map((kv) => String(kv.modRevision)),
      );
    });
  });
}

describe('a watcher that stops reading', () => {
  let t: TestServer;
  after(async () => {
    await t?.close();
  });

  it('is cut off once its buffer fills, while other watchers get every event', async () => {
    t = await startTestServer();
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'flood' } } });
    const rv = (await t.fetch('GET', '/api/v1/namespaces/flood/configmaps')).json.metadata.resourceVersion;
    const path = `/api/v1/namespaces/flood/configmaps?watch=true&resourceVersion=${rv}`;
    const stalled = await openWatch(t, path);
    stalled.pause();
    const reader = await openWatch(t, path);
    const store = t.server.registry.byResource('', 'configmaps')!;
    const cache = t.server.caches.cacheFor(store)!;
    assert.equal(cache.listenerCount, 2);

    // 600 events of 60 KiB: 36 MiB, far more than socket buffers and the server's 8 MiB per-watcher bound.
    const blob = 'x'.repeat(60 * 1024);
    for (let i = 0; i < 600; i++) {
      const res = await t.fetch('POST', '/api/v1/namespaces/flood/configmaps', {
        body: { metadata: { name: `big-${i}` }, data: { blob } },
      });
      assert.equal(res.status, 201);
    }
    await reader.waitFor(600, 30_000);
    assert.equal(cache.listenerCount, 1, 'the stalled watcher was cut off');
    reader.close();
    stalled.close();
  });
});

describe('a consistent watch-list on a quiet resource', () => {
  let t: TestServer;
  after(async () => {
    await t?.close();
  });

  it('is served at once: storage tells the cache it is current although only other resources changed', async () => {
    t = await startTestServer();
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'quiet' } } });
    await t.fetch('POST', '/api/v1/namespaces/quiet/configmaps', { body: { metadata: { name: 'only' } } });
    // Many writes to another resource move the global revision past the configmaps' last change.
    for (let i = 0; i < 20; i++) {
      await t.fetch('POST', '/api/v1/namespaces/quiet/secrets', { body: { metadata: { name: `s-${i}` } } });
    }
    const started = performance.now();
    const w = await openWatch(
      t,
      '/api/v1/namespaces/quiet/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    const [added, bookmark] = await w.waitFor(2);
    const ms = performance.now() - started;
    w.close();
    assert.equal(added.type, 'ADDED');
    assert.equal(bookmark.type, 'BOOKMARK');
    const current = await t.server.storage.currentRevision();
    assert.equal(
      bookmark.object.metadata.resourceVersion,
      String(current),
      'the bookmark is at the store’s revision',
    );
    assert.ok(ms < 1000, `served in ${ms.toFixed(0)} ms`);
  });
});
