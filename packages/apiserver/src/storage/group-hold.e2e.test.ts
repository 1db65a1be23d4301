import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createInterface } from 'node:readline';
import { setTimeout } from 'node:timers/promises';
import { SqliteStorage, type SqliteStorageOptions } from './sqlite.ts';

/**
 * A process that writes to a store with the default hold from 16 clients, each writing again 0–2 ms after
 * its acknowledgement, and prints every acknowledged key with its revision and the groups held so far.
 */
const WRITERS = `
const { SqliteStorage } = await import(process.argv[1]);
const storage = SqliteStorage.open(process.argv[2]);
for (let c = 0; c < 16; c++) {
  (async () => {
    for (let i = 0; ; i++) {
      const key = '/registry/configmaps/default/c' + c + '-' + i;
      const revision = await storage.create(key, JSON.stringify({ payload: 'x'.repeat(512) }));
      process.stdout.write(key + ' ' + revision + ' ' + storage.commitStats().held + '\\n');
      await new Promise((resolve) => setTimeout(resolve, i % 3));
    }
  })();
}
`;

/** A store on a file (its writer on a thread of its own, as in production), removed after. */
async function withStore(
  options: SqliteStorageOptions,
  fn: (s: SqliteStorage) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-group-hold-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), options);
  try {
    await fn(storage);
  } finally {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Creates `n` keys in one turn: one group. */
function burst(s: SqliteStorage, prefix: string, n: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) => s.create(`/registry/secrets/default/${prefix}-${i}`, '{}')),
  );
}

/** Groups and writes committed, and groups held, since `before`. */
function since(s: SqliteStorage, before: ReturnType<SqliteStorage['commitStats']>): number[] {
  const after = s.commitStats();
  return [after.groups - before.groups, after.writes - before.writes, after.held - before.held];
}

// The holds here are long (hundreds of ms, where the default is 2 ms) so that waiting or not shows plainly
// on a loaded machine.
describe('sqlite storage: holding a group open for more writes', () => {
  it('commits writes made one after the other one group each, never holding them', async () => {
    await withStore({ groupHoldMs: 5_000 }, async (s) => {
      const before = s.commitStats();
      const started = performance.now();
      for (let i = 0; i < 5; i++) await s.create(`/registry/secrets/default/seq-${i}`, '{}');
      assert.ok(performance.now() - started < 4_000, 'no write waited for the hold');
      assert.deepEqual(since(s, before), [5, 5, 0]);
    });
  });

  it('after a group of several writes, a smaller group waits for the writes that follow a moment later', async () => {
    await withStore({ groupHoldMs: 400 }, async (s) => {
      await burst(s, 'a', 3);
      const before = s.commitStats();
      const started = performance.now();
      // The writer is free: without the hold this write would be committed alone at the end of this turn.
      const first = s.create('/registry/secrets/default/first', '{}');
      await setTimeout(50);
      const later = s.create('/registry/secrets/default/later', '{}');
      const revisions = await Promise.all([first, later]);
      const waited = performance.now() - started;
      assert.deepEqual(since(s, before), [1, 2, 1], 'one group of both, held once');
      assert.equal(revisions[1], revisions[0] + 1);
      // It waited for a third write until its bound (a timer may fire a little early by this clock), no longer.
      assert.ok(waited >= 350 && waited < 4_000, `waited ${waited} ms`);
      // That group carried two writes: a lone write after it is held; one after a group of one is not.
      const third = performance.now();
      await s.create('/registry/secrets/default/third', '{}');
      assert.ok(performance.now() - third >= 350, 'held after a group of two');
      const fourth = performance.now();
      await s.create('/registry/secrets/default/fourth', '{}');
      assert.ok(performance.now() - fourth < 350, 'not held after a group of one');
    });
  });

  it('sends a held group as soon as it has as many writes as the group before it', async () => {
    await withStore({ groupHoldMs: 10_000 }, async (s) => {
      await burst(s, 'a', 4);
      const before = s.commitStats();
      const started = performance.now();
      const writes: Promise<number>[] = [];
      for (let i = 0; i < 4; i++) {
        writes.push(s.create(`/registry/secrets/default/b-${i}`, '{}'));
        await setTimeout(10);
      }
      await Promise.all(writes);
      assert.ok(performance.now() - started < 5_000, 'did not wait for the bound');
      assert.deepEqual(since(s, before), [1, 4, 1]);
    });
  });

  it('waits for at most groupHoldMaxWrites writes after a larger group', async () => {
    await withStore({ groupHoldMs: 10_000, groupHoldMaxWrites: 2 }, async (s) => {
      await burst(s, 'a', 20);
      const before = s.commitStats();
      const started = performance.now();
      const first = s.create('/registry/secrets/default/first', '{}');
      await setTimeout(20);
      await Promise.all([first, s.create('/registry/secrets/default/second', '{}')]);
      assert.ok(performance.now() - started < 5_000, 'went with 2 writes, not waiting for 20');
      assert.deepEqual(since(s, before), [1, 2, 1]);
    });
  });

  it('closing commits a held group at once: acknowledged, and on disk when opened again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-group-hold-'));
    try {
      const path = join(dir, 'state.db');
      const s = SqliteStorage.open(path, { groupHoldMs: 10_000 });
      await burst(s, 'a', 2);
      const held = s.create('/registry/secrets/default/held', '{}');
      await setTimeout(20);
      assert.equal(s.commitStats().held, 1);
      const started = performance.now();
      await s.close();
      const revision = await held;
      assert.ok(performance.now() - started < 5_000, 'close did not wait for the bound');
      const reopened = SqliteStorage.open(path);
      assert.equal((await reopened.get('/registry/secrets/default/held'))?.modRevision, revision);
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a held write is not visible to reads or watchers until its group commits', async () => {
    await withStore({ groupHoldMs: 300 }, async (s) => {
      await burst(s, 'a', 2);
      const seen: number[] = [];
      const watch = s.watch('/registry/secrets/default/held', await s.currentRevision(), {
        event: (e) => seen.push(e.revision),
        error: () => {},
      });
      const held = s.create('/registry/secrets/default/held', '{}');
      await setTimeout(100);
      assert.equal(s.commitStats().held, 1);
      assert.equal((await s.range('/registry/secrets/default/held')).kvs.length, 0);
      assert.deepEqual(seen, []);
      // A get of the key itself waits for its group, as for any write not committed yet.
      assert.equal((await s.get('/registry/secrets/default/held'))?.modRevision, await held);
      await setTimeout(20);
      assert.deepEqual(seen, [await held]);
      watch.close();
    });
  });

  it('a process killed with SIGKILL while groups are held keeps every write it acknowledged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-group-hold-'));
    try {
      const path = join(dir, 'state.db');
      const child = spawn(
        process.execPath,
        ['--input-type=module', '-e', WRITERS, new URL('./sqlite.ts', import.meta.url).href, path],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = once(child, 'exit');
      const acknowledged = new Map<string, number>();
      let held = 0;
      // Lines still in the pipe after the kill were acknowledged before it: every one is read and checked.
      for await (const line of createInterface({ input: child.stdout! })) {
        const [key, revision, heldSoFar] = line.split(' ');
        acknowledged.set(key, Number(revision));
        held = Number(heldSoFar);
        if (acknowledged.size >= 2_000 && held > 0 && child.exitCode === null) child.kill('SIGKILL');
      }
      await exited;
      assert.ok(held > 0, 'groups were held while the clients wrote');
      const reopened = SqliteStorage.open(path);
      try {
        const kept = new Map(
          (await reopened.range('/registry/configmaps/')).kvs.map((kv) => [kv.key, kv.modRevision]),
        );
        const lost = [...acknowledged].filter(([key, revision]) => kept.get(key) !== revision);
        assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.size} acknowledged writes lost`);
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('holds nothing in memory, where a commit has no fsync to share', async () => {
    const s = SqliteStorage.open(':memory:');
    try {
      await burst(s, 'a', 3);
      await s.create('/registry/secrets/default/alone', '{}');
      assert.equal(s.commitStats().held, 0);
    } finally {
      await s.close();
    }
  });
});
