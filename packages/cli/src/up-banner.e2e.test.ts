/**
 * `certkit up`'s banner suggests kubectl commands; without kubectl on PATH it says so and where to get it,
 * instead of leaving a new user with "kubectl: command not found".
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli } from '@certkit/testenv/cli/cli-process';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const HINT = '(kubectl is not on PATH: install it from https://kubernetes.io/docs/tasks/tools/)';

const run = promisify(execFile);

describe('certkit up: the banner and kubectl', () => {
  let dir: string;
  let withKubectl: string;
  let without: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-banner-'));
    withKubectl = join(dir, 'bin-with');
    without = join(dir, 'bin-without');
    await mkdir(withKubectl);
    await mkdir(without);
    // Any executable named kubectl is what the shell would run; this one prints the arguments it was given.
    await writeFile(join(withKubectl, 'kubectl'), '#!/bin/sh\nprintf "%s\\n" "$@"\n');
    await chmod(join(withKubectl, 'kubectl'), 0o755);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [what, path, hinted] of [
    ['without kubectl on PATH: says where to get it', 'without', true],
    ['with kubectl on PATH: no hint', 'with', false],
  ] as const) {
    it(what, async () => {
      const up = await startCli(['up', '--data-dir', join(dir, path), '--port', '0'], {
        env: { PATH: path === 'with' ? withKubectl : without },
      });
      try {
        // The banner is one write, which a pipe may still deliver in pieces: wait for its last line.
        for (let i = 0; i < 100 && !/stop: {7}Ctrl-C\n/.test(up.output()); i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.match(up.output(), /stop: {7}Ctrl-C\n/);
        assert.equal(up.output().includes(HINT), hinted, up.output());
      } finally {
        assert.equal(await up.stop('SIGTERM'), 0, up.output());
      }
    });
  }

  it('prints commands that a shell runs as printed, with a data dir whose path has a space and a quote', async () => {
    const dataDir = join(dir, "it's my data");
    const up = await startCli(['up', '--data-dir', dataDir, '--port', '0'], { env: { PATH: withKubectl } });
    try {
      for (let i = 0; i < 100 && !/stop: {7}Ctrl-C\n/.test(up.output()); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const commands = up
        .output()
        .split('\n')
        .map((line) => /^ {2}(?:try: {8}| {12})(kubectl .*)$/.exec(line)?.[1])
        .filter((line) => line !== undefined);
      assert.equal(commands.length, 2, up.output());
      const { stdout: first } = await run('/bin/sh', ['-c', commands[0]], { env: { PATH: withKubectl } });
      assert.deepEqual(first.trimEnd().split('\n'), [
        '--kubeconfig',
        join(dataDir, 'kubeconfig'),
        'get',
        'namespaces',
      ]);
      const { stdout: second } = await run('/bin/sh', ['-c', commands[1]], { env: { PATH: withKubectl } });
      const args = second.trimEnd().split('\n');
      assert.deepEqual(args.slice(0, 2), ['--kubeconfig', join(dataDir, 'kubeconfig')]);
      assert.deepEqual(args.slice(2, 4), ['apply', '-f']);
      assert.ok(existsSync(join(args[4], '01-selfsigned-issuer.yaml')), args[4]);
    } finally {
      assert.equal(await up.stop('SIGTERM'), 0, up.output());
    }
  });
});
