import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStorage } from '../storage/sqlite.ts';
import { ApiServer } from './server.ts';

/**
 * A port already in use (a second `certkit up` on 6443): ApiServer.start rejects with the listen error and
 * leaves nothing of its own running, so that the caller can close the storage and print one line, with no
 * controller of the server still working (and logging "storage is closed") behind it.
 */

/** Timers and intervals alive in this process: the server's controllers keep theirs while they run. */
function timers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('ApiServer.start on a port in use', () => {
  let dir: string;
  let taken: Server;
  let port: number;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-listen-'));
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => taken.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects with EADDRINUSE and stops every controller it started', async () => {
    const before = timers();
    const storage = SqliteStorage.open(join(dir, 'state.db'));
    const logged: Record<string, unknown>[] = [];
    await assert.rejects(ApiServer.start({ storage, port, token: 't', log: (entry) => logged.push(entry) }), {
      code: 'EADDRINUSE',
    });
    assert.equal(timers(), before, `timers left running: ${process.getActiveResourcesInfo().join(', ')}`);
    await storage.close();
    // What would have run after the failed start had its controllers been left running.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      logged.filter((e) => e.level === 'error'),
      [],
    );
  });
});
