import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv, runCli } from '@certkit/testenv/cli/cli-process';

/** A --data-dir that cannot be one: exit 1 and one line naming the flag, the path and what is wrong with it. */

const run = promisify(execFile);
// A directory certkit may not write to needs a user other than root, who may write anywhere.
const asNobody =
  process.getuid?.() === 0 && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0
    ? false
    : 'needs root and setpriv, to run certkit as the user nobody';

describe('certkit up with a data dir it cannot use', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-data-dir-errors-'));
    file = join(dir, 'a-file');
    await writeFile(file, 'not a directory\n');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [what, dataDir, says] of [
    ['a file', () => file, 'is a file, not a directory'],
    ['below a file', () => join(file, 'data'), 'a part of the path is a file, not a directory'],
    // Node's recursive mkdir never returns there (it loops on the ENOENT of an existing parent).
    ['under /proc', () => '/proc/certkit-data', 'cannot be made there (ENOENT)'],
  ] as const) {
    it(`${what}: exit 1, one line`, async () => {
      const result = await runCli(['up', '--data-dir', dataDir(), '--port', '0']);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stderr, `certkit: --data-dir ${dataDir()}: ${says}; choose another --data-dir\n`);
      assert.equal(result.stdout, '');
    });
  }

  it('in a directory the user may not write to: exit 1, one line', { skip: asNobody }, async () => {
    // Readable and searchable by everyone (so that nobody reaches it), writable by root alone.
    const parent = join(dir, 'root-only');
    await mkdir(parent);
    await chmod(dir, 0o755);
    await chmod(parent, 0o755);
    const dataDir = join(parent, 'data');
    const nobody = ['--reuid=65534', '--regid=65534', '--clear-groups'];
    const result = await run(
      'setpriv',
      [...nobody, process.execPath, CERTKIT_BIN, 'up', '--data-dir', dataDir, '--port', '0'],
      { env: { ...certkitEnv(), NODE_DISABLE_COMPILE_CACHE: '1' } },
    ).catch((err: { code: number; stdout: string; stderr: string }) => err);
    assert.equal('code' in result ? result.code : 0, 1, result.stderr);
    assert.equal(
      result.stderr,
      `certkit: --data-dir ${dataDir}: permission denied (EACCES): certkit needs to create and write files there; choose another --data-dir\n`,
    );
  });
});
