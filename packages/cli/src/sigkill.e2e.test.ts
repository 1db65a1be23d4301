import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callApi, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * Writes are acknowledged only once their group has committed on the writer thread: a server killed while 16
 * clients write keeps every write it acknowledged, whatever the commit it was in the middle of.
 */
describe('certkit apiserver killed with SIGKILL', () => {
  it('keeps every acknowledged write of 16 concurrent writers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-sigkill-'));
    try {
      const args = ['apiserver', '--data-dir', dir, '--port', '0'];
      const first = await startCli(args);
      const acknowledged: string[] = [];
      let killed = false;
      const writers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; !killed; i++) {
          const name = `w${w}-${i}`;
          try {
            const res = await callApi(dir, first.url, 'POST', '/api/v1/namespaces/default/configmaps', {
              metadata: { name },
              data: { payload: 'x'.repeat(512) },
            });
            if (res.status === 201) acknowledged.push(name);
          } catch {
            // The connection died with the server: this write was not acknowledged.
            return;
          }
        }
      });
      while (acknowledged.length < 400) await new Promise((r) => setTimeout(r, 5));
      first.child.kill('SIGKILL');
      killed = true;
      await first.exited;
      await Promise.all(writers);

      const second = await startCli(args);
      const list = await callApi(dir, second.url, 'GET', '/api/v1/namespaces/default/configmaps');
      const kept = new Set(
        (list.json.items as { metadata: { name: string } }[]).map((item) => item.metadata.name),
      );
      const lost = acknowledged.filter((name) => !kept.has(name));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes lost`);
      assert.equal(await second.stop(), 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
