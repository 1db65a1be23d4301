import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { type KubeObject, newExpired, newTooManyRequests, StatusError } from '@certkit/apimachinery';
import { Backoff } from './backoff.ts';
import { silentLogger } from '../log.ts';
import { Reflector, type ReflectorOptions, type ReflectorStore, WatchListSupport } from './reflector.ts';
import { objectKey } from './store.ts';
import { eventually } from '@certkit/testenv/eventually';
import { FakeResourceClient } from '@certkit/testenv/fake/resource-client';

/** A store that records what the reflector told it. */
class RecordingStore implements ReflectorStore {
  readonly items = new Map<string, KubeObject>();
  readonly ops: string[] = [];
  replaces = 0;
  lastReplaceRv = '';

  replace(items: Iterable<KubeObject>, rv: string): void {
    this.items.clear();
    for (const o of items) this.items.set(objectKey(o), o);
    this.replaces++;
    this.lastReplaceRv = rv;
    this.ops.push(`replace:${rv}`);
  }
  add(obj: KubeObject): void {
    this.items.set(objectKey(obj), obj);
    this.ops.push(`add:${objectKey(obj)}`);
  }
  update(obj: KubeObject): void {
    this.items.set(objectKey(obj), obj);
    this.ops.push(`update:${objectKey(obj)}`);
  }
  delete(obj: KubeObject): void {
    this.items.delete(objectKey(obj));
    this.ops.push(`delete:${objectKey(obj)}`);
  }

  rvs(): Record<string, string> {
    return Object.fromEntries([...this.items].map(([k, o]) => [k, o.metadata?.resourceVersion ?? '']));
  }
}

const cm = (name: string, data: Record<string, string> = {}, namespace = 'ns'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name },
  data,
});

const fastBackoff = { initialMs: 5, capMs: 20, jitter: 0 };

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function start(
  client: FakeResourceClient,
  extra: Partial<ReflectorOptions> = {},
): { reflector: Reflector; store: RecordingStore; done: Promise<void>; stop: () => void } {
  const store = new RecordingStore();
  const reflector = new Reflector({ client, store, backoff: fastBackoff, log: silentLogger, ...extra });
  const controller = new AbortController();
  controllers.push(controller);
  const done = reflector.run(controller.signal);
  return { reflector, store, done, stop: () => controller.abort() };
}

function serverRvs(client: FakeResourceClient): Record<string, string> {
  return Object.fromEntries([...client.objects].map(([k, o]) => [k, o.metadata?.resourceVersion ?? '']));
}

describe('Reflector', () => {
  it('syncs with a watch-list when the server supports it, then keeps the same stream', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    client.put(cm('b'));
    const { reflector, store } = start(client);
    await eventually(() => reflector.hasSynced(), 'sync');
    assert.equal(client.listCalls.length, 0);
    assert.equal(client.watchCalls.length, 1);
    const request = client.watchCalls[0];
    assert.equal(request.sendInitialEvents, true);
    assert.equal(request.allowWatchBookmarks, true);
    assert.equal(request.resourceVersionMatch, 'NotOlderThan');
    assert.equal(request.resourceVersion, '0', 'any RV, as the LIST path asks');
    assert.deepEqual(store.rvs(), serverRvs(client));
    assert.equal(reflector.lastSyncResourceVersion, client.resourceVersion);

    client.put(cm('c'));
    await eventually(() => store.items.has('ns/c'), 'the add on the same stream');
    assert.equal(client.watchCalls.length, 1);
    assert.equal(reflector.lastSyncResourceVersion, client.resourceVersion);
  });

  it('falls back to LIST when the server refuses watch-list with a 4xx, and remembers it per server', async () => {
    const client = new FakeResourceClient({ supportsWatchList: false });
    client.put(cm('a'));
    const support = new WatchListSupport();
    const first = start(client, { watchListSupport: support });
    await eventually(() => first.reflector.hasSynced(), 'sync');
    assert.equal(support.known, false);
    assert.equal(client.listCalls.length, 1);
    assert.equal(client.watchCalls.filter((w) => w.sendInitialEvents).length, 1);

    const second = start(client, { watchListSupport: support });
    await eventually(() => second.reflector.hasSynced(), 'second sync');
    // The second reflector did not even try.
    assert.equal(client.watchCalls.filter((w) => w.sendInitialEvents).length, 1);
    assert.deepEqual(second.store.rvs(), serverRvs(client));
  });

  it('lists in pages of 500 at RV "0", transforming each item before the next one is decoded', async () => {
    const client = new FakeResourceClient({ paginateAtZero: true });
    for (let i = 0; i < 1203; i++) client.put(cm(`cm-${String(i).padStart(4, '0')}`));
    const order: string[] = [];
    const original = client.listEach.bind(client);
    client.listEach = (ns, options, onItem) =>
      original(ns, options, (item) => {
        order.push(`decode:${item.metadata?.name}`);
        onItem(item);
      });
    const { reflector, store } = start(client, {
      useWatchList: false,
      transform: (o) => {
        order.push(`transform:${o.metadata?.name}`);
        delete o.data;
        return o;
      },
    });
    await eventually(() => reflector.hasSynced(), 'sync');
    assert.deepEqual(
      client.listCalls.map((c) => [c.resourceVersion, c.limit, c.continue !== undefined]),
      [
        ['0', 500, false],
        [undefined, 500, true],
        [undefined, 500, true],
      ],
    );
    assert.equal(store.items.size, 1203);
    assert.deepEqual(order.slice(0, 4), [
      'decode:cm-0000',
      'transform:cm-0000',
      'decode:cm-0001',
      'transform:cm-0001',
    ]);
    assert.ok([...store.items.values()].every((o) => o.data === undefined));
  });

  it('watches from the list RV with bookmarks and a timeout in [300, 600) s', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { reflector } = start(client, { useWatchList: false });
    await eventually(() => client.watchCalls.length === 1, 'watch');
    const w = client.watchCalls[0];
    assert.equal(w.resourceVersion, reflector.lastSyncResourceVersion);
    assert.equal(w.allowWatchBookmarks, true);
    assert.ok(w.timeoutSeconds! >= 300 && w.timeoutSeconds! < 600, String(w.timeoutSeconds));
    assert.equal(w.sendInitialEvents, undefined);
  });

  it('applies watch events, and bookmarks only advance the RV', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { reflector, store } = start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.put(cm('b'));
    client.put(cm('a', { x: '1' }));
    client.remove('ns', 'b');
    await eventually(() => store.ops.length === 4, 'events');
    assert.deepEqual(store.ops.slice(1), ['add:ns/b', 'update:ns/a', 'delete:ns/b']);
    const before = store.ops.length;
    client.put(cm('other', {}, 'elsewhere'));
    client.remove('elsewhere', 'other');
    client.bookmark();
    await eventually(() => reflector.lastSyncResourceVersion === client.resourceVersion, 'bookmark RV');
    assert.equal(store.ops.length, before + 2);
  });

  it('re-watches from the last RV after a clean end, without relisting', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { reflector, store } = start(client, { useWatchList: false, shortWatchMs: 0 });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.put(cm('b'));
    await eventually(() => store.items.has('ns/b'), 'b');
    const rv = reflector.lastSyncResourceVersion;
    client.endWatches();
    await eventually(() => client.watchCalls.length === 2, 're-watch');
    assert.equal(client.watchCalls[1].resourceVersion, rv);
    assert.equal(client.listCalls.length, 1);
  });

  it('relists after a 410 ERROR event during the watch', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { store } = start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.errorWatches(newExpired('too old resource version: 1 (2)').status);
    await eventually(() => client.listCalls.length === 2, 'relist');
    assert.equal(store.replaces, 2);
  });

  it('relists after a 410 at watch start, and lists at RV "" after an Expired list', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { reflector, store } = start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    const listedAt = client.resourceVersion;
    // Miss events while disconnected, then lose the history they were in.
    client.onWatch = () =>
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    client.breakWatches(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    client.put(cm('b'));
    client.remove('ns', 'a');
    client.compact();
    client.onWatch = undefined;
    await eventually(() => reflector.lastSyncResourceVersion === client.resourceVersion, 'resync');
    await eventually(() => JSON.stringify(store.rvs()) === JSON.stringify(serverRvs(client)), 'convergence');
    const relists = client.listCalls.slice(1).map((c) => c.resourceVersion);
    // The relist at the old RV was refused (410), so the reflector asked for the latest state.
    assert.deepEqual(relists, [listedAt, '']);
  });

  it('backs off and re-watches without relisting on 429 at watch start', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    client.onWatch = (_o, i) => (i < 5 ? newTooManyRequests('slow down', 0) : undefined);
    const { store } = start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    assert.equal(client.listCalls.length, 1);
    assert.equal(client.watchCalls.length, 6);
    client.put(cm('b'));
    await eventually(() => store.items.has('ns/b'), 'b');
  });

  it('backs off and re-watches without relisting when the connection is refused', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { store } = start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.put(cm('before'));
    await eventually(() => store.items.has('ns/before'), 'an event on the first watch');
    client.onWatch = (_o, i) =>
      i < 4
        ? Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
        : undefined;
    client.breakWatches(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    client.put(cm('b'));
    await eventually(() => store.items.has('ns/b'), 'b after reconnect');
    assert.equal(client.listCalls.length, 1);
  });

  it('treats a watch that closes within 1 s without events as a failure (backoff + relist)', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.endWatches();
    await eventually(() => client.listCalls.length === 2, 'relist');
  });

  it('honours Retry-After as the least backoff for a 429', async () => {
    const client = new FakeResourceClient();
    client.onWatch = (_o, i) => (i === 0 ? newTooManyRequests('slow down', 1) : undefined);
    const started = Date.now();
    start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch', 3000);
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);
  });

  it('relists through a watch-list again after a 410 during the watch', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { store } = start(client);
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.errorWatches(newExpired('gone').status);
    client.put(cm('b'));
    await eventually(() => store.replaces === 2, 'second watch-list');
    assert.deepEqual(store.rvs(), serverRvs(client));
    assert.equal(client.listCalls.length, 0);
  });

  it('falls back to LIST when a watch-list never sends its end bookmark', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    // A server that ignores sendInitialEvents: a plain watch, no bookmark.
    const original = client.watch.bind(client);
    client.watch = (ns, options) => original(ns, { ...options, allowWatchBookmarks: false });
    const support = new WatchListSupport();
    const { reflector, store } = start(client, { watchListIdleMs: 50, watchListSupport: support });
    await eventually(() => reflector.hasSynced(), 'sync');
    assert.equal(client.listCalls.length, 1);
    assert.equal(support.known, false);
    assert.deepEqual(store.rvs(), serverRvs(client));
  });

  it('stops promptly when its signal aborts', async () => {
    const client = new FakeResourceClient();
    const { done, stop } = start(client);
    await eventually(() => client.openWatches.length === 1, 'watch');
    stop();
    await done;
    assert.equal(client.openWatches.length, 0);
  });

  it('propagates a StatusError from an ERROR event that is not a 410 (then relists)', async () => {
    const client = new FakeResourceClient();
    start(client, { useWatchList: false });
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.errorWatches(
      new StatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        code: 500,
        reason: 'InternalError',
        message: 'boom',
      }).status,
    );
    await eventually(() => client.listCalls.length === 2, 'relist');
  });
});

describe('Backoff', () => {
  it('doubles from 800 ms to a 30 s cap with jitter in [d, 2d)', () => {
    let r = 0;
    const b = new Backoff({ random: () => r, now: () => 0 });
    const base = Array.from({ length: 8 }, () => b.next());
    assert.deepEqual(base, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    r = 0.999;
    const jittered = new Backoff({ random: () => r, now: () => 0 }).next();
    assert.ok(jittered >= 800 && jittered < 1600);
  });

  it('resets after 2 minutes without a step', () => {
    let now = 0;
    const b = new Backoff({ jitter: 0, now: () => now });
    b.next();
    b.next();
    now += 60_000;
    assert.equal(b.next(), 3200);
    now += 120_001;
    assert.equal(b.next(), 800);
  });
});
