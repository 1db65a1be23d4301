import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/**
 * The HTTPS server's transport as a client (or an attacker) meets it: plain HTTP on the HTTPS port, the TLS
 * versions and suites offered, and thousands of connections that never start TLS or never authenticate.
 */

const run = promisify(execFile);

/**
 * Opens `count` TCP connections that send nothing, a few hundred at a time (the listen backlog is finite).
 * `closed()` counts those the server has closed since.
 */
async function openIdle(port: number, count: number): Promise<{ sockets: Socket[]; closed: () => number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  for (let i = 0; i < count; i += 250) {
    const batch = Array.from({ length: Math.min(250, count - i) }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.once('close', () => closed++);
      sockets.push(socket);
      return new Promise((resolve) => socket.once('connect', resolve).once('close', resolve));
    });
    await Promise.all(batch);
  }
  return { sockets, closed: () => closed };
}

/** Resolves when the socket closes, whatever error it had before. */
const closeOf = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

/** A GET on a fresh connection (no pooled one), optionally with the token. */
function freshGet(t: TestServer, path: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const req = request(`${t.url}${path}`, { ca: t.caCertPem, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTPS transport', () => {
  let t: TestServer;
  const handshakeTimeoutMs = 1500;
  before(async () => {
    t = await startTestServer({
      connectionLimits: { handshakeTimeoutMs, firstRequestTimeoutMs: 1500, maxUnauthenticated: 100 },
    });
  });
  after(async () => {
    await t.close();
  });

  it('answers plain HTTP on the HTTPS port with a 400, as Go’s net/http does', async () => {
    for (const line of ['GET /healthz HTTP/1.1', 'POST /api/v1/namespaces HTTP/1.1', 'OPTIONS * HTTP/1.1']) {
      const socket = connect(t.server.port, '127.0.0.1');
      socket.end(`${line}\r\nHost: localhost\r\n\r\n`);
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      await once(socket, 'close');
      assert.equal(
        Buffer.concat(chunks).toString('latin1'),
        'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n',
        line,
      );
    }
    // curl, as a user would try it.
    const { stdout } = await run('curl', ['-s', '-i', `http://127.0.0.1:${t.server.port}/healthz`]).catch(
      (err: { stdout: string }) => err,
    );
    assert.match(stdout, /^HTTP\/1\.0 400 Bad Request\r\n/);
    assert.match(stdout, /Client sent an HTTP request to an HTTPS server\./);
  });

  it('offers TLS 1.2 with ECDHE and AEAD suites only, and TLS 1.3', async () => {
    const handshake = async (...args: string[]) => {
      const running = run('openssl', ['s_client', '-connect', `127.0.0.1:${t.server.port}`, ...args], {
        timeout: 10_000,
      });
      // Nothing to send: s_client ends its session at the end of its input.
      running.child.stdin?.end();
      const result = await running.catch((err: { stdout: string; stderr: string }) => err);
      const negotiated = /Cipher is (\S+)/.exec(result.stdout)?.[1];
      return negotiated === '(NONE)' ? undefined : negotiated;
    };
    // The generated serving key is ECDSA.
    for (const suite of [
      'ECDHE-ECDSA-AES128-GCM-SHA256',
      'ECDHE-ECDSA-AES256-GCM-SHA384',
      'ECDHE-ECDSA-CHACHA20-POLY1305',
    ]) {
      assert.equal(await handshake('-tls1_2', '-cipher', suite), suite);
    }
    for (const suite of [
      'ECDHE-ECDSA-AES128-SHA',
      'ECDHE-ECDSA-AES256-SHA',
      'ECDHE-ECDSA-AES128-SHA256',
      'ECDHE-ECDSA-AES256-SHA384',
    ]) {
      assert.equal(await handshake('-tls1_2', '-cipher', suite), undefined, `${suite} must be refused`);
    }
    assert.equal(await handshake('-tls1_3'), 'TLS_AES_256_GCM_SHA384');
    assert.equal(await handshake('-tls1_1'), undefined, 'TLS 1.1 must be refused');
  });

  it('keeps answering /healthz and authenticated clients while 2,000 idle connections are open', async () => {
    // An authenticated keep-alive connection from before the flood: it must survive it.
    const agent = new Agent({ ca: t.caCertPem, keepAlive: true, maxSockets: 1 });
    const pooledGet = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(
          `${t.url}/api/v1/namespaces`,
          { agent, headers: { Authorization: `Bearer ${t.token}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    assert.equal((await pooledGet()).status, 200);

    const idle = await openIdle(t.server.port, 2000);
    // Past the bound, each new connection closed the oldest idle one.
    await eventually(
      () => idle.closed() >= 1900,
      'the server to close idle connections past the bound',
      5000,
      20,
    );
    assert.ok(t.server.unauthenticatedConnections <= 100, `${t.server.unauthenticatedConnections} held`);

    assert.equal(await freshGet(t, '/healthz'), 200);
    assert.equal(await freshGet(t, '/api/v1/namespaces/default/configmaps', t.token), 200);
    assert.equal(await freshGet(t, '/api/v1/namespaces/default/configmaps'), 401);
    assert.deepEqual(await pooledGet(), { status: 200, reused: true });

    // The rest go at the handshake deadline.
    await eventually(() => idle.closed() === 2000, 'the handshake deadline', handshakeTimeoutMs + 2000, 20);
    agent.destroy();
  });

  it('closes a handshake that is begun and not finished at the deadline, however it trickles', async () => {
    const socket = connect(t.server.port, '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    const started = Date.now();
    // A TLS record header, then one byte at a time: Node's own handshake timeout would restart at each.
    socket.write(Buffer.from([0x16, 0x03, 0x01]));
    const trickle = setInterval(() => socket.writable && socket.write(Buffer.from([0x00])), 200);
    await closeOf(socket);
    clearInterval(trickle);
    const took = Date.now() - started;
    assert.ok(
      took >= handshakeTimeoutMs - 100 && took < handshakeTimeoutMs + 1000,
      `closed after ${took} ms`,
    );
  });

  it('closes a connection that completes the handshake but sends no request', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.caCertPem });
    socket.on('error', () => {});
    await once(socket, 'secureConnect');
    const started = Date.now();
    await closeOf(socket);
    const took = Date.now() - started;
    assert.ok(took >= 1400 && took < 3000, `closed after ${took} ms`);
  });

  it('keeps a connection that asked for /healthz past the deadline, not one that only got 401s', async () => {
    const open = async (path: string) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.caCertPem });
      socket.on('error', () => {});
      await once(socket, 'secureConnect');
      let received = '';
      socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await eventually(() => /\r\n\r\n/.test(received), `an answer to ${path}`, 2000, 20);
      return { socket, status: /^HTTP\/1\.1 (\d+)/.exec(received)?.[1] };
    };
    const monitor = await open('/healthz');
    const refused = await open('/api/v1/namespaces');
    assert.equal(monitor.status, '200');
    assert.equal(refused.status, '401');
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(refused.socket.destroyed, true, 'the 401 connection outlived the first-request deadline');
    assert.equal(monitor.socket.destroyed, false, 'the /healthz connection was closed');
    monitor.socket.destroy();
  });
});
