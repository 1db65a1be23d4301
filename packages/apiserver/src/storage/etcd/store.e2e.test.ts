import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { EtcdStorage } from './store.ts';
import { CompactedError, type StorageEvent, UnavailableError, type WatchListener } from '../types.ts';
import { etcdAvailable, type EtcdProcess, startEtcd, startEtcdCluster } from '@certkit/testenv/etcd/etcd';
import { runStorageContract, type StorageFixture } from '@certkit/testenv/storage/contract';

class Recorder implements WatchListener {
  readonly events: StorageEvent[] = [];
  readonly errors: Error[] = [];

  event(event: StorageEvent): void {
    this.events.push(event);
  }

  error(err: Error): void {
    this.errors.push(err);
  }

  revisions(): number[] {
    return this.events.map((e) => e.revision);
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

let prefixes = 0;
function freshPrefix(what: string): string {
  return `/certkit-test/${process.pid}/${what}-${++prefixes}`;
}

if (!etcdAvailable()) {
  console.log('# etcd storage tests skipped: no etcd binary ($ETCD_BINARY, /usr/bin/etcd or etcd on PATH)');
  describe('etcd storage', { skip: 'etcd is not installed' }, () => {});
} else {
  let etcd: EtcdProcess;
  before(async () => {
    etcd = await startEtcd({ name: 'contract' });
  });
  after(async () => {
    await etcd?.cleanup();
  });

  const connect = (prefix: string): Promise<EtcdStorage> =>
    EtcdStorage.connect({ endpoints: [etcd.endpoint], prefix });

  runStorageContract('etcd', async (): Promise<StorageFixture> => {
    const prefix = freshPrefix('contract');
    let current = await connect(prefix);
    return {
      storage: current,
      async reopen() {
        await current.close();
        current = await connect(prefix);
        return current;
      },
      async cleanup() {
        await current.close();
      },
    };
  });

  describe('etcd specifics', () => {
    it('connect fails with UnavailableError when etcd cannot be reached', async () => {
      await assert.rejects(
        EtcdStorage.connect({ endpoints: ['http://127.0.0.1:1'], dialTimeoutMs: 300 }),
        UnavailableError,
      );
    });

    it('a watch survives an etcd restart: no event lost, none repeated', { timeout: 30_000 }, async (t) => {
      const own = await startEtcd({ name: 'restart' });
      const storage = await EtcdStorage.connect({ endpoints: [own.endpoint], prefix: '/restart' });
      try {
        const start = await storage.currentRevision();
        // One watch follows the writes as they happen; the other starts just before the stop, so that it has
        // (most likely) received none of its history when etcd goes away and must replay all of it on resuming.
        const live = new Recorder();
        const liveWatch = storage.watch('/registry/', start, live);
        for (let i = 0; i < 200; i++) await storage.create(`/registry/configmaps/before/${i}`, `{"i":${i}}`);
        const late = new Recorder();
        const lateWatch = storage.watch('/registry/', start, late);
        await sleep(20);
        await own.stop();
        t.diagnostic(`delivered at the stop: live ${live.events.length}, late ${late.events.length} of 200`);
        await sleep(200);
        await own.restart();
        for (let i = 0; i < 200; i++) await storage.create(`/registry/configmaps/after/${i}`, `{"i":${i}}`);
        for (const rec of [live, late]) {
          await until(() => rec.events.length >= 400 || rec.errors.length > 0, '400 events');
        }
        await sleep(100);
        liveWatch.close();
        lateWatch.close();
        for (const rec of [live, late]) {
          assert.deepEqual(rec.errors, []);
          assert.deepEqual(
            rec.revisions(),
            Array.from({ length: 400 }, (_, i) => start + 1 + i),
          );
          assert.equal(new Set(rec.events.map((e) => e.key)).size, 400);
          assert.ok(rec.events.every((e) => e.type === 'PUT' && e.created));
        }
      } finally {
        await storage.close();
        await own.cleanup();
      }
    });

    it('a watch whose etcd stays away past the reconnect window fails with UnavailableError', async () => {
      const own = await startEtcd({ name: 'gone' });
      const storage = await EtcdStorage.connect({
        endpoints: [own.endpoint],
        watchReconnectTimeoutMs: 500,
        requestRetryMs: 300,
      });
      try {
        const rec = new Recorder();
        storage.watch('/', await storage.currentRevision(), rec);
        await storage.create('/a', '{}');
        await until(() => rec.events.length === 1, 'the first event');
        const stopped = Date.now();
        await own.kill();
        await until(() => rec.errors.length > 0, 'the watch error', 5000);
        assert.ok(rec.errors[0] instanceof UnavailableError, String(rec.errors[0]));
        assert.ok(Date.now() - stopped >= 400, 'not before the window');
        // Reads fail too, after their own short retry.
        await assert.rejects(storage.get('/a'), UnavailableError);
      } finally {
        await storage.close();
        await own.cleanup();
      }
    });

    it('a watch from a compacted revision fails with CompactedError, also after compaction by another client', async () => {
      const prefix = freshPrefix('compacted');
      const a = await connect(prefix);
      const b = await connect(prefix);
      try {
        const r1 = await a.create('/k/1', '{}');
        const r2 = await a.update('/k/1', '{"v":2}', r1);
        const r3 = await a.create('/k/2', '{}');
        const live = new Recorder();
        const liveWatch = a.watch('/k/', r3, live);

        await a.compact(r2);
        let rec = new Recorder();
        a.watch('/k/', r1, rec);
        await until(() => rec.errors.length > 0, 'the compacted error');
        assert.ok(rec.errors[0] instanceof CompactedError, String(rec.errors[0]));
        assert.equal((rec.errors[0] as CompactedError).compactedRevision, r2);
        assert.equal(rec.events.length, 0);

        // Compaction by b: a learns the watermark from the canceled watch and from compactedRevision().
        await b.compact(r3);
        assert.equal(await a.compactedRevision(), r3);
        rec = new Recorder();
        a.watch('/k/', r2, rec);
        await until(() => rec.errors.length > 0, 'the compacted error');
        assert.equal((rec.errors[0] as CompactedError).compactedRevision, r3);
        await assert.rejects(a.range('/k/', { revision: r2 }), (err) => {
          assert.ok(err instanceof CompactedError);
          assert.equal(err.compactedRevision, r3);
          return true;
        });

        // A watch that is not behind is untouched by compaction.
        const r4 = await b.create('/k/3', '{}');
        await until(() => live.events.length === 1, 'the live event');
        assert.equal(live.events[0].revision, r4);
        assert.deepEqual(live.errors, []);
        liveWatch.close();
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('close() errors every open watch, hundreds of them on one stream', async () => {
      const storage = await connect(freshPrefix('close'));
      const start = await storage.currentRevision();
      const recorders: Recorder[] = [];
      for (let i = 0; i < 300; i++) {
        const rec = new Recorder();
        recorders.push(rec);
        storage.watch(`/w/${i}/`, start, rec);
      }
      for (let i = 0; i < 300; i++) await storage.create(`/w/${i}/x`, `{"i":${i}}`);
      await until(() => recorders.every((r) => r.events.length === 1), 'one event per watch');
      for (const [i, rec] of recorders.entries()) assert.equal(rec.events[0].key, `/w/${i}/x`);
      await storage.close();
      await until(() => recorders.every((r) => r.errors.length === 1), 'an error per watch');
      await sleep(50);
      for (const rec of recorders) {
        assert.equal(rec.errors.length, 1);
        assert.ok(rec.errors[0] instanceof UnavailableError);
        assert.equal(rec.events.length, 1);
      }
    });

    it(
      'on a 3-member cluster, killing the leader loses no acknowledged write and watches keep delivering',
      { timeout: 45_000 },
      async () => {
        const cluster = await startEtcdCluster(3);
        const stores: EtcdStorage[] = [];
        try {
          const open = async (): Promise<EtcdStorage> => {
            // A write stuck on the dead leader would wait for etcd's own 6 s timeout; 1.5 s keeps the test short.
            const s = await EtcdStorage.connect({
              endpoints: cluster.endpoints,
              prefix: '/cluster',
              requestTimeoutMs: 1500,
            });
            stores.push(s);
            return s;
          };
          const writer = await open();
          const start = await writer.currentRevision();
          // Several stores, so that some watch stream is likely on the member that dies.
          const recorders: Recorder[] = [];
          for (let i = 0; i < 10; i++) {
            const rec = new Recorder();
            recorders.push(rec);
            (await open()).watch('/registry/', start, rec);
          }

          const acked = new Map<string, number>();
          const failed: string[] = [];
          const write = async (key: string): Promise<void> => {
            try {
              acked.set(key, await writer.create(key, JSON.stringify({ key })));
            } catch (err) {
              assert.ok(err instanceof UnavailableError, String(err));
              failed.push(key);
            }
          };
          for (let i = 0; i < 150; i++) await write(`/registry/configmaps/before/${i}`);

          const leader = await findLeader(cluster.endpoints);
          await cluster.members[leader].kill();
          for (let i = 0; i < 150; i++) await write(`/registry/configmaps/after/${i}`);

          // Every acknowledged write is there, at its revision.
          const { kvs } = await writer.range('/registry/');
          const stored = new Map(kvs.map((kv) => [kv.key, kv.modRevision]));
          for (const [key, revision] of acked) assert.equal(stored.get(key), revision, key);
          assert.ok(
            acked.size >= 290,
            `only ${acked.size} of 300 writes acknowledged (${failed.length} failed)`,
          );

          // Every watch saw every stored write (acknowledged or not), in order, once.
          const expected = kvs.map((kv) => kv.modRevision).sort((x, y) => x - y);
          for (const rec of recorders) {
            await until(() => rec.events.length >= expected.length || rec.errors.length > 0, 'all events');
            await sleep(50);
            assert.deepEqual(rec.errors, []);
            assert.deepEqual(rec.revisions(), expected);
          }
        } finally {
          for (const s of stores) await s.close();
          await cluster.cleanup();
        }
      },
    );
  });
}

/** The index of the member that currently leads, asked of each member. */
async function findLeader(endpoints: string[]): Promise<number> {
  for (let i = 0; i < endpoints.length; i++) {
    const client = new Etcd3({ hosts: endpoints[i] });
    try {
      const status = await client.maintenance.status();
      if (status.leader === status.header.member_id) return i;
    } finally {
      client.close();
    }
  }
  throw new Error('no leader found');
}
