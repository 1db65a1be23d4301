/**
 * `certkit up`'s banner suggests kubectl commands; without kubectl on PATH it says so and where to get it,
 * instead of leaving a new user with "kubectl: command not found".
 */

import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli } from '@certkit/testenv/cli/cli-process';

const HINT = '(kubectl is not on PATH: install it from https://kubernetes.io/docs/tasks/tools/)';

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
    // Any executable named kubectl is what the shell would run.
    await writeFile(join(withKubectl, 'kubectl'), '#!/bin/sh\nexit 0\n');
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
        assert.equal(await up.stop('SIGTERM'), 0);
      }
    });
  }
});
