import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteStorage } from '@certkit/apiserver';
import { parseServeFlags } from './args.ts';
import { startControlPlane } from './serve.ts';

describe('startControlPlane', () => {
  it('commits with synchronous=FULL by default and NORMAL with --sqlite-synchronous=normal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-serve-'));
    try {
      // PRAGMA synchronous of the connection that commits: 2 is FULL, 1 NORMAL.
      for (const [flags, expected] of [
        [[], 2],
        [['--sqlite-synchronous=normal'], 1],
        [['--sqlite-synchronous', 'full'], 2],
      ] as const) {
        const plane = await startControlPlane(parseServeFlags(['--data-dir', dir, '--port', '0', ...flags]));
        try {
          assert.ok(plane.storage instanceof SqliteStorage);
          assert.equal(await plane.storage.synchronous(), expected, flags.join(' '));
        } finally {
          await plane.close();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a data dir is served by one control plane at a time, and free again once it closes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-serve-'));
    try {
      const flags = parseServeFlags(['--data-dir', dir, '--port', '0']);
      const first = await startControlPlane(flags);
      await assert.rejects(startControlPlane(flags), /is in use by another certkit process/);
      await first.close();
      const second = await startControlPlane(flags);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
