/**
 * A port the controller cannot listen on, through the real CLI: `certkit up` and `certkit controller` given a
 * taken --metrics-bind-address or --acme-http01-listen-address exit 1 with one line naming the flag and the
 * way out, before saying they run (no banner, no JSON log line). A second `certkit controller` on one machine
 * meets the first case with the default --metrics-bind-address.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CERTKIT_BIN, certkitEnv, type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';

const FLAGS = {
  'metrics-bind-address':
    'perhaps by another certkit controller; stop it or choose another --metrics-bind-address (0 turns /metrics off)',
  'acme-http01-listen-address':
    'perhaps by a web server or another certkit controller; stop it or choose another ' +
    '--acme-http01-listen-address (the ACME server must reach it on port 80, forwarded if need be)',
} as const;

describe('a taken port of the controller', () => {
  let dir: string;
  let taken: Server;
  let port: number;
  let cluster: RunningCli;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-listen-'));
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
    cluster = await startCli(['up', '--data-dir', join(dir, 'cluster'), '--port', '0']);
  });
  after(async () => {
    await cluster?.stop('SIGTERM');
    await new Promise((resolve) => taken.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  for (const [flag, advice] of Object.entries(FLAGS)) {
    it(`up --${flag}: one line naming the flag, exit 1, and no banner`, async () => {
      const result = await runCli([
        'up',
        ...['--data-dir', join(dir, `up-${flag}`), '--port', '0', `--${flag}`, `127.0.0.1:${port}`],
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.doesNotMatch(result.stdout, /listening/, 'said it runs before failing');
      assert.equal(
        result.stderr,
        `certkit: --${flag} 127.0.0.1:${port}: 127.0.0.1:${port} is already in use (EADDRINUSE), ${advice}\n`,
      );
    });

    it(`controller --${flag}: the same line, before it says what it watches`, async () => {
      const result = await runCli([
        'controller',
        ...['--kubeconfig', join(dir, 'cluster', 'kubeconfig'), '--leader-elect=false'],
        // The other listener off, so that the one under test is the only one.
        ...(flag === 'metrics-bind-address' ? [] : ['--metrics-bind-address', '0']),
        `--${flag}`,
        `127.0.0.1:${port}`,
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `certkit: --${flag} 127.0.0.1:${port}: 127.0.0.1:${port} is already in use (EADDRINUSE), ${advice}\n`,
      );
    });
  }

  it('a controller whose listeners bind says what it watches once they are bound, and stops cleanly', async () => {
    const controller = spawn(
      process.execPath,
      [
        CERTKIT_BIN,
        'controller',
        ...['--kubeconfig', join(dir, 'cluster', 'kubeconfig'), '--leader-elect=false'],
        ...['--metrics-bind-address', '127.0.0.1:0', '--acme-http01-listen-address', '127.0.0.1:0'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: certkitEnv() },
    );
    let stdout = '';
    let stderr = '';
    controller.stdout.on('data', (d) => (stdout += d));
    controller.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => controller.once('exit', resolve));
    const deadline = Date.now() + 30_000;
    while (!stdout.includes('\n') && controller.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    controller.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /^certkit controller: watching all namespaces on https:\/\/127\.0\.0\.1:\d+\n$/);
    assert.equal(stderr, '');
  });
});
