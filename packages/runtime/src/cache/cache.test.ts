import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isNotFound, isTimeout } from '@certkit/apimachinery';
import type { ReadMode, ResourceRef } from '../client/types.ts';
import { silentLogger } from '../log.ts';
import { eventually } from '@certkit/testenv/eventually';
import { FakeResourceClient } from '@certkit/testenv/fake/resource-client';
import { Cache, type CacheOptions } from './cache.ts';
import { ErrCacheNotStarted, ErrResourceNotCached, isCacheNotStarted } from './errors.ts';

/**
 * Cache behaviours that need a server that never syncs, or exact control over timing: the fake client.
 * Everything else runs against the real API server in cache.e2e.test.ts.
 */

const refs: Record<string, ResourceRef> = {
  'v1/ConfigMap': { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  'v1/Namespace': { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
};

function fakeServer(options: { neverSync?: boolean } = {}) {
  const clients = new Map<string, FakeResourceClient>();
  return {
    clients,
    async forKind(apiVersion: string, kind: string, mode: ReadMode = 'full') {
      const ref = refs[`${apiVersion}/${kind}`];
      if (!ref) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
      const key = `${apiVersion}/${kind}|${mode}`;
      let client = clients.get(key);
      if (!client) {
        client = new FakeResourceClient({ ref, mode });
        if (options.neverSync) {
          const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          client.onList = refused;
          client.onWatch = refused;
        }
        clients.set(key, client);
      }
      return client;
    },
  };
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

async function newCache(options: Partial<CacheOptions> & Pick<CacheOptions, 'client'>): Promise<Cache> {
  return Cache.create({ log: silentLogger, backoff: { initialMs: 5, capMs: 20, jitter: 0 }, ...options });
}

function startCache(cache: Cache): AbortController {
  const c = new AbortController();
  controllers.push(c);
  void cache.start(c.signal);
  return c;
}

describe('Cache (unit)', () => {
  it('reads before start fail with ErrCacheNotStarted, and the informer starts with the cache', async () => {
    const server = fakeServer();
    const cache = await newCache({ client: server });
    await assert.rejects(cache.get('v1', 'ConfigMap', { namespace: 'ns', name: 'x' }), (err: unknown) => {
      assert.ok(err instanceof ErrCacheNotStarted);
      assert.equal((err as Error).message, 'the cache is not started, can not read objects');
      return true;
    });
    await assert.rejects(cache.list('v1', 'ConfigMap'), isCacheNotStarted);
    startCache(cache);
    assert.equal(await cache.waitForCacheSync(), true);
    assert.equal(server.clients.get('v1/ConfigMap|full')!.watchCalls.length, 1);
  });

  it('errors when starting the cache a second time', async () => {
    const cache = await newCache({ client: fakeServer() });
    const c = startCache(cache);
    await assert.rejects(cache.start(c.signal), { message: 'informer already started' });
  });

  it('gets an informer without blocking, and WaitForCacheSync is true with no informers (NonBlockingGetTest)', async () => {
    const cache = await newCache({ client: fakeServer({ neverSync: true }) });
    startCache(cache);
    assert.equal(await cache.waitForCacheSync(), true);
    const informer = await cache.getInformer('v1', 'ConfigMap', { blockUntilSynced: false });
    assert.equal(informer.hasSynced(), false);
  });

  it('reads wait for the sync and time out with a 504 when their signal aborts (TestReaderWaitsForCacheSync)', async () => {
    for (const readerFailOnMissingInformer of [false, true]) {
      const server = fakeServer({ neverSync: true });
      const cache = await newCache({ client: server, readerFailOnMissingInformer });
      await cache.getInformer('v1', 'ConfigMap');
      startCache(cache);
      await assert.rejects(cache.list('v1', 'ConfigMap', { signal: AbortSignal.timeout(100) }), (err) => {
        assert.ok(isTimeout(err));
        assert.equal((err as Error).message, 'Timeout: failed waiting for *v1.ConfigMap Informer to sync');
        assert.equal((err as { code?: number }).code, 504);
        return true;
      });
      await assert.rejects(
        cache.get('v1', 'ConfigMap', { namespace: 'ns', name: 'x' }, { signal: AbortSignal.timeout(100) }),
        isTimeout,
      );
      // Let it sync: the list succeeds and a missing object is NotFound.
      const client = server.clients.get('v1/ConfigMap|full')!;
      client.onList = undefined;
      client.onWatch = undefined;
      assert.deepEqual(
        (await cache.list('v1', 'ConfigMap', { signal: AbortSignal.timeout(5000) })).items,
        [],
      );
      await assert.rejects(cache.get('v1', 'ConfigMap', { namespace: 'ns', name: 'x' }), (err) => {
        assert.ok(isNotFound(err));
        assert.equal((err as Error).message, 'ConfigMap "x" not found');
        return true;
      });
    }
  });

  it('getInformer times out (504) on a cancelled signal', async () => {
    const cache = await newCache({ client: fakeServer({ neverSync: true }) });
    startCache(cache);
    await assert.rejects(
      cache.getInformer('v1', 'ConfigMap', { signal: AbortSignal.timeout(50), mode: 'metadata' }),
      { message: 'Timeout: failed waiting for *v1.PartialObjectMetadata Informer to sync' },
    );
  });

  it('indexField never blocks, before or after start (TestIndexFieldDoesNotBlock)', async () => {
    const cache = await newCache({ client: fakeServer({ neverSync: true }) });
    await cache.indexField('v1', 'ConfigMap', 'data.k', () => []);
    startCache(cache);
    const started = Date.now();
    await cache.indexField('v1', 'ConfigMap', 'data.other', () => []);
    assert.ok(Date.now() - started < 500);
    await assert.rejects(
      cache.indexField('v1', 'ConfigMap', 'data.k', () => []),
      {
        message: 'indexer conflict: field:data.k',
      },
    );
  });

  it('readerFailOnMissingInformer: reads fail with ErrResourceNotCached until an informer exists', async () => {
    const cache = await newCache({ client: fakeServer(), readerFailOnMissingInformer: true });
    startCache(cache);
    await assert.rejects(cache.list('v1', 'ConfigMap'), (err) => {
      assert.ok(err instanceof ErrResourceNotCached);
      assert.equal((err as Error).message, '/v1, Kind=ConfigMap is not cached');
      return true;
    });
    await assert.rejects(cache.get('v1', 'Namespace', 'default'), ErrResourceNotCached);
    await cache.getInformer('v1', 'ConfigMap');
    assert.deepEqual((await cache.list('v1', 'ConfigMap')).items, []);
    // Metadata reads are a separate informer.
    await assert.rejects(cache.list('v1', 'ConfigMap', { mode: 'metadata' }), ErrResourceNotCached);
  });

  it('removeInformer stops the informer; the next read starts a fresh one', async () => {
    const server = fakeServer();
    const cache = await newCache({ client: server });
    startCache(cache);
    const old = await cache.getInformer('v1', 'ConfigMap');
    await cache.removeInformer('v1', 'ConfigMap');
    await eventually(() => old.isStopped(), 'old informer stopped');
    const fresh = await cache.getInformer('v1', 'ConfigMap');
    assert.notEqual(fresh, old);
    assert.equal(fresh.hasSynced(), true);
    assert.equal(fresh.isStopped(), false);
  });

  it('waitForCacheSync waits for start, and gives false when its signal aborts first', async () => {
    const cache = await newCache({ client: fakeServer() });
    assert.equal(await cache.waitForCacheSync(AbortSignal.timeout(30)), false);
    const waiting = cache.waitForCacheSync();
    startCache(cache);
    assert.equal(await waiting, true);
  });

  it('start() resolves once its signal aborts and every informer stopped', async () => {
    const cache = await newCache({ client: fakeServer() });
    const c = new AbortController();
    const running = cache.start(c.signal);
    const informer = await cache.getInformer('v1', 'ConfigMap');
    c.abort();
    await running;
    assert.equal(informer.isStopped(), true);
  });

  it('propagates discovery errors', async () => {
    const cache = await newCache({ client: fakeServer() });
    await assert.rejects(cache.list('example.com/v1', 'Nope'), /no matches for kind "Nope"/);
  });
});
