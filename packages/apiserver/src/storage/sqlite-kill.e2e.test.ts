import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { SqliteStorage } from './sqlite.ts';

/**
 * A process that writes to a store on a file from 16 clients, each writing again 0–2 ms after its
 * acknowledgement (groups of several writes, one after the other, as in an issuance), and prints every
 * acknowledged key with its revision.
 */
const WRITERS = `
const { SqliteStorage } = await import(process.argv[1]);
const storage = SqliteStorage.open(process.argv[2]);
for (let c = 0; c < 16; c++) {
  (async () => {
    for (let i = 0; ; i++) {
      const key = '/registry/configmaps/default/c' + c + '-' + i;
      const revision = await storage.create(key, JSON.stringify({ payload: 'x'.repeat(512) }));
      process.stdout.write(key + ' ' + revision + '\\n');
      await new Promise((resolve) => setTimeout(resolve, i % 3));
    }
  })();
}
`;

describe('sqlite storage killed with SIGKILL', () => {
  it('keeps every write it acknowledged, at the revision it acknowledged', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-sqlite-kill-'));
    try {
      const path = join(dir, 'state.db');
      const child = spawn(
        process.execPath,
        ['--input-type=module', '-e', WRITERS, new URL('./sqlite.ts', import.meta.url).href, path],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = once(child, 'exit');
      const acknowledged = new Map<string, number>();
      try {
        // Lines still in the pipe after the kill were acknowledged before it: every one is read and checked.
        for await (const line of createInterface({ input: child.stdout! })) {
          const [key, revision] = line.split(' ');
          acknowledged.set(key, Number(revision));
          if (acknowledged.size >= 2_000 && child.exitCode === null) child.kill('SIGKILL');
        }
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        await exited;
      }
      assert.ok(acknowledged.size >= 2_000);
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
});
