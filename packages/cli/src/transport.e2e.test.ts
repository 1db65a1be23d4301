import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * `certkit apiserver` as attacked from outside: a request that used to end the process, and more idle TCP
 * connections than the process has file descriptors. It must keep answering /healthz and its users.
 */

const run = promisify(execFile);
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

/** Low enough that 2,000 connections held open would take every descriptor the server has. */
const OPEN_FILE_LIMIT = 256;

describe('certkit apiserver under hostile clients', () => {
  let dir: string;
  let server: RunningCli;
  let ca: string;
  let token: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-transport-'));
    server = await startCli(['apiserver', '--data-dir', dir, '--port', '0'], {
      openFileLimit: OPEN_FILE_LIMIT,
    });
    ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
    token = (await readFile(join(dir, 'token'), 'utf8')).trim();
  });
  after(async () => {
    await server.stop('SIGINT');
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, withToken: boolean) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${server.url}${path}`,
        { ca, agent: false, headers: withToken ? { Authorization: `Bearer ${token}` } : {} },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('answers `curl -k https://…/%zz` with 400 and goes on serving', async () => {
    const { stdout } = await run('curl', ['-sk', '-w', '\n%{http_code}', `${server.url}/%zz`]);
    const [body, code] = stdout.split('\n');
    assert.equal(code, '400');
    assert.equal(JSON.parse(body).reason, 'BadRequest');
    assert.equal((await get('/healthz', false)).status, 200);
    assert.equal(server.child.exitCode, null);
  });

  it(`keeps answering with 2,000 idle connections open and ${OPEN_FILE_LIMIT} file descriptors`, async () => {
    const port = Number(new URL(server.url).port);
    const idle: Socket[] = [];
    try {
      for (let i = 0; i < 2000; i += 250) {
        await Promise.all(
          Array.from({ length: 250 }, () => {
            const socket = connect(port, '127.0.0.1');
            socket.on('error', () => {});
            idle.push(socket);
            return new Promise((resolve) => socket.once('connect', resolve).once('close', resolve));
          }),
        );
      }
      assert.equal((await get('/healthz', false)).status, 200);
      const list = await get('/api/v1/namespaces', true);
      assert.equal(list.status, 200);
      assert.ok(JSON.parse(list.body).items.length >= 1);
      if (hasKubectl) {
        const { stdout } = await run(
          'kubectl',
          ['--kubeconfig', join(dir, 'kubeconfig'), 'get', 'namespaces'],
          {
            env: { ...process.env, KUBECACHEDIR: join(dir, 'kube-cache') },
          },
        );
        assert.match(stdout, /default/);
      }
      assert.equal(server.child.exitCode, null);
    } finally {
      for (const socket of idle) socket.destroy();
    }
  });
});

describe('certkit apiserver out of file descriptors', () => {
  it('survives failing to accept connections, and serves again once descriptors are free', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-emfile-'));
    // So few descriptors that authenticated connections, which no bound closes, exhaust them.
    const server = await startCli(['apiserver', '--data-dir', dir, '--port', '0'], { openFileLimit: 64 });
    const agent = new Agent({
      ca: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8'),
      keepAlive: true,
      maxSockets: 200,
    });
    try {
      const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
      const get = (path: string) =>
        new Promise<number>((resolve) => {
          const req = request(
            `${server.url}${path}`,
            { agent, headers: { Authorization: `Bearer ${token}` } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', () => resolve(0));
          req.end();
        });
      const statuses = await Promise.all(Array.from({ length: 150 }, () => get('/api/v1/namespaces')));
      // Some were answered, some could not be accepted: the process ran out of descriptors...
      assert.ok(statuses.includes(200), `statuses: ${statuses}`);
      assert.ok(statuses.includes(0), 'every connection was accepted: the limit did not bite');
      // ...and lives on (libuv sheds the connections it cannot accept), serving as soon as they are gone.
      agent.destroy();
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(server.child.exitCode, null, server.output());
      const healthz = await new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}/healthz`, { ca: agent.options.ca, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(healthz, 200);
    } finally {
      agent.destroy();
      await server.stop('SIGINT');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
