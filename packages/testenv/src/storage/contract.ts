/**
 * The storage contract, written once and run against every backend (see sqlite.e2e.test.ts):
 *
 *   runStorageContract('sqlite', async () => ({ storage, reopen, cleanup }));
 *   runStorageContract('sqlite :memory:', async () => ({ storage, cleanup }), { volatile: true });
 *
 * Prefixes are plain string prefixes: range('/a/b') also returns '/a/bc'. Callers that mean "the children of
 * /a/b" pass '/a/b/', which is what the registry does for every resource and namespace.
 */

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setImmediate, setTimeout } from 'node:timers/promises';
import { eventually } from '../eventually.ts';
import {
  CompactedError,
  ConflictError,
  KeyExistsError,
  type KeyValue,
  NotFoundError,
  type Storage,
  StorageError,
  type StorageEvent,
  UnavailableError,
  type WatchListener,
} from '@certkit/apiserver/storage/types';

export interface StorageFixture {
  /** A fresh, empty store. */
  storage: Storage;
  /** Closes the store and opens the same data again (for durability tests); absent for volatile stores. */
  reopen?: () => Promise<Storage>;
  /** Releases everything; the storage may already have been closed (or reopened) by the test. */
  cleanup(): Promise<void>;
}

type Body = (storage: Storage, fixture: StorageFixture, t: TestContext) => Promise<void>;

const TIMEOUT_MS = 30_000;

/** Long enough for a wrongly delivered event to show up. */
function settle(): Promise<void> {
  return setTimeout(50);
}

class Recorder implements WatchListener {
  readonly events: StorageEvent[] = [];
  readonly errors: Error[] = [];
  /** Problems seen inside callbacks; asserted from the test, since throwing in a listener would end the watch. */
  readonly violations: string[] = [];
  onEvent: ((event: StorageEvent) => void) | undefined;
  #depth = 0;

  event(event: StorageEvent): void {
    if (this.errors.length > 0) this.violations.push(`event after error: ${event.revision}`);
    this.#depth++;
    if (this.#depth > 1) this.violations.push(`overlapping listener calls at ${event.revision}`);
    this.events.push(event);
    this.onEvent?.(event);
    this.#depth--;
  }

  error(err: Error): void {
    this.errors.push(err);
  }

  revisions(): number[] {
    return this.events.map((e) => e.revision);
  }

  async waitForEvents(n: number): Promise<void> {
    // Polled rather than hooked to the listener, so the assertions don't depend on how a backend batches deliveries.
    await eventually(() => this.events.length >= n || this.errors.length > 0, `${n} events`, 10_000, 2);
    assert.deepEqual(this.errors, [], 'unexpected watch error');
  }

  async waitForError(): Promise<Error> {
    await eventually(() => this.errors.length > 0, 'a watch error', 10_000, 2);
    return this.errors[0];
  }
}

/** Drops an absent prevValue however the backend spells it, so events compare structurally. */
function normalize(event: StorageEvent): StorageEvent {
  const out: StorageEvent = {
    type: event.type,
    key: event.key,
    value: event.value,
    revision: event.revision,
    createRevision: event.createRevision,
    created: event.created,
  };
  if (event.prevValue !== undefined) out.prevValue = event.prevValue;
  return out;
}

/** Records writes and the events they must produce, for comparing with what a watch delivers. */
class Writer {
  readonly storage: Storage;
  readonly expected: StorageEvent[] = [];
  readonly #current = new Map<string, KeyValue>();

  constructor(storage: Storage) {
    this.storage = storage;
  }

  async create(key: string, value: string): Promise<number> {
    const revision = await this.storage.create(key, value);
    this.#current.set(key, { key, value, modRevision: revision, createRevision: revision });
    this.expected.push({ type: 'PUT', key, value, revision, createRevision: revision, created: true });
    return revision;
  }

  async update(key: string, value: string): Promise<number> {
    const prev = this.#current.get(key)!;
    const revision = await this.storage.update(key, value, prev.modRevision);
    this.#current.set(key, { key, value, modRevision: revision, createRevision: prev.createRevision });
    this.expected.push({
      type: 'PUT',
      key,
      value,
      revision,
      createRevision: prev.createRevision,
      prevValue: prev.value,
      created: false,
    });
    return revision;
  }

  async delete(key: string): Promise<number> {
    const prev = this.#current.get(key)!;
    const { revision } = await this.storage.delete(key, prev.modRevision);
    this.#current.delete(key);
    this.expected.push({
      type: 'DELETE',
      key,
      value: prev.value,
      revision,
      createRevision: prev.createRevision,
      prevValue: prev.value,
      created: false,
    });
    return revision;
  }

  /** A mix of creates, updates, deletes and re-creates over several keys, two namespaces and two resources. */
  async churn(round: number, keysPerNamespace = 5): Promise<void> {
    for (const ns of ['default', 'kube-system']) {
      for (let i = 0; i < keysPerNamespace; i++) {
        const key = `/registry/secrets/${ns}/s${i}`;
        const value = JSON.stringify({ kind: 'Secret', ns, i, round });
        if (!this.#current.has(key)) await this.create(key, value);
        else if ((i + round) % 3 === 0) await this.delete(key);
        else await this.update(key, value);
      }
      await this.create(`/registry/configmaps/${ns}/c${round}`, JSON.stringify({ kind: 'ConfigMap', round }));
    }
  }
}

function secret(name: string, data = 'x'): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { v: data } });
}

function keysOf(kvs: KeyValue[]): string[] {
  return kvs.map((kv) => kv.key);
}

/**
 * `volatile`: the store lives in memory and cannot be reopened, so the durability cases are not registered
 * for it (rather than registered and skipped).
 */
export function runStorageContract(
  name: string,
  factory: () => Promise<StorageFixture>,
  { volatile = false }: { volatile?: boolean } = {},
): void {
  const test = (title: string, body: Body): void => {
    it(title, { timeout: TIMEOUT_MS }, async (t) => {
      const fixture = await factory();
      try {
        await body(fixture.storage, fixture, t);
      } finally {
        await fixture.cleanup();
      }
    });
  };

  describe(`storage contract: ${name}`, () => {
    describe('revisions and writes', () => {
      test('a fresh store has a positive revision and nothing compacted past it', async (s) => {
        const current = await s.currentRevision();
        // Revision 0 would read as Kubernetes' resourceVersion "0" ("any"), so an empty store starts above it.
        assert.ok(current >= 1, `current revision ${current}`);
        assert.ok((await s.compactedRevision()) <= current);
        assert.deepEqual((await s.range('/registry/')).kvs, []);
      });

      test('every write takes the next global revision, across keys', async (s) => {
        const start = await s.currentRevision();
        const revisions = [
          await s.create('/registry/secrets/default/a', secret('a')),
          await s.create('/registry/configmaps/default/b', '{}'),
        ];
        revisions.push(await s.update('/registry/secrets/default/a', secret('a', 'y'), revisions[0]));
        revisions.push((await s.delete('/registry/configmaps/default/b')).revision);
        revisions.push(await s.create('/registry/pods/kube-system/c', '{}'));
        assert.deepEqual(revisions, [start + 1, start + 2, start + 3, start + 4, start + 5]);
        assert.equal(await s.currentRevision(), start + 5);
      });

      test('create returns the revision that get then reports as mod and create revision', async (s) => {
        const key = '/registry/secrets/default/tls';
        const revision = await s.create(key, secret('tls'));
        assert.deepEqual(await s.get(key), {
          key,
          value: secret('tls'),
          modRevision: revision,
          createRevision: revision,
        });
        assert.equal(await s.get('/registry/secrets/default/other'), undefined);
      });

      test('create of an existing key fails with KeyExistsError', async (s) => {
        const key = '/registry/secrets/default/tls';
        const revision = await s.create(key, secret('tls'));
        await assert.rejects(s.create(key, secret('tls', 'other')), (err) => {
          assert.ok(err instanceof KeyExistsError);
          assert.equal(err.key, key);
          return true;
        });
        assert.equal((await s.get(key))?.value, secret('tls'));
        assert.equal(await s.currentRevision(), revision, 'a failed write takes no revision');
      });

      test('update is guarded by the mod revision', async (s) => {
        const key = '/registry/secrets/default/tls';
        const created = await s.create(key, secret('tls', '1'));
        const updated = await s.update(key, secret('tls', '2'), created);
        assert.ok(updated > created);
        assert.deepEqual(await s.get(key), {
          key,
          value: secret('tls', '2'),
          modRevision: updated,
          createRevision: created,
        });

        await assert.rejects(s.update(key, secret('tls', '3'), created), (err) => {
          assert.ok(err instanceof ConflictError);
          assert.equal(err.key, key);
          assert.deepEqual(err.current, {
            key,
            value: secret('tls', '2'),
            modRevision: updated,
            createRevision: created,
          });
          return true;
        });
        assert.equal((await s.get(key))?.value, secret('tls', '2'));

        await assert.rejects(s.update('/registry/secrets/default/missing', '{}', updated), NotFoundError);
        assert.equal(await s.currentRevision(), updated, 'failed writes take no revision');
      });

      test('an update that changes nothing still writes a revision (skipping it is the caller’s business)', async (s) => {
        const key = '/registry/secrets/default/tls';
        const created = await s.create(key, secret('tls'));
        const updated = await s.update(key, secret('tls'), created);
        assert.equal(updated, created + 1);
        assert.equal((await s.get(key))?.modRevision, updated);
      });

      test('delete, guarded and unguarded', async (s) => {
        const a = '/registry/secrets/default/a';
        const b = '/registry/secrets/default/b';
        const ra = await s.create(a, secret('a'));
        const rb = await s.create(b, secret('b'));

        await assert.rejects(s.delete(a, ra - 1), (err) => {
          assert.ok(err instanceof ConflictError);
          assert.deepEqual(err.current, { key: a, value: secret('a'), modRevision: ra, createRevision: ra });
          return true;
        });
        assert.ok(await s.get(a), 'a conflicting delete leaves the key');

        const guarded = await s.delete(a, ra);
        assert.equal(guarded.revision, rb + 1);
        assert.deepEqual(guarded.prev, { key: a, value: secret('a'), modRevision: ra, createRevision: ra });

        const unguarded = await s.delete(b);
        assert.equal(unguarded.revision, rb + 2);
        assert.deepEqual(unguarded.prev, { key: b, value: secret('b'), modRevision: rb, createRevision: rb });

        assert.equal(await s.get(a), undefined);
        assert.equal(await s.get(b), undefined);
        assert.deepEqual((await s.range('/registry/secrets/')).kvs, []);

        await assert.rejects(s.delete(a), NotFoundError);
        await assert.rejects(s.delete(b, unguarded.revision), NotFoundError);
        await assert.rejects(s.delete('/registry/secrets/default/never'), NotFoundError);
        await assert.rejects(s.update(a, secret('a'), guarded.revision), NotFoundError);
        assert.equal(await s.currentRevision(), rb + 2);
      });

      test('a key re-created after deletion gets a new create revision', async (s) => {
        const key = '/registry/secrets/default/tls';
        const first = await s.create(key, secret('tls', '1'));
        await s.delete(key);
        const second = await s.create(key, secret('tls', '2'));
        assert.equal(second, first + 2);
        assert.deepEqual(await s.get(key), {
          key,
          value: secret('tls', '2'),
          modRevision: second,
          createRevision: second,
        });
        const third = await s.update(key, secret('tls', '3'), second);
        assert.equal((await s.get(key))?.createRevision, second);
        assert.equal((await s.get(key))?.modRevision, third);
      });
    });

    describe('range', () => {
      test('returns the keys under a prefix, sorted, at the current revision', async (s) => {
        const names = ['web-2', 'api', 'web-10', 'db', 'web-1', 'a.b', 'a-b', 'Z'];
        for (const n of names) await s.create(`/registry/secrets/default/${n}`, secret(n));
        await s.create('/registry/secrets/other/x', secret('x'));
        const current = await s.currentRevision();
        const result = await s.range('/registry/secrets/default/');
        // Byte order, as etcd sorts: 'Z' < 'a-b' < 'a.b' < 'api', 'web-1' < 'web-10' < 'web-2'.
        assert.deepEqual(
          keysOf(result.kvs),
          ['Z', 'a-b', 'a.b', 'api', 'db', 'web-1', 'web-10', 'web-2'].map(
            (n) => `/registry/secrets/default/${n}`,
          ),
        );
        assert.equal(result.revision, current);
        assert.equal(result.more, false);
        const api = result.kvs.find((kv) => kv.key.endsWith('/api'))!;
        assert.equal(api.value, secret('api'));
        assert.equal(api.modRevision, api.createRevision);
      });

      test('rangeBytes: the same keys, revisions and more as range, values as their UTF-8 bytes', async (s) => {
        const values = ['{"a":"plain"}', '{"b":"é ✓ 漢字 \\u0000 \\"q\\""}', '{}'];
        for (const [i, v] of values.entries()) await s.create(`/registry/configmaps/ns/c${i}`, v);
        await s.update(
          '/registry/configmaps/ns/c0',
          '{"a":"changed ✓"}',
          (await s.get('/registry/configmaps/ns/c0'))!.modRevision,
        );
        for (const options of [{}, { limit: 2 }, { startKey: '/registry/configmaps/ns/c1', limit: 1 }]) {
          const text = await s.range('/registry/configmaps/ns/', options);
          const bytes = await s.rangeBytes('/registry/configmaps/ns/', options);
          assert.equal(bytes.revision, text.revision);
          assert.equal(bytes.more, text.more);
          assert.deepEqual(
            bytes.kvs.map((kv) => ({ ...kv, value: Buffer.from(kv.value).toString('utf8') })),
            text.kvs,
          );
          for (const kv of bytes.kvs) assert.ok(kv.value instanceof Uint8Array);
        }
        const old = await s.rangeBytes('/registry/configmaps/ns/', {
          revision: (await s.currentRevision()) - 1,
        });
        assert.equal(Buffer.from(old.kvs[0].value).toString('utf8'), '{"a":"plain"}');
      });

      test('a prefix is a plain string prefix: callers end it with "/" to mean children', async (s) => {
        for (const key of ['/a/b', '/a/b/c', '/a/bc', '/a/c', '/a/b/d/e', '/b/b/c'])
          await s.create(key, '{}');
        assert.deepEqual(keysOf((await s.range('/a/b')).kvs), ['/a/b', '/a/b/c', '/a/b/d/e', '/a/bc']);
        assert.deepEqual(keysOf((await s.range('/a/b/')).kvs), ['/a/b/c', '/a/b/d/e']);
        assert.deepEqual(keysOf((await s.range('/a/b/d/')).kvs), ['/a/b/d/e']);
        assert.deepEqual(keysOf((await s.range('/a/x/')).kvs), []);

        await s.create('/registry/secrets/ns/a', '{}');
        await s.create('/registry/secrets/ns2/b', '{}');
        await s.create('/registry/secretsx/ns/c', '{}');
        assert.deepEqual(keysOf((await s.range('/registry/secrets/ns/')).kvs), ['/registry/secrets/ns/a']);
        assert.deepEqual(keysOf((await s.range('/registry/secrets/')).kvs), [
          '/registry/secrets/ns/a',
          '/registry/secrets/ns2/b',
        ]);
      });

      test('limit, more and count', async (s) => {
        const keys: string[] = [];
        for (let i = 0; i < 25; i++) keys.push(`/registry/secrets/default/s${String(i).padStart(2, '0')}`);
        for (const key of [...keys].reverse()) await s.create(key, secret(key));
        await s.create('/registry/secrets/other/s00', '{}');

        let r = await s.range('/registry/secrets/default/', { limit: 10, count: true });
        assert.deepEqual(keysOf(r.kvs), keys.slice(0, 10));
        assert.equal(r.more, true);
        assert.equal(r.count, 25);

        r = await s.range('/registry/secrets/default/', { limit: 10, startKey: keys[10], count: true });
        assert.deepEqual(keysOf(r.kvs), keys.slice(10, 20));
        assert.equal(r.more, true);
        assert.equal(r.count, 15, 'count runs from startKey');

        r = await s.range('/registry/secrets/default/', { limit: 10, startKey: keys[20], count: true });
        assert.deepEqual(keysOf(r.kvs), keys.slice(20));
        assert.equal(r.more, false);
        assert.equal(r.count, 5);

        r = await s.range('/registry/secrets/default/', { limit: 25 });
        assert.equal(r.kvs.length, 25);
        assert.equal(r.more, false, 'exactly limit keys left is not "more"');

        r = await s.range('/registry/secrets/default/', { limit: 0, count: true });
        assert.equal(r.kvs.length, 25);
        assert.equal(r.more, false);
        assert.equal(r.count, 25);

        r = await s.range('/registry/secrets/default/', { limit: 1 });
        assert.equal(r.count, undefined, 'count only when asked');
      });

      test('paging with startKey at a fixed revision returns every key exactly once', async (s) => {
        const prefix = '/registry/configmaps/default/';
        const original = new Map<string, string>();
        for (let i = 0; i < 103; i++) {
          const key = `${prefix}cm-${(i * 7919) % 1000}`;
          original.set(key, `{"i":${i}}`);
          await s.create(key, `{"i":${i}}`);
        }
        const seen: KeyValue[] = [];
        let startKey: string | undefined;
        let revision = 0;
        let page = 0;
        for (;;) {
          const r = await s.range(prefix, { limit: 10, startKey, revision });
          if (page === 0) revision = r.revision;
          assert.equal(r.revision, revision, 'all pages at the first page’s revision');
          seen.push(...r.kvs);
          if (!r.more) break;
          // Writes between pages must not show through: the pages are a snapshot.
          await s.create(`${prefix}cm-new-${page}`, '{}');
          const victim = r.kvs[0].key;
          if (page % 2 === 0) await s.delete(victim);
          else await s.update(victim, '{"changed":true}', r.kvs[0].modRevision);
          // The Kubernetes continue token resumes just after the last key.
          startKey = `${r.kvs[r.kvs.length - 1].key}\u0000`;
          page++;
        }
        assert.equal(page, 10);
        assert.deepEqual(keysOf(seen), [...original.keys()].sort());
        for (const kv of seen) assert.equal(kv.value, original.get(kv.key));
      });

      test('at an older revision: old values, no later creates, deleted keys still there', async (s) => {
        const prefix = '/registry/secrets/default/';
        const r1 = await s.create(`${prefix}a`, secret('a', '1'));
        const r2 = await s.create(`${prefix}b`, secret('b', '1'));
        const r3 = await s.update(`${prefix}a`, secret('a', '2'), r1);
        const { revision: r4 } = await s.delete(`${prefix}b`);
        await s.create(`${prefix}c`, secret('c', '1'));

        let r = await s.range(prefix, { revision: r2 });
        assert.equal(r.revision, r2);
        assert.deepEqual(r.kvs, [
          { key: `${prefix}a`, value: secret('a', '1'), modRevision: r1, createRevision: r1 },
          { key: `${prefix}b`, value: secret('b', '1'), modRevision: r2, createRevision: r2 },
        ]);

        r = await s.range(prefix, { revision: r3 });
        assert.deepEqual(
          r.kvs.map((kv) => [kv.key, kv.value, kv.modRevision]),
          [
            [`${prefix}a`, secret('a', '2'), r3],
            [`${prefix}b`, secret('b', '1'), r2],
          ],
        );

        r = await s.range(prefix, { revision: r4 });
        assert.deepEqual(keysOf(r.kvs), [`${prefix}a`]);

        r = await s.range(prefix, { revision: r1, count: true, limit: 1 });
        assert.deepEqual(keysOf(r.kvs), [`${prefix}a`]);
        assert.equal(r.more, false);
        assert.equal(r.count, 1);

        assert.deepEqual(keysOf((await s.range(prefix)).kvs), [`${prefix}a`, `${prefix}c`]);
      });

      test('a revision in the future is refused', async (s) => {
        const current = await s.currentRevision();
        await assert.rejects(s.range('/registry/', { revision: current + 10 }), StorageError);
      });
    });

    describe('watch', () => {
      test('delivers history and live changes in order, with types, values, prevValue and created', async (s) => {
        const w = new Writer(s);
        const start = await s.currentRevision();
        await w.churn(0);
        await w.churn(1);
        const rec = new Recorder();
        const watch = s.watch('/registry/', start, rec);
        await w.churn(2);
        await w.churn(3);
        await rec.waitForEvents(w.expected.length);
        await w.churn(4);
        await rec.waitForEvents(w.expected.length);
        await settle();
        watch.close();
        assert.deepEqual(rec.violations, []);
        assert.deepEqual(rec.events.map(normalize), w.expected);
        assert.ok(w.expected.some((e) => e.type === 'DELETE'));
        assert.ok(w.expected.some((e) => e.created && e.createRevision !== w.expected[0].createRevision));
      });

      test('starting at the current revision delivers only later changes', async (s) => {
        await s.create('/registry/secrets/default/old', '{}');
        const rec = new Recorder();
        const watch = s.watch('/registry/secrets/', await s.currentRevision(), rec);
        const r = await s.create('/registry/secrets/default/new', '{"n":1}');
        await rec.waitForEvents(1);
        await settle();
        watch.close();
        assert.deepEqual(rec.events.map(normalize), [
          {
            type: 'PUT',
            key: '/registry/secrets/default/new',
            value: '{"n":1}',
            revision: r,
            createRevision: r,
            created: true,
          },
        ]);
      });

      test('delivers asynchronously, one call at a time, even when the listener writes', async (s) => {
        const rec = new Recorder();
        let writing = false;
        rec.onEvent = (event) => {
          if (writing) rec.violations.push(`event ${event.revision} delivered inside a write`);
          if (event.type === 'PUT' && /\/ping-\d+$/.test(event.key)) {
            // A write from inside the listener must not re-enter it.
            void s.create(`/registry/secrets/default/pong-${event.revision}`, '{}');
          }
        };
        const watch = s.watch('/registry/secrets/', await s.currentRevision(), rec);
        await s.create('/registry/secrets/default/first', '{}');
        await rec.waitForEvents(1);
        for (let i = 0; i < 20; i++) {
          writing = true;
          const pending = s.create(`/registry/secrets/default/${i % 2 ? 'ping' : 'other'}-${i}`, '{}');
          writing = false;
          await pending;
          if (i % 2) await s.delete(`/registry/secrets/default/ping-${i}`);
        }
        // first, 20 creates, 10 deletes, and a pong for each of the 10 ping creates.
        await rec.waitForEvents(1 + 20 + 10 + 10);
        await settle();
        watch.close();
        assert.deepEqual(rec.violations, []);
        const revisions = rec.revisions();
        assert.deepEqual(
          revisions,
          [...revisions].sort((a, b) => a - b),
        );
      });

      test('no gap and no duplicate when 1,000 writes race with a watch catching up', async (s) => {
        const prefix = '/registry/configmaps/load/';
        const start = await s.currentRevision();
        for (let i = 0; i < 1000; i++) await s.create(`${prefix}before-${i}`, `{"i":${i}}`);
        const rec = new Recorder();
        const watch = s.watch(prefix, start, rec);
        const writes: Promise<number>[] = [];
        for (let i = 0; i < 1000; i++) {
          writes.push(s.create(`${prefix}during-${i}`, `{"i":${i}}`));
          if (i % 3 === 0) await setImmediate();
          if (i % 50 === 0) await Promise.all(writes);
        }
        const revisions = await Promise.all(writes);
        await rec.waitForEvents(2000);
        await settle();
        watch.close();
        assert.deepEqual(rec.violations, []);
        assert.equal(rec.events.length, 2000);
        const expected = Array.from({ length: 2000 }, (_, i) => start + 1 + i);
        assert.deepEqual(rec.revisions(), expected);
        assert.deepEqual(
          [...revisions].sort((a, b) => a - b),
          expected.slice(1000),
        );
        assert.equal(new Set(rec.events.map((e) => e.key)).size, 2000);
        assert.ok(rec.events.every((e) => e.type === 'PUT' && e.created && e.prevValue === undefined));
      });

      test('concurrent watchers from different revisions each see their own complete tail', async (s) => {
        const w = new Writer(s);
        const revisions: number[] = [await s.currentRevision()];
        for (let round = 0; round < 6; round++) {
          await w.churn(round, 8);
          revisions.push(await s.currentRevision());
        }
        const recorders = revisions.map((r) => {
          const rec = new Recorder();
          return { from: r, rec, watch: s.watch('/registry/', r, rec) };
        });
        await w.churn(6, 8);
        for (const { from, rec, watch } of recorders) {
          const expected = w.expected.filter((e) => e.revision > from);
          await rec.waitForEvents(expected.length);
          await settle();
          watch.close();
          assert.deepEqual(rec.events.map(normalize), expected);
        }
      });

      test('only keys under the watched prefix are delivered', async (s) => {
        const start = await s.currentRevision();
        const keys = [
          '/registry/secrets/default/a',
          '/registry/secrets/default2/b',
          '/registry/secrets/default',
          '/registry/configmaps/default/c',
          '/registry/secrets/default/d',
        ];
        await s.create(keys[0], '{}');
        await s.create(keys[1], '{}');
        const rec = new Recorder();
        const watch = s.watch('/registry/secrets/default/', start, rec);
        await s.create(keys[2], '{}');
        await s.create(keys[3], '{}');
        await s.create(keys[4], '{}');
        await s.delete(keys[1]);
        await s.delete(keys[0]);
        await rec.waitForEvents(3);
        await settle();
        watch.close();
        assert.deepEqual(
          rec.events.map((e) => [e.type, e.key]),
          [
            ['PUT', keys[0]],
            ['PUT', keys[4]],
            ['DELETE', keys[0]],
          ],
        );
      });

      test('close stops delivery, also from inside the listener', async (s) => {
        const a = new Recorder();
        const watchA = s.watch('/registry/', await s.currentRevision(), a);
        await s.create('/registry/secrets/default/1', '{}');
        await a.waitForEvents(1);
        watchA.close();
        watchA.close();
        await s.create('/registry/secrets/default/2', '{}');

        const start = await s.currentRevision();
        const b = new Recorder();
        const watchB = s.watch('/registry/', start, b);
        b.onEvent = () => watchB.close();
        for (let i = 0; i < 5; i++) await s.create(`/registry/secrets/other/${i}`, '{}');
        await b.waitForEvents(1);

        const c = new Recorder();
        s.watch('/registry/', 0, c).close();

        await settle();
        assert.equal(a.events.length, 1);
        assert.equal(b.events.length, 1, 'events already queued are dropped by close');
        assert.equal(c.events.length, 0);
        assert.deepEqual([...a.errors, ...b.errors, ...c.errors], [], 'close is not an error');
      });

      test('closing the store ends every watch with UnavailableError', async (s) => {
        for (let i = 0; i < 20; i++) await s.create(`/registry/secrets/default/${i}`, '{}');
        const live = new Recorder();
        s.watch('/registry/', await s.currentRevision(), live);
        await s.create('/registry/secrets/default/live', '{}');
        await live.waitForEvents(1);
        const fromStart = new Recorder();
        s.watch('/registry/', 0, fromStart);
        await s.close();
        await live.waitForError();
        await fromStart.waitForError();
        await settle();
        for (const rec of [live, fromStart]) {
          assert.equal(rec.errors.length, 1);
          assert.ok(rec.errors[0] instanceof UnavailableError, String(rec.errors[0]));
          assert.deepEqual(rec.violations, []);
        }
        await assert.rejects(s.get('/registry/secrets/default/live'), UnavailableError);
        await assert.rejects(s.create('/registry/secrets/default/late', '{}'), UnavailableError);
        const late = new Recorder();
        s.watch('/registry/', 0, late);
        assert.ok((await late.waitForError()) instanceof UnavailableError);
      });
    });

    describe('compaction', () => {
      test('old revisions become unreadable, current data and newer history stay', async (s) => {
        const p = '/registry/secrets/default/';
        const r1 = await s.create(`${p}a`, secret('a', '1'));
        const r2 = await s.update(`${p}a`, secret('a', '2'), r1);
        await s.create(`${p}b`, secret('b', '1'));
        const { revision: r4 } = await s.delete(`${p}b`);
        const r5 = await s.create(`${p}c`, secret('c', '1'));
        const r6 = await s.update(`${p}a`, secret('a', '3'), r2);
        const r7 = await s.create(`${p}b`, secret('b', '2'));

        await s.compact(r5);
        assert.equal(await s.compactedRevision(), r5);
        assert.equal(await s.currentRevision(), r7, 'compaction takes no revision');

        await assert.rejects(s.range(p, { revision: r4 }), (err) => {
          assert.ok(err instanceof CompactedError);
          assert.equal(err.requestedRevision, r4);
          assert.equal(err.compactedRevision, r5);
          return true;
        });
        await assert.rejects(s.range(p, { revision: r1, limit: 1 }), CompactedError);

        assert.deepEqual(
          (await s.range(p, { revision: r5 })).kvs.map((kv) => [kv.key, kv.value, kv.modRevision]),
          [
            [`${p}a`, secret('a', '2'), r2],
            [`${p}c`, secret('c', '1'), r5],
          ],
        );
        assert.deepEqual(await s.range(p), {
          kvs: [
            { key: `${p}a`, value: secret('a', '3'), modRevision: r6, createRevision: r1 },
            { key: `${p}b`, value: secret('b', '2'), modRevision: r7, createRevision: r7 },
            { key: `${p}c`, value: secret('c', '1'), modRevision: r5, createRevision: r5 },
          ],
          revision: r7,
          more: false,
        });
        assert.deepEqual(await s.get(`${p}a`), {
          key: `${p}a`,
          value: secret('a', '3'),
          modRevision: r6,
          createRevision: r1,
        });

        const tooOld = new Recorder();
        s.watch(p, r4, tooOld);
        const err = await tooOld.waitForError();
        assert.ok(err instanceof CompactedError, String(err));
        assert.equal(err.compactedRevision, r5);

        // The update at r6 replaced a value written before the compacted revision; its prevValue survives.
        const fromWatermark = new Recorder();
        const watch = s.watch(p, r5, fromWatermark);
        await fromWatermark.waitForEvents(2);
        await settle();
        watch.close();
        assert.deepEqual(fromWatermark.events.map(normalize), [
          {
            type: 'PUT',
            key: `${p}a`,
            value: secret('a', '3'),
            revision: r6,
            createRevision: r1,
            prevValue: secret('a', '2'),
            created: false,
          },
          {
            type: 'PUT',
            key: `${p}b`,
            value: secret('b', '2'),
            revision: r7,
            createRevision: r7,
            created: true,
          },
        ]);
        assert.equal(tooOld.events.length, 0);
        assert.equal(tooOld.errors.length, 1);

        // Later writes carry on from the current state.
        assert.equal(await s.update(`${p}c`, secret('c', '2'), r5), r7 + 1);
        await assert.rejects(s.create(`${p}a`, '{}'), KeyExistsError);
      });

      test('compacting to the current revision after deleting keys', async (s) => {
        const p = '/registry/secrets/default/';
        for (let i = 0; i < 10; i++) await s.create(`${p}${i}`, secret(String(i)));
        for (let i = 0; i < 10; i += 2) await s.delete(`${p}${i}`);
        const current = await s.currentRevision();
        await s.compact(current);
        assert.equal(await s.compactedRevision(), current);
        assert.equal(await s.currentRevision(), current);
        assert.deepEqual(
          keysOf((await s.range(p, { revision: current })).kvs),
          [1, 3, 5, 7, 9].map((i) => `${p}${i}`),
        );
        assert.equal(await s.create(`${p}0`, '{}'), current + 1, 'a re-create after compaction');
        assert.equal((await s.get(`${p}0`))?.createRevision, current + 1);
      });

      test('compacting again to an older or equal revision is a no-op; a future one is refused', async (s) => {
        for (let i = 0; i < 5; i++) await s.create(`/registry/secrets/default/${i}`, '{}');
        const current = await s.currentRevision();
        await s.compact(current - 1);
        await s.compact(current - 1);
        await s.compact(current - 3);
        assert.equal(await s.compactedRevision(), current - 1);
        await assert.rejects(s.compact(current + 5), StorageError);
        assert.equal(await s.compactedRevision(), current - 1);
      });
    });

    if (!volatile) describeDurability(test);
  });
}

/** Reopening keeps everything: registered only for stores that live on disk. */
function describeDurability(test: (title: string, body: Body) => void): void {
  const reopen = (fixture: StorageFixture) => {
    if (!fixture.reopen) throw new Error("a durable store's fixture must be able to reopen it");
    return fixture.reopen();
  };
  describe('durability', () => {
    test('contents, revision, history and watermark survive a reopen', async (s, fixture) => {
      const w = new Writer(s);
      await w.churn(0);
      const mid = await s.currentRevision();
      await w.churn(1);
      await w.churn(2);
      await w.delete('/registry/configmaps/default/c2');
      const before = await s.range('/registry/');
      const beforeAtMid = await s.range('/registry/', { revision: mid });
      const compactTo = mid - 2;
      await s.compact(compactTo);
      const current = await s.currentRevision();

      const reopened = await reopen(fixture);
      assert.equal(await reopened.currentRevision(), current);
      assert.equal(await reopened.compactedRevision(), compactTo);
      assert.deepEqual(await reopened.range('/registry/'), before);
      assert.deepEqual(await reopened.range('/registry/', { revision: mid }), beforeAtMid);
      await assert.rejects(reopened.range('/registry/', { revision: compactTo - 1 }), CompactedError);

      const rec = new Recorder();
      const watch = reopened.watch('/registry/', compactTo, rec);
      const expected = w.expected.filter((e) => e.revision > compactTo);
      await rec.waitForEvents(expected.length);
      watch.close();
      assert.deepEqual(rec.events.map(normalize), expected);

      assert.equal(await reopened.create('/registry/secrets/default/after', '{}'), current + 1);
    });

    test('the revision survives compaction of a trailing delete and a reopen', async (s, fixture) => {
      await s.create('/registry/secrets/default/a', '{}');
      await s.create('/registry/secrets/default/b', '{}');
      const { revision } = await s.delete('/registry/secrets/default/b');
      await s.compact(revision);
      const reopened = await reopen(fixture);
      assert.equal(await reopened.currentRevision(), revision);
      assert.equal(await reopened.compactedRevision(), revision);
      assert.equal(await reopened.get('/registry/secrets/default/b'), undefined);
      assert.equal(await reopened.create('/registry/secrets/default/b', '{}'), revision + 1);
      const again = await reopen(fixture);
      assert.equal(await again.currentRevision(), revision + 1);
      assert.equal((await again.get('/registry/secrets/default/b'))?.createRevision, revision + 1);
    });
  });
}
