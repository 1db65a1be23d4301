/**
 * `certkit apiserver --storage etcd` (and `up`) with no etcd where --etcd-endpoints points: one line naming the
 * flag and the socket's error, exit 1, after the store's dial timeout, instead of gRPC's status text cut at
 * its first line ("… Resolution note: ").
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '@certkit/testenv/cli/cli-process';
import { freePort } from '@certkit/testenv/net/free-ports';

describe('--storage etcd with nothing at --etcd-endpoints', () => {
  it('exits 1 with one line naming the flag and the refused connection', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-etcd-down-'));
    const port = await freePort();
    try {
      const result = await runCli([
        'apiserver',
        ...['--storage', 'etcd', '--etcd-endpoints', `http://127.0.0.1:${port}`],
        ...['--data-dir', join(dir, 'data'), '--port', '0'],
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `certkit: --etcd-endpoints http://127.0.0.1:${port}: etcd did not answer within 5 s ` +
          `(connect ECONNREFUSED 127.0.0.1:${port}); is it running?\n`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
