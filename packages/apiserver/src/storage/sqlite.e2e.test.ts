import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { startCompactor } from './compactor.ts';
import { runStorageContract, type StorageFixture } from '@certkit/testenv/storage/contract';
import { SqliteStorage } from './sqlite.ts';
import { CompactedError, ConflictError, type StorageEvent } from './types.ts';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'certkit-sqlite-'));
}

async function fileFixture(): Promise<StorageFixture & { path: string }> {
  const dir = await tempDir();
  const path = join(dir, 'state.db');
  let current = SqliteStorage.open(path);
  return {
    path,
    storage: current,
    async reopen() {
      await current.close();
      current = SqliteStorage.open(path);
      return current;
    },
    async cleanup() {
      await current.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

runStorageContract('sqlite file', fileFixture);

runStorageContract(
  'sqlite :memory:',
  async () => {
    const storage = SqliteStorage.open(':memory:');
    return { storage, cleanup: () => storage.close() };
  },
  { volatile: true },
);

// A small batch size makes the multi-step paths (catch-up, batched compaction) run on small data.
runStorageContract(
  'sqlite small batches',
  async () => {
    const storage = SqliteStorage.open(':memory:', { watchBatchSize: 3, compactBatchSize: 2 });
    return { storage, cleanup: () => storage.close() };
  },
  { volatile: true },
);

/** Reads the file through a second connection, as an operator's sqlite3 would. */
function inspect<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function rowCount(path: string): number {
  return inspect(path, (db) => (db.prepare('SELECT count(*) AS n FROM log').get() as { n: number }).n);
}

describe('sqlite storage', () => {
  it('tells a watch of one prefix that it is current when other prefixes change, after its own events', async () => {
    const storage = SqliteStorage.open(':memory:');
    const seen: string[] = [];
    const watch = storage.watch('/a/', await storage.currentRevision(), {
      event: (e) => seen.push(`event ${e.revision}`),
      error: (err) => seen.push(`error ${err.message}`),
      progress: (rev) => seen.push(`progress ${rev}`),
    });
    await setTimeout(5);
    const a1 = await storage.create('/a/1', 'x');
    // Written in one turn: the two writes elsewhere collapse into one progress mark, at the later revision.
    const [, b2] = await Promise.all([storage.create('/b/1', 'x'), storage.create('/b/2', 'x')]);
    await setTimeout(5);
    watch.close();
    await storage.close();
    assert.deepEqual(seen, [`event ${a1}`, `progress ${b2}`]);
  });

  it('tells a watch started behind writes elsewhere that it is current once caught up, without a new write', async () => {
    const storage = SqliteStorage.open(':memory:');
    const a1 = await storage.create('/a/1', 'x');
    await storage.create('/b/1', 'x');
    const b2 = await storage.create('/b/2', 'x');
    const seen: string[] = [];
    // From before /a/1: the catch-up delivers it, then says the watch is current to the last write elsewhere
    // (a watch cache listed at a1 must not wait for the next write to know it is current).
    const watch = storage.watch('/a/', a1 - 1, {
      event: (e) => seen.push(`event ${e.revision}`),
      error: (err) => seen.push(`error ${err.message}`),
      progress: (rev) => seen.push(`progress ${rev}`),
    });
    await setTimeout(5);
    watch.close();
    await storage.close();
    assert.deepEqual(seen, [`event ${a1}`, `progress ${b2}`]);
  });

  it('uses WAL journaling', async () => {
    const f = await fileFixture();
    try {
      await f.storage.create('/registry/secrets/default/a', '{}');
      const mode = inspect(
        f.path,
        (db) => db.prepare('PRAGMA journal_mode').get() as { journal_mode: string },
      );
      assert.equal(mode.journal_mode, 'wal');
    } finally {
      await f.cleanup();
    }
  });

  it('commits with synchronous=FULL unless told NORMAL: acknowledged writes survive a power loss', async () => {
    const dir = await tempDir();
    try {
      const durable = SqliteStorage.open(join(dir, 'full.db'));
      const fast = SqliteStorage.open(join(dir, 'normal.db'), { synchronous: 'NORMAL' });
      const memory = SqliteStorage.open(':memory:');
      try {
        // PRAGMA synchronous of the connection that commits: 2 is FULL, 1 NORMAL.
        assert.equal(await durable.synchronous(), 2);
        assert.equal(await fast.synchronous(), 1);
        assert.equal(await memory.synchronous(), 2);
      } finally {
        await Promise.all([durable.close(), fast.close(), memory.close()]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('creates the database, its WAL and shared memory owner-only, even with umask 000', async () => {
    const dir = await tempDir();
    const umask = process.umask(0);
    try {
      const path = join(dir, 'state.db');
      const modes = async () =>
        Object.fromEntries(
          await Promise.all(
            (await readdir(dir)).map(async (name) => [
              name,
              ((await stat(join(dir, name))).mode & 0o777).toString(8),
            ]),
          ),
        );
      let s = SqliteStorage.open(path);
      await s.create('/registry/secrets/default/a', '{"data":{"k":"c2VjcmV0"}}');
      assert.deepEqual(await modes(), { 'state.db': '600', 'state.db-wal': '600', 'state.db-shm': '600' });
      // A checkpoint truncates the WAL; closing removes it and the next open makes both anew.
      await s.compact(await s.currentRevision());
      await s.close();
      s = SqliteStorage.open(path);
      await s.create('/registry/secrets/default/b', '{}');
      assert.deepEqual(await modes(), { 'state.db': '600', 'state.db-wal': '600', 'state.db-shm': '600' });
      await s.close();
    } finally {
      process.umask(umask);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs its writer thread in a process started with flags of its own, and keeps the process alive until closed', async () => {
    const dir = await tempDir();
    try {
      // Nothing else keeps this process alive: an idle writer thread must not, a busy one must.
      const script = `
        const { SqliteStorage } = await import(${JSON.stringify(new URL('./sqlite.ts', import.meta.url).href)});
        const s = SqliteStorage.open(${JSON.stringify(join(dir, 'state.db'))});
        const revision = await s.create('/registry/secrets/default/a', '{}');
        await s.close();
        console.log('closed after', revision);`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      assert.equal(child.stderr, '');
      assert.equal(child.stdout, 'closed after 2\n');
      assert.equal(child.status, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a database with another schema version', async () => {
    const dir = await tempDir();
    try {
      const path = join(dir, 'state.db');
      const db = new DatabaseSync(path);
      db.exec('PRAGMA user_version = 99');
      db.close();
      assert.throws(() => SqliteStorage.open(path), /schema version 99/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('makes new databases without a sequence table or a second index: each is a page written per write', async () => {
    const f = await fileFixture();
    try {
      await f.storage.create('/registry/secrets/default/a', '{}');
      const layout = inspect(f.path, (db) => ({
        version: (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
        objects: (
          db
            .prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY name")
            .all() as {
            name: string;
          }[]
        ).map((row) => row.name),
      }));
      assert.deepEqual(layout, { version: 2, objects: ['log', 'log_name_id_deleted', 'meta'] });
    } finally {
      await f.cleanup();
    }
  });

  it('serves a database made by version 1, keeping its revision past a compacted trailing delete', async () => {
    const dir = await tempDir();
    try {
      const path = join(dir, 'state.db');
      // Version 1's layout: AUTOINCREMENT (whose sequence recorded revision 5, the compacted tombstone of a
      // key deleted last) and a unique index, which is dropped on open.
      const db = new DatabaseSync(path);
      db.exec(`
        CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created INTEGER NOT NULL,
          deleted INTEGER NOT NULL, create_revision INTEGER NOT NULL, prev_revision INTEGER NOT NULL, value TEXT NOT NULL);
        CREATE UNIQUE INDEX log_name_prev_revision ON log (name, prev_revision);
        CREATE INDEX log_name_id_deleted ON log (name, id, deleted);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO log VALUES (2, '/registry/secrets/default/a', 1, 0, 2, 0, '{"v":1}');
        INSERT INTO log VALUES (3, '/registry/secrets/default/a', 0, 0, 2, 2, '{"v":2}');
        UPDATE sqlite_sequence SET seq = 5 WHERE name = 'log';
        PRAGMA user_version = 1;
      `);
      db.close();
      const s = SqliteStorage.open(path);
      try {
        assert.equal(await s.currentRevision(), 5);
        assert.deepEqual(await s.get('/registry/secrets/default/a'), {
          key: '/registry/secrets/default/a',
          value: '{"v":2}',
          modRevision: 3,
          createRevision: 2,
        });
        assert.equal(await s.update('/registry/secrets/default/a', '{"v":3}', 3), 6);
        assert.equal(await s.create('/registry/secrets/default/b', '{}'), 7);
      } finally {
        await s.close();
      }
      const layout = inspect(path, (db) => ({
        version: (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
        uniqueIndex: db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'log_name_prev_revision'").get(),
      }));
      assert.deepEqual(layout, { version: 1, uniqueIndex: undefined });
      const reopened = SqliteStorage.open(path);
      assert.equal(await reopened.currentRevision(), 7);
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('after a rolled back group, reads and writes of its keys see the committed rows again', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const key = '/registry/secrets/default/a';
      const first = await storage.create(key, '{"v":1}');
      const results = await Promise.allSettled([
        storage.update(key, '{"v":2}', first),
        storage.create('/registry/secrets/default/b', '{}'),
        // Not text: the whole group is rolled back, the update above with it.
        storage.create('/registry/secrets/default/bad', {} as unknown as string),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'rejected', 'rejected'],
      );
      assert.deepEqual(await storage.get(key), {
        key,
        value: '{"v":1}',
        modRevision: first,
        createRevision: first,
      });
      assert.equal(await storage.get('/registry/secrets/default/b'), undefined);
      await assert.rejects(storage.update(key, '{"v":3}', first + 1), ConflictError);
      assert.equal(await storage.update(key, '{"v":3}', first), first + 1);
      assert.equal(await storage.create('/registry/secrets/default/b', '{}'), first + 2);
    } finally {
      await storage.close();
    }
  });

  it('a second writer on the same file is detected, not silently merged', async () => {
    const f = await fileFixture();
    const other = SqliteStorage.open(f.path);
    try {
      await f.storage.create('/registry/secrets/default/a', '{}');
      await assert.rejects(other.create('/registry/secrets/default/b', '{}'), /another writer/);
    } finally {
      await other.close();
      await f.cleanup();
    }
  });

  it('commits the writes of one turn together, visible to reads and watchers only once committed', async () => {
    const f = await fileFixture();
    try {
      const s = f.storage;
      const events: number[] = [];
      const watch = s.watch('/registry/', await s.currentRevision(), {
        event: (e) => events.push(e.revision),
        error: () => {},
      });
      const before = await s.create('/registry/secrets/default/a', '{"v":1}');
      const settled = Promise.allSettled([
        s.update('/registry/secrets/default/a', '{"v":2}', before),
        s.create('/registry/secrets/default/b', '{}'),
        // Refused (the key exists, written a moment ago in the same group): the others are not affected.
        s.create('/registry/secrets/default/b', '{}'),
        s.create('/registry/secrets/default/c', '{}'),
      ]);
      // Not committed yet: reads answer as of the last commit, other connections see nothing new either.
      assert.equal(await s.currentRevision(), before);
      assert.deepEqual(
        (await s.range('/registry/secrets/')).kvs.map((kv) => kv.value),
        ['{"v":1}'],
      );
      assert.equal(rowCount(f.path), 1);
      const results = await settled;
      assert.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).constructor.name)),
        [before + 1, before + 2, 'KeyExistsError', before + 3],
      );
      assert.equal(await s.currentRevision(), before + 3);
      assert.equal((await s.get('/registry/secrets/default/a'))?.value, '{"v":2}');
      assert.equal(rowCount(f.path), 4);
      await setTimeout(5);
      watch.close();
      assert.deepEqual(events, [before, before + 1, before + 2, before + 3]);
    } finally {
      await f.cleanup();
    }
  });

  it('a get of a key written in the open group answers after the group, so a retry sees what it conflicted with', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const key = '/registry/secrets/default/a';
      const first = await storage.create(key, '{"v":0}');
      const winner = storage.update(key, '{"v":1}', first);
      // A second writer from the same revision conflicts with the pending write, then reads and retries.
      const retried = storage.update(key, '{"v":2}', first).catch(async (err: unknown) => {
        assert.ok(err instanceof ConflictError);
        const current = await storage.get(key);
        assert.deepEqual([current?.value, current?.modRevision], ['{"v":1}', first + 1]);
        return storage.update(key, '{"v":2}', current!.modRevision);
      });
      assert.deepEqual(await Promise.all([winner, retried]), [first + 1, first + 2]);
      // Other keys are read at once, as of the last commit.
      const other = storage.create('/registry/secrets/default/b', '{}');
      assert.equal((await storage.get(key))?.value, '{"v":2}');
      await other;
    } finally {
      await storage.close();
    }
  });

  it('closing commits the open group first, so acknowledged writes are never lost', async () => {
    const dir = await tempDir();
    try {
      const path = join(dir, 'state.db');
      const s = SqliteStorage.open(path);
      const writes = [
        s.create('/registry/secrets/default/a', '{}'),
        s.create('/registry/secrets/default/b', '{}'),
      ];
      await s.close();
      const revisions = await Promise.all(writes);
      const reopened = SqliteStorage.open(path);
      assert.equal(await reopened.currentRevision(), revisions[1]);
      assert.equal((await reopened.range('/registry/secrets/')).kvs.length, 2);
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a write failing for any other reason rolls its whole group back, and the revisions are used again', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const first = await storage.create('/registry/secrets/default/a', '{}');
      const writes = [
        storage.create('/registry/secrets/default/b', '{}'),
        // Not text: an unexpected failure rather than a refusal.
        storage.create('/registry/secrets/default/bad', {} as unknown as string),
        storage.create('/registry/secrets/default/c', '{}'),
      ];
      const results = await Promise.allSettled(writes);
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'rejected', 'fulfilled'],
      );
      assert.equal((results[2] as PromiseFulfilledResult<number>).value, first + 1);
      assert.equal(await storage.get('/registry/secrets/default/b'), undefined);
      assert.deepEqual(
        (await storage.range('/registry/secrets/')).kvs.map((kv) => [kv.key, kv.modRevision]),
        [
          ['/registry/secrets/default/a', first],
          ['/registry/secrets/default/c', first + 1],
        ],
      );
    } finally {
      await storage.close();
    }
  });

  // A create of a name reads no row when the name was never written (ADR 1170): these pin that the names the
  // file already holds, from an earlier process or a compacted log, are still known.
  it('a name written before the store was opened again is found; a deleted one keeps its history when created anew', async () => {
    const f = await fileFixture();
    try {
      await f.storage.create('/registry/secrets/default/kept', '{"n":1}');
      await f.storage.create('/registry/secrets/default/gone', '{"n":1}');
      const { revision: tombstone } = await f.storage.delete('/registry/secrets/default/gone');
      const s = await f.reopen!();
      await assert.rejects(s.create('/registry/secrets/default/kept', '{"n":2}'), /exists/);
      assert.equal((await s.get('/registry/secrets/default/kept'))?.value, '{"n":1}');
      assert.equal(await s.get('/registry/secrets/default/gone'), undefined);
      const again = await s.create('/registry/secrets/default/gone', '{"n":2}');
      // The new row follows the tombstone, as it did when the store read every name's latest row.
      const prev = inspect(f.path, (db) =>
        db.prepare('SELECT prev_revision AS p FROM log WHERE id = ?').get(again),
      ) as { p: number };
      assert.equal(prev.p, tombstone);
      assert.equal(await s.get('/registry/secrets/default/never'), undefined);
      await s.create('/registry/secrets/default/never', '{}');
    } finally {
      await f.cleanup();
    }
  });

  it('after a compaction that forgets thousands of deleted names, the live ones and those being written are still found', async () => {
    const f = await fileFixture();
    try {
      const s = f.storage;
      await s.create('/registry/secrets/default/live', '{}');
      const names = Array.from({ length: 5000 }, (_, i) => `/registry/events/default/e-${i}`);
      await Promise.all(names.map((name) => s.create(name, '{}')));
      await Promise.all(names.map((name) => s.delete(name)));
      const compacting = s.compact(await s.currentRevision());
      // Written while the compaction runs, so it is in a group when the names are read from the file again.
      const during = s.create('/registry/secrets/default/during', '{}');
      await Promise.all([compacting, during]);
      assert.equal(rowCount(f.path), 2);
      await assert.rejects(s.create('/registry/secrets/default/live', '{}'), /exists/);
      await assert.rejects(s.create('/registry/secrets/default/during', '{}'), /exists/);
      await s.create(names[0], '{"again":true}');
      assert.equal((await s.get(names[0]))?.value, '{"again":true}');
    } finally {
      await f.cleanup();
    }
  });

  it('compaction removes superseded rows and tombstones only', async () => {
    const f = await fileFixture();
    try {
      const s = f.storage;
      const key = '/registry/leases/kube-system/leader';
      let rev = await s.create(key, '{"n":0}');
      for (let i = 1; i <= 50; i++) rev = await s.update(key, `{"n":${i}}`, rev);
      await s.create('/registry/secrets/default/gone', '{}');
      await s.delete('/registry/secrets/default/gone');
      await s.create('/registry/secrets/default/kept', '{}');
      assert.equal(rowCount(f.path), 51 + 2 + 1);
      await s.compact(await s.currentRevision());
      // The lease's newest row and the live secret; the deleted secret left nothing behind.
      assert.equal(rowCount(f.path), 2);
    } finally {
      await f.cleanup();
    }
  });

  it('a watch that falls behind compaction while catching up gets CompactedError after what it saw', async () => {
    const storage = SqliteStorage.open(':memory:', { watchBatchSize: 10 });
    try {
      const key = '/registry/leases/kube-system/leader';
      const start = await storage.currentRevision();
      let rev = await storage.create(key, '{"n":0}');
      for (let i = 1; i < 100; i++) rev = await storage.update(key, `{"n":${i}}`, rev);
      const events: StorageEvent[] = [];
      const errors: Error[] = [];
      storage.watch('/registry/', start, {
        event(event) {
          events.push(event);
          if (events.length === 1) void storage.compact(rev);
        },
        error(err) {
          errors.push(err);
        },
      });
      while (errors.length === 0) await setTimeout(2);
      assert.equal(events.length, 10, 'the first batch, read before compaction');
      assert.deepEqual(
        events.map((e) => e.revision),
        Array.from({ length: 10 }, (_, i) => start + 1 + i),
      );
      assert.ok(errors[0] instanceof CompactedError);
      assert.equal(errors[0].requestedRevision, start + 10);
    } finally {
      await storage.close();
    }
  });

  it('the compactor keeps the last N revisions and removes older history', async () => {
    const f = await fileFixture();
    const failures: unknown[] = [];
    const compactor = startCompactor(f.storage, {
      intervalMs: 10,
      retainRevisions: 5,
      onError: (err) => failures.push(err),
    });
    try {
      const s = f.storage;
      const key = '/registry/leases/kube-system/leader';
      let rev = await s.create(key, '{"n":0}');
      for (let i = 1; i < 30; i++) rev = await s.update(key, `{"n":${i}}`, rev);
      const deadline = Date.now() + 5000;
      while ((await s.compactedRevision()) < rev - 5) {
        assert.ok(Date.now() < deadline, 'the compactor did not run');
        await setTimeout(5);
      }
      assert.equal(await s.compactedRevision(), rev - 5);
      // Rows newer than the watermark plus the one current at it.
      assert.equal(rowCount(f.path), 6);
      assert.deepEqual((await s.range(key, { revision: rev - 5 })).kvs[0].value, '{"n":24}');
      await assert.rejects(s.range(key, { revision: rev - 6 }), CompactedError);
      assert.equal((await s.get(key))?.value, '{"n":29}');

      // With nothing new written, later ticks leave the watermark alone.
      await setTimeout(50);
      assert.equal(await s.compactedRevision(), rev - 5);
      assert.deepEqual(failures, []);
    } finally {
      compactor.stop();
      await f.cleanup();
    }
  });

  it('the compactor reports failures and keeps going', async () => {
    const storage = SqliteStorage.open(':memory:');
    const failures: unknown[] = [];
    let calls = 0;
    const flaky = new Proxy(storage, {
      get(target, prop, receiver) {
        if (prop === 'compact') {
          return async (revision: number) => {
            calls++;
            if (calls === 1) throw new Error('disk on fire');
            return target.compact(revision);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const compactor = startCompactor(flaky, {
      intervalMs: 10,
      retainRevisions: 1,
      onError: (e) => failures.push(e),
    });
    try {
      for (let i = 0; i < 5; i++) await storage.create(`/registry/secrets/default/${i}`, '{}');
      const target = (await storage.currentRevision()) - 1;
      while ((await storage.compactedRevision()) < target) await setTimeout(5);
      assert.equal(failures.length, 1);
      assert.match(String(failures[0]), /disk on fire/);
    } finally {
      compactor.stop();
      await storage.close();
    }
  });
});
