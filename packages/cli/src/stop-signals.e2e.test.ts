import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { callApi, type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * Ctrl-C while `certkit up` stops: the first signal stops cleanly, a second one exits at once (Node's
 * convention, and the runtime Manager's), so an operator is never stuck behind a stop that waits.
 */

/** Resolves once the process has printed `text` (stdout or stderr). */
async function printed(cli: RunningCli, text: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cli.output().includes(text)) {
    assert.ok(Date.now() < deadline, `no ${JSON.stringify(text)} within ${timeoutMs} ms:\n${cli.output()}`);
    await sleep(20);
  }
}

describe('certkit up stopping', () => {
  it('a second SIGINT during a stop that waits on the database ends the process at once by that signal, with one line; the data dir starts again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-stop-signals-'));
    let up: RunningCli | undefined;
    // SQLite's write lock, held from this process: the server's next write waits for it (its 5 s busy
    // timeout), and its stop waits for that write. That is the slow stop, made certain.
    let holder: DatabaseSync | undefined;
    try {
      up = await startCli(['up', '--data-dir', dir, '--port', '0']);
      holder = new DatabaseSync(join(dir, 'state.db'));
      holder.exec('BEGIN IMMEDIATE');
      // A few writes, and time for them to reach the writer thread even on a loaded machine: each batch the
      // writer is given waits out the busy timeout, and the stop waits for every one of them.
      let answered = 0;
      const writes = ['a', 'b', 'c'].map((name) =>
        callApi(dir, up!.url, 'POST', '/api/v1/namespaces/default/configmaps', {
          metadata: { name: `waits-for-the-lock-${name}` },
        })
          .catch(() => undefined)
          .finally(() => answered++),
      );
      await sleep(1000);
      assert.equal(answered, 0, 'the writes were not held up by the lock, so the stop would not be');

      up.child.kill('SIGINT');
      await printed(up, 'SIGINT received, stopping (again to exit at once)');
      const secondAt = performance.now();
      up.child.kill('SIGINT');
      await up.exited;
      const tookMs = performance.now() - secondAt;

      // Ended by the signal itself, as a shell reports a Ctrl-C'd command (status 130).
      assert.equal(up.child.signalCode, 'SIGINT', up.output());
      const lines = up.stderr().trim().split('\n');
      assert.deepEqual(lines, ['certkit: SIGINT received again, exiting without waiting for the stop']);
      // Well inside the 4 s the stop still had to wait for the first held write alone.
      assert.ok(tookMs < 3000, `the second SIGINT took ${Math.round(tookMs)} ms to end the process`);
      await Promise.all(writes);

      // Exiting mid-stop leaves nothing behind that a new start trips on: the kernel dropped the data dir's
      // lock with the process, and SQLite's WAL keeps what was acknowledged.
      holder.exec('ROLLBACK');
      holder.close();
      holder = undefined;
      const again = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
      const namespaces = await callApi(dir, again.url, 'GET', '/api/v1/namespaces/default');
      assert.equal(namespaces.status, 200);
      assert.equal(await again.stop('SIGINT'), 0);
    } finally {
      holder?.close();
      await up?.stop('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a SIGTERM sent the moment the banner arrives still stops cleanly (the handlers come before the banner)', async () => {
    // A script (or a test) that reads the banner may signal at once; before, the signal could land between
    // the banner and the handlers and end the process by its default action, about one start in two here.
    const dir = await mkdtemp(join(tmpdir(), 'certkit-stop-at-banner-'));
    try {
      for (let round = 0; round < 4; round++) {
        const up = await startCli(['up', '--data-dir', join(dir, String(round)), '--port', '0']);
        up.child.kill('SIGTERM');
        assert.equal(await up.exited, 0, up.output());
        assert.match(up.output(), /certkit: SIGTERM received, stopping/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
