import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SqliteStorage } from '../storage/sqlite.ts';
import { type CachedObject, WatchCache, type WatchCacheOptions } from './cache.ts';

/** The watch cache's history of events: what it keeps, and that what it dropped is gone from memory. */

const PREFIX = '/registry/things/';

const value = (name: string, generation: number) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Thing', metadata: { name, namespace: 'ns', generation } });

async function startedCache(options: WatchCacheOptions) {
  const storage = SqliteStorage.open(':memory:');
  const cache = new WatchCache(storage, PREFIX, options);
  cache.start();
  for (const deadline = Date.now() + 5000; !cache.ready.ready;) {
    if (Date.now() > deadline) throw new Error('the watch cache never became Ready');
    await new Promise((r) => setTimeout(r, 5));
  }
  const write = async (name: string, generation: number, expected?: number) => {
    const key = `${PREFIX}ns/${name}`;
    const revision =
      expected === undefined
        ? await storage.create(key, value(name, generation))
        : await storage.update(key, value(name, generation), expected);
    assert.ok(await cache.waitForRevision(revision, 5000), `the cache never saw revision ${revision}`);
    return revision;
  };
  return {
    cache,
    write,
    close: () => {
      cache.stop();
      return storage.close();
    },
  };
}

/** A full collection, for a test that asks whether something is still reachable. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('watch cache history', () => {
  const closers: (() => Promise<void>)[] = [];
  after(() => Promise.all(closers.map((close) => close())));

  it('drops events past the window after a burst, with no later write to trim it', async () => {
    const { cache, write, close } = await startedCache({ minHistory: 1, historyWindowMs: 50 });
    closers.push(close);
    const first = await write('a', 1);
    await write('b', 1);
    const last = await write('c', 1);
    assert.equal(cache.subscribe(first - 1, { event() {}, terminate() {} }), true);
    // The window (50 ms) and the trim's slack (1 s) pass without a write.
    for (const deadline = Date.now() + 5000; cache.oldestRevision < last - 1;) {
      assert.ok(Date.now() < deadline, `history still starts after ${cache.oldestRevision}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The minimum stays: a watch may still resume from the revision before the last event, not before.
    assert.equal(cache.oldestRevision, last - 1);
    assert.equal(cache.subscribe(first - 1, { event() {}, terminate() {} }), false);
    const replayed: number[] = [];
    assert.equal(
      cache.subscribe(last - 1, { event: (e) => replayed.push(e.revision), terminate() {} }),
      true,
    );
    assert.deepEqual(replayed, [last]);
  });

  it('keeps no version alive through an event it dropped', async () => {
    const { cache, write, close } = await startedCache({ minHistory: 1, maxHistory: 2 });
    closers.push(close);
    const created = await write('a', 1);
    let firstVersion: WeakRef<CachedObject> | undefined = new WeakRef(cache.get(`${PREFIX}ns/a`)!);
    // The update's event holds the first version as its previous state; four more events push both out.
    await write('a', 2, created);
    for (const name of ['b', 'c', 'd', 'e']) await write(name, 1);
    assert.ok(cache.oldestRevision > created + 1, 'both events of a left the history');
    for (let i = 0; i < 3 && firstVersion.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      collectGarbage();
    }
    assert.equal(firstVersion.deref(), undefined, 'a dropped event still holds the version it carried');
    firstVersion = undefined;
  });

  it('forgets the parse of a version once it is replaced, and parses it again when asked', async () => {
    const { cache, write, close } = await startedCache({});
    closers.push(close);
    const created = await write('a', 1);
    const first = cache.get(`${PREFIX}ns/a`)!;
    // A label selector parses the metadata of what it looks at, as the controllers' filtered watches do.
    let parsed: WeakRef<object> | undefined = new WeakRef(first.metadata);
    await write('a', 2, created);
    await new Promise((r) => setImmediate(r)); // the update's event is dispatched
    for (let i = 0; i < 3 && parsed.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      collectGarbage();
    }
    assert.equal(parsed.deref(), undefined, 'the replaced version keeps its parsed metadata');
    parsed = undefined;
    // The history still serves it, parsed anew.
    assert.equal(first.metadata.generation, 1);
    assert.equal(first.obj.metadata.resourceVersion, String(created));
    const replayed: { revision: number; previous?: CachedObject }[] = [];
    assert.equal(cache.subscribe(created, { event: (e) => replayed.push(e), terminate() {} }), true);
    assert.equal(replayed[0].previous?.metadata.generation, 1);
  });
});
