/**
 * The embedded ACME HTTP-01 listener through the real CLI: `certkit up --acme-http01-listen-address` binds it
 * next to the API server and releases it on exit; a taken port stops the process with one line; bad values
 * of the three --acme-http01-* flags are one usage line and exit 2, on `up` and on `controller`.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CERTKIT_BIN, certkitEnv, runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { freePort } from '@certkit/testenv/net/free-ports';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: 'www.example.com' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('certkit up --acme-http01-listen-address', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-http01-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the challenge path on the address while it runs, and frees it on exit', async () => {
    const port = await freePort();
    const cli = await startCli([
      'up',
      ...['--data-dir', join(dir, 'a'), '--port', '0'],
      ...['--acme-http01-listen-address', `127.0.0.1:${port}`, '--acme-http01-self-check-port', String(port)],
    ]);
    try {
      assert.match(cli.output(), new RegExp(`ACME HTTP-01 challenges answered on 127\\.0\\.0\\.1:${port}`));
      // The listener binds as the controller starts, just after the banner.
      let answer: { status: number; body: string } | undefined;
      for (let i = 0; i < 100 && !answer; i++) {
        answer = await get(port, '/.well-known/acme-challenge/not-presented').catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      assert.deepEqual(answer, { status: 404, body: '404 page not found\n' });
      assert.deepEqual(await get(port, '/'), { status: 404, body: '404 page not found\n' });
    } finally {
      assert.equal(await cli.stop('SIGTERM'), 0);
    }
    await assert.rejects(get(port, '/'), /ECONNREFUSED/);
  });

  it('certkit controller binds it too, against the cluster of a kubeconfig', async () => {
    // An `up` (without the flag) is the cluster; the controller runs as it would against any other.
    const cluster = await startCli(['up', '--data-dir', join(dir, 'cluster'), '--port', '0']);
    const port = await freePort();
    const controller = spawn(
      process.execPath,
      [
        CERTKIT_BIN,
        'controller',
        ...['--kubeconfig', join(dir, 'cluster', 'kubeconfig'), '--leader-elect=false'],
        ...['--metrics-bind-address', '0', '--acme-http01-listen-address', `127.0.0.1:${port}`],
      ],
      { stdio: 'ignore', env: certkitEnv() },
    );
    try {
      let answer: { status: number; body: string } | undefined;
      const deadline = Date.now() + 30_000;
      while (!answer && Date.now() < deadline) {
        answer = await get(port, '/.well-known/acme-challenge/x').catch(async () => {
          await new Promise((r) => setTimeout(r, 200));
          return undefined;
        });
      }
      assert.deepEqual(answer, { status: 404, body: '404 page not found\n' });
    } finally {
      controller.kill('SIGTERM');
      await new Promise((resolve) => controller.once('exit', resolve));
      await cluster.stop('SIGTERM');
    }
  });

  it('is off unless given', async () => {
    const cli = await startCli(['up', '--data-dir', join(dir, 'b'), '--port', '0']);
    try {
      assert.doesNotMatch(cli.output(), /HTTP-01/);
    } finally {
      await cli.stop('SIGTERM');
    }
  });

  it('stops with one line naming the flag when the port is taken', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await runCli([
        'up',
        ...['--data-dir', join(dir, 'c'), '--port', '0', '--acme-http01-listen-address', `127.0.0.1:${port}`],
      ]);
      assert.equal(result.code, 1);
      // One line, and no banner before it (listen-errors.e2e.test.ts: the metrics port, and `controller`).
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `certkit: --acme-http01-listen-address 127.0.0.1:${port}: 127.0.0.1:${port} is already in use ` +
          '(EADDRINUSE), perhaps by a web server or another certkit controller; stop it or choose another ' +
          '--acme-http01-listen-address (the ACME server must reach it on port 80, forwarded if need be)\n',
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  // Every value is checked in controller-flags.test.ts; here, that both commands stop at once with one line.
  const BAD: Record<string, [string[], string][]> = {
    up: [
      [
        ['--acme-http01-listen-address', '8089'],
        '--acme-http01-listen-address: "8089" is not host:port or :port',
      ],
      [
        ['--acme-http01-self-check-port=-1'],
        '--acme-http01-self-check-port: "-1" is not a port from 1 to 65535',
      ],
    ],
    controller: [
      [
        ['--acme-http01-solver-nameservers', 'dns.google'],
        '--acme-http01-solver-nameservers: "dns.google" is not',
      ],
    ],
  };
  for (const command of ['up', 'controller']) {
    it(`${command}: refuses bad values with one usage line and exit 2, before starting anything`, async () => {
      for (const [flags, message] of BAD[command]) {
        const dataDir = ['--data-dir', join(dir, `bad-${command}`)];
        const result = await runCli([command, ...(command === 'up' ? dataDir : []), ...flags]);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(result.stdout, '');
        const lines = result.stderr.trim().split('\n');
        assert.equal(lines.length, 1, result.stderr);
        assert.ok(lines[0].startsWith(`certkit: ${message}`), lines[0]);
      }
    });
  }
});
