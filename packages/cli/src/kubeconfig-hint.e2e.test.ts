import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';

/**
 * A second terminal beside `npm start`, without `export KUBECONFIG=.certkit/kubeconfig`: the commands that talk
 * to a cluster find no kubeconfig, and say where `certkit up` wrote one.
 */

const run = promisify(execFile);

describe('no kubeconfig, in the directory certkit up runs in', () => {
  let cwd: string;
  let home: string;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'certkit-kubeconfig-hint-'));
    home = join(cwd, 'home');
    await mkdir(home);
  });
  after(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  /** `certkit ARGS` in `cwd` with no KUBECONFIG, no ~/.kube/config and no in-cluster service account. */
  async function certkit(...args: string[]) {
    const env: NodeJS.ProcessEnv = { ...certkitEnv(), HOME: home };
    delete env.KUBECONFIG;
    delete env.KUBERNETES_SERVICE_HOST;
    return run(process.execPath, [CERTKIT_BIN, ...args], { cwd, env }).then(
      () => assert.fail(`certkit ${args.join(' ')} succeeded without a kubeconfig`),
      (err: { code: number; stderr: string }) => err,
    );
  }

  it('without .certkit/kubeconfig: the plain error', async () => {
    const result = await certkit('status');
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `certkit: no kubeconfig: KUBECONFIG is not set and ${join(home, '.kube', 'config')} does not exist\n`,
    );
  });

  it('with .certkit/kubeconfig beside it: the same line, saying how to use that one', async () => {
    await mkdir(join(cwd, '.certkit'));
    await writeFile(join(cwd, '.certkit', 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
    for (const args of [['status'], ['renew', '--all'], ['controller']]) {
      const result = await certkit(...args);
      assert.equal(result.code, 1, args.join(' '));
      assert.equal(
        result.stderr,
        `certkit: no kubeconfig: KUBECONFIG is not set and ${join(home, '.kube', 'config')} does not exist; ` +
          'certkit up wrote .certkit/kubeconfig here: export KUBECONFIG=.certkit/kubeconfig, or pass --kubeconfig .certkit/kubeconfig\n',
        args.join(' '),
      );
    }
  });
});
