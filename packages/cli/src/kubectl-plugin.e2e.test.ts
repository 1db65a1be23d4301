import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv, type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';
import { kubectlPath, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

const execFileAsync = promisify(execFile);

/**
 * certkit as cmctl's kubectl plugin: scripts written for `kubectl cert-manager …` keep working when
 * `kubectl-cert_manager` on PATH runs certkit, whose commands take cmctl's names, flags and KUBECONFIG.
 */

describe('kubectl cert-manager (certkit as the kubectl plugin)', { skip: kubectlSkip }, () => {
  let dir: string;
  let cli: RunningCli;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-plugin-'));
    cli = await startCli(['up', '--data-dir', join(dir, 'data'), '--port', '0']);
    const plugin = join(dir, 'kubectl-cert_manager');
    await writeFile(
      plugin,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CERTKIT_BIN)} "$@"\n`,
    );
    await chmod(plugin, 0o755);
    const base = certkitEnv();
    env = { ...base, PATH: `${dir}:${base.PATH}`, KUBECONFIG: join(dir, 'data', 'kubeconfig') };
  });
  after(async () => {
    await cli?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await execFileAsync(kubectlPath!, args, { env, timeout: 30_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('answers cmctl commands through kubectl, against the cluster of $KUBECONFIG', async () => {
    const check = await kubectl('cert-manager', 'check', 'api', '--wait=30s');
    assert.equal(check.code, 0, check.stderr);
    assert.equal(check.stdout, 'The cert-manager API is ready\n');
    const missing = await kubectl('cert-manager', 'renew', 'nope', '-n', 'default');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'certkit: certificates.cert-manager.io "nope" not found\n');
  });
});
