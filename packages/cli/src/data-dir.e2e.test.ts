import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callApi, runCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * The data dir holds every Secret (in state.db and its WAL), the CA key and the admin token: other users must
 * not read any of it, and only one server may use it at a time.
 */

/** Every directory and file under `dir` with its permission bits, as 'relative/path': '600'. */
async function modes(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = { '.': ((await stat(dir)).mode & 0o777).toString(8) };
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    found[path.slice(dir.length + 1)] = ((await stat(path)).mode & 0o777).toString(8);
  }
  return found;
}

/** Asserts that `dir` and the directories in it are 0700 and every file 0600. */
async function assertOwnerOnly(dir: string, when: string): Promise<Record<string, string>> {
  const found = await modes(dir);
  const dirs = new Set(['.', 'pki']);
  const wider = Object.entries(found).filter(([name, mode]) => mode !== (dirs.has(name) ? '700' : '600'));
  assert.deepEqual(wider, [], `${when}: ${JSON.stringify(found)}`);
  return found;
}

const warnings = (stderr: string) =>
  stderr.split('\n').filter((line) => line.startsWith('certkit: warning:'));

/** 96 KiB of Secret data: 48 of them fill more WAL than the 1000 pages after which SQLite checkpoints. */
const bigSecret = (name: string) => ({
  metadata: { name },
  data: { value: Buffer.alloc(72 * 1024, name).toString('base64') },
});

async function createSecrets(dir: string, url: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 8) {
    const results = await Promise.all(
      names
        .slice(i, i + 8)
        .map((name) => callApi(dir, url, 'POST', '/api/v1/namespaces/default/secrets', bigSecret(name))),
    );
    for (const r of results) assert.equal(r.status, 201, JSON.stringify(r.json));
  }
}

describe('certkit data dir', () => {
  it('keeps the dir 0700 and every file 0600 under umask 000, across writes, a checkpoint and restarts, fixing wider modes with a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-data-dir-'));
    try {
      await chmod(dir, 0o755);
      const args = ['apiserver', '--data-dir', dir, '--port', '0'];
      const first = await startCli(args, { umask: '000' });
      assert.deepEqual(warnings(first.stderr()), [
        `certkit: warning: ${dir} had mode 0755, open to other users; set it to 0700`,
      ]);
      await createSecrets(
        dir,
        first.url,
        Array.from({ length: 48 }, (_, i) => `big-${i}`),
      );
      // Pages reach state.db only through a checkpoint: a database this large has had one.
      assert.ok((await stat(join(dir, 'state.db'))).size > 1024 * 1024, 'no checkpoint happened');
      const files = await assertOwnerOnly(dir, 'after writes and a checkpoint');
      for (const name of [
        'state.db-wal',
        'state.db-shm',
        'kubeconfig',
        'token',
        'sa.key',
        'lock',
        'pki/ca.key',
        'pki/ca.crt',
      ]) {
        assert.ok(name in files, `${name} is missing: ${JSON.stringify(files)}`);
      }
      if (process.getuid?.() === 0) {
        // Running as root here, so another user can be tried for real: nobody cannot read the WAL.
        const read = spawnSync('setpriv', [
          '--reuid=nobody',
          '--regid=nogroup',
          '--clear-groups',
          'cat',
          join(dir, 'state.db-wal'),
        ]);
        assert.notEqual(read.status, 0, 'nobody read the WAL');
        assert.match(read.stderr.toString(), /Permission denied/);
      }
      assert.equal(await first.stop(), 0);

      // A restart recreates the WAL and shared memory: still owner-only, and nothing to warn about.
      const second = await startCli(args, { umask: '000' });
      await createSecrets(dir, second.url, ['after-restart']);
      await assertOwnerOnly(dir, 'after a restart');
      assert.deepEqual(warnings(second.stderr()), []);
      assert.equal(await second.stop(), 0);

      // Files made wider while it was stopped (by hand, a backup restore, an older version) are fixed at start.
      await chmod(join(dir, 'kubeconfig'), 0o644);
      await chmod(join(dir, 'state.db'), 0o640);
      await chmod(join(dir, 'pki'), 0o755);
      const third = await startCli(args, { umask: '000' });
      assert.deepEqual(warnings(third.stderr()).sort(), [
        `certkit: warning: ${join(dir, 'kubeconfig')} had mode 0644, open to other users; set it to 0600`,
        `certkit: warning: ${join(dir, 'pki')} had mode 0755, open to other users; set it to 0700`,
        `certkit: warning: ${join(dir, 'state.db')} had mode 0640, open to other users; set it to 0600`,
      ]);
      const read = await callApi(dir, third.url, 'GET', '/api/v1/namespaces/default/secrets/after-restart');
      assert.equal(read.status, 200);
      await assertOwnerOnly(dir, 'after a start that fixed modes');
      assert.equal(await third.stop(), 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a second up or apiserver on a data dir in use exits 1 with one line; after kill -9 of the first a new one starts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-data-dir-'));
    try {
      const first = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
      const created = await callApi(dir, first.url, 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'acknowledged' },
        data: { a: '1' },
      });
      assert.equal(created.status, 201);
      const kubeconfig = await readFile(join(dir, 'kubeconfig'), 'utf8');

      for (const command of ['up', 'apiserver']) {
        const second = await runCli([command, '--data-dir', dir, '--port', '0']);
        assert.equal(second.code, 1, `${command}: ${second.stdout}${second.stderr}`);
        assert.equal(second.stderr.trim().split('\n').length, 1, second.stderr);
        assert.match(
          second.stderr,
          new RegExp(`^certkit: data dir ${dir} is in use by another certkit process`),
        );
        assert.equal(second.stdout, '');
      }
      // The first server's clients are unaffected: its kubeconfig still names its address.
      assert.equal(await readFile(join(dir, 'kubeconfig'), 'utf8'), kubeconfig);
      assert.equal(
        (await callApi(dir, first.url, 'GET', '/api/v1/namespaces/default/configmaps/acknowledged')).status,
        200,
      );

      // The lock dies with its process, however it ends: no stale lock blocks the next start.
      first.child.kill('SIGKILL');
      await first.exited;
      const next = await startCli(['up', '--data-dir', dir, '--port', '0']);
      const read = await callApi(dir, next.url, 'GET', '/api/v1/namespaces/default/configmaps/acknowledged');
      assert.equal(read.status, 200, 'the write acknowledged before the SIGKILL was kept');
      assert.equal(await next.stop('SIGINT'), 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a state.db that is not a database: exit 1 with one line naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-data-dir-'));
    try {
      await writeFile(join(dir, 'state.db'), 'not a database\n', { mode: 0o600 });
      const result = await runCli(['up', '--data-dir', dir, '--port', '0']);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.stderr, `certkit: ${join(dir, 'state.db')}: file is not a database\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
