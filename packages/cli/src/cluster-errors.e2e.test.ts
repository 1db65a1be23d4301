import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * A user's kubeconfig gone wrong, met by every command that talks to a cluster: the API server not running,
 * a CA that is not the server's, a token the server does not know. Each says so in one line (as kubectl
 * and cmctl do, in words rather than the socket's error code) and exits 1.
 */

/** Every command that takes --kubeconfig and ends, with what it needs besides. */
const COMMANDS: string[][] = [
  ['status'],
  ['status', 'certificate', 'web'],
  ['renew', 'web'],
  ['renew', '--all', '-A'],
  ['approve', 'web-1'],
  ['deny', 'web-1'],
  ['inspect', 'secret', 'web-tls'],
  ['secrets', 'audit'],
  ['check', 'api'],
];

describe('cluster commands with a kubeconfig that does not work', () => {
  let dir: string;
  let cli: RunningCli;
  let text: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-cluster-errors-'));
    cli = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    text = await readFile(join(dir, 'kubeconfig'), 'utf8');
  });
  after(async () => {
    await cli?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function kubeconfig(name: string, edit: (text: string) => string): Promise<string> {
    const path = join(dir, `${name}.kubeconfig`);
    const edited = edit(text);
    assert.notEqual(edited, text, `${name}: the kubeconfig was changed`);
    await writeFile(path, edited, { mode: 0o600 });
    return path;
  }

  async function expectOneLine(path: string, line: RegExp): Promise<void> {
    for (const args of COMMANDS) {
      const result = await runCli([...args, '--kubeconfig', path]);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, line, args.join(' '));
      assert.equal(result.stderr.split('\n').length, 2, `${args.join(' ')}: one line: ${result.stderr}`);
    }
  }

  it('the API server not running: "refused the connection: is it running?"', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const path = await kubeconfig('down', (t) =>
      t.replace(/server: "?https:\/\/[^\s"]+"?/, `server: "https://127.0.0.1:${port}"`),
    );
    await expectOneLine(
      path,
      new RegExp(
        `^certkit: the API server at (https://)?127\\.0\\.0\\.1:${port} refused the connection: is it running\\?\\n$`,
      ),
    );
  });

  it('a server that accepts the connection and never answers: given up after the TLS handshake timeout (10 s), as client-go', async () => {
    const held = new Set<Socket>();
    const silent = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const path = await kubeconfig('silent', (t) =>
        t.replace(/server: "?https:\/\/[^\s"]+"?/, `server: "https://127.0.0.1:${port}"`),
      );
      const started = Date.now();
      const result = await runCli(['status', '--kubeconfig', path]);
      const took = Date.now() - started;
      assert.equal(result.code, 1, result.stderr);
      assert.equal(
        result.stderr,
        `certkit: the API server at 127.0.0.1:${port} did not answer in time (TLS handshake timeout)\n`,
      );
      assert.ok(took >= 9_000 && took < 25_000, `gave up after ${took} ms`);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a kubeconfig without the server’s CA: the certificate is not trusted, and where to look', async () => {
    const path = await kubeconfig('no-ca', (t) => t.replace(/^\s*certificate-authority-data:.*\n/m, ''));
    await expectOneLine(
      path,
      /^certkit: the API server's certificate is not trusted: [^;\n]+ \(is the kubeconfig's certificate-authority-data the server's CA\?\)\n$/,
    );
  });

  it('a token the server does not know: kubectl’s "You must be logged in to the server (Unauthorized)"', async () => {
    const path = await kubeconfig('bad-token', (t) => t.replace(/token: .*/, 'token: "not-the-token"'));
    await expectOneLine(
      path,
      /^certkit: You must be logged in to the server \(Unauthorized\): the kubeconfig’s credentials were not accepted\n$/,
    );
  });
});
