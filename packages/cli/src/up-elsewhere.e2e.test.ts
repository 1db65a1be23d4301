import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';
import { kubectlPath, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/**
 * `certkit up` run from a directory that is not the repository (the data dir elsewhere too): the commands it
 * prints under "try:" work as printed, from where it was run — the kubeconfig's path and the examples'.
 */

const run = promisify(execFile);

describe('certkit up from another directory', { skip: kubectlSkip }, () => {
  let cwd: string;
  let cli: RunningCli;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'certkit-elsewhere-'));
    cli = await startCli(['up', '--data-dir', join(cwd, 'state'), '--port', '0'], { cwd });
  });
  after(async () => {
    await cli?.stop();
    await rm(cwd, { recursive: true, force: true });
  });

  it('prints kubectl commands that work as they are from there: get namespaces, apply the examples', async () => {
    const hints = /^ {2}try: {8}(.*)\n {14}(.*)\n/m.exec(cli.output());
    assert.ok(hints, cli.output());
    const commands = [hints[1], ...hints[2].split(' && ')];
    assert.equal(commands.length, 3, hints[2]);
    for (const command of commands) {
      const [program, ...args] = command.split(' ');
      assert.equal(program, 'kubectl', command);
      const result = await run(kubectlPath!, args, { cwd }).catch((err: { stderr: string }) =>
        assert.fail(`${command}: ${err.stderr}`),
      );
      if (args.includes('apply')) assert.match(result.stdout, /certificate\.cert-manager\.io\/web created/);
    }
  });
});
