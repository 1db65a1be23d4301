import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { loopbackServingCertificates } from '@certkit/testenv/pki/loopback-serving';
import { configMaps } from './builtins.ts';
import { ConnectionPool } from './http1-pool.ts';
import { KubeClient } from './kube-client.ts';
import { startLocalServer } from '@certkit/testenv/http/local-server';
import type { RequestInfo } from './transport.ts';

/**
 * The unary connection pool against real servers: a scripted TCP server for what node:http servers do not do
 * on demand (closing a kept-alive connection as a request arrives, malformed or close-delimited answers), and
 * node:https for TLS.
 */

interface RawRequest {
  head: string;
  socket: Socket;
  /** The how-manieth connection it came on, from 0. */
  connection: number;
}

/**
 * A TCP server that hands every request (read up to the end of its head and Content-Length body) to `answer`,
 * which writes whatever bytes it likes to the socket.
 */
async function startRawServer(answer: (request: RawRequest, index: number) => void) {
  const requests: RawRequest[] = [];
  let connections = 0;
  const server: Server = createServer((socket) => {
    const connection = connections++;
    let buffered = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.subarray(end + 4 + length);
        const request = { head, socket, connection };
        answer(request, requests.push(request) - 1);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function raw(answer: (request: RawRequest, index: number) => void) {
  const server = await startRawServer(answer);
  const seen: RequestInfo[] = [];
  const kube = new KubeClient({ server: server.url, qps: -1, onRequest: (i) => seen.push(i) });
  cleanups.push(
    () => server.close(),
    () => kube.close(),
  );
  return { server, kube, seen, getJson: (path = '/x') => kube.getJson<Record<string, unknown>>(path) };
}

describe('connection reuse', () => {
  it('sends a request again at once when the server closed the kept-alive connection as it arrived', async () => {
    const { server, seen, getJson } = await raw((request, i) => {
      // The second request finds the server closing the idle connection: it never answers it.
      if (i === 1) request.socket.destroy();
      else request.socket.write(ok(`{"n":${i}}`));
    });
    assert.deepEqual(await getJson(), { n: 0 });
    assert.deepEqual(await getJson(), { n: 2 });
    assert.deepEqual(
      server.requests.map((r) => r.connection),
      [0, 0, 1],
    );
    assert.deepEqual(
      seen.map((i) => i.code),
      [200, 200],
      'one exchange each, as before',
    );
  });

  it('does not resend on a new connection that fails', async () => {
    const { server, seen, getJson } = await raw((request) => request.socket.destroy());
    await assert.rejects(getJson(), { code: 'ECONNRESET', message: 'socket hang up' });
    assert.equal(server.requests.length, 1);
    assert.deepEqual(
      seen.map((i) => i.code),
      [0],
    );
  });

  it('opens a new connection after Connection: close, a close-delimited body, or a short Keep-Alive', async () => {
    const { server, getJson } = await raw((request, i) => {
      if (i === 0) request.socket.write(ok('{"a":0}', 'Connection: close\r\n'));
      else if (i === 1) request.socket.end('HTTP/1.1 200 OK\r\n\r\n{"a":1}');
      else if (i === 2) request.socket.write(ok('{"a":2}', 'Keep-Alive: timeout=1\r\n'));
      else request.socket.write(ok(`{"a":${i}}`, 'Keep-Alive: timeout=60\r\n'));
    });
    for (let i = 0; i < 5; i++) assert.deepEqual(await getJson(), { a: i });
    assert.deepEqual(
      server.requests.map((r) => r.connection),
      [0, 1, 2, 3, 3],
    );
  });

  it('uses as many connections as requests in flight, and reuses them', async () => {
    const { server, getJson } = await raw((request, i) => {
      setTimeout(() => request.socket.write(ok(`{"i":${i}}`)), 20);
    });
    await Promise.all([getJson(), getJson(), getJson()]);
    await Promise.all([getJson(), getJson(), getJson()]);
    assert.equal(server.connections, 3);
    assert.equal(server.requests.length, 6);
  });
});

describe('answers', () => {
  it('reads chunked answers from node:http', async () => {
    // Written in two parts without a Content-Length, the answer goes out chunked.
    const server = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":"ConfigMap","metadata":{"name":"x"},');
      setTimeout(() => res.end('"data":{"a":"ü"}}'), 10);
    });
    const kube = new KubeClient({ server: server.url, qps: -1 });
    cleanups.push(
      () => server.close(),
      () => kube.close(),
    );
    const got = await kube.resource(configMaps).get('ns', 'x');
    assert.deepEqual(got.data, { a: 'ü' });
  });

  it('skips informational answers', async () => {
    const { getJson } = await raw((request) =>
      request.socket.write(`HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n${ok('{"final":true}')}`),
    );
    assert.deepEqual(await getJson(), { final: true });
  });

  it('fails on a malformed answer without resending, and reports a body cut short with its status', async () => {
    const { server, seen, getJson } = await raw((request, i) => {
      if (i === 0) request.socket.write('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n');
      else request.socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial"');
    });
    await assert.rejects(getJson(), { code: 'HPE_INVALID_RESPONSE' });
    await assert.rejects(getJson(), { code: 'ECONNRESET' });
    assert.equal(server.requests.length, 2);
    assert.deepEqual(
      seen.map((i) => i.code),
      [0, 200],
    );
  });
});

describe('abort and close', () => {
  it('rejects with the signal reason and closes the connection; the next request works', async () => {
    const { server, kube } = await raw((request, i) => {
      if (i > 0) request.socket.write(ok('{}'));
    });
    await assert.rejects(kube.getJson('/slow', { signal: AbortSignal.timeout(50) }), {
      name: 'TimeoutError',
    });
    const aborted = new AbortController();
    aborted.abort(new Error('never sent'));
    await assert.rejects(kube.getJson('/x', { signal: aborted.signal }), { message: 'never sent' });
    assert.deepEqual(await kube.getJson('/x'), {});
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.requests[0].socket.destroyed, true);
    assert.equal(server.requests.length, 2, 'the request aborted beforehand never went out');
  });

  it('fails requests in flight on close()', async () => {
    const { kube } = await raw(() => {});
    const pending = kube.getJson('/never');
    await new Promise((r) => setTimeout(r, 20));
    kube.close();
    await assert.rejects(pending, /closed|socket hang up/);
  });
});

describe('TLS', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-http1-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('presents a client certificate, verifies the server, and resumes the TLS session on new connections', async () => {
    const serving = await loopbackServingCertificates(dir);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=pool-client',
        '-keyout',
        join(dir, 'client.key'),
        '-out',
        join(dir, 'client.crt'),
      ],
      { stdio: 'ignore' },
    );
    const cert = await readFile(join(dir, 'client.crt'), 'utf8');
    const key = await readFile(join(dir, 'client.key'), 'utf8');
    const resumed: boolean[] = [];
    const server = createHttpsServer(
      { key: serving.keyPem, cert: serving.certPem, ca: cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        resumed.push(socket.isSessionReused());
        const body = JSON.stringify({ cn: socket.getPeerCertificate().subject.CN });
        // Connection: close makes every request open a connection, so the second one can resume.
        res.writeHead(200, { 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    });
    const port = (server.address() as AddressInfo).port;
    const pool = (secureContext = createSecureContext({ ca: serving.caCertPem, cert, key })) =>
      new ConnectionPool({ host: '127.0.0.1', port, tls: { secureContext, rejectUnauthorized: true } });
    const get = (p: ConnectionPool) =>
      p.request(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, undefined);

    const mutual = pool();
    cleanups.push(() => mutual.close());
    for (let i = 0; i < 3; i++) assert.equal((await get(mutual)).body, '{"cn":"pool-client"}');
    assert.equal(resumed[0], false);
    assert.ok(resumed.slice(1).some(Boolean), `later connections resumed the session: ${resumed}`);

    const noClientCert = pool(createSecureContext({ ca: serving.caCertPem }));
    cleanups.push(() => noClientCert.close());
    await assert.rejects(get(noClientCert));

    const untrusted = pool(createSecureContext({ cert, key }));
    cleanups.push(() => untrusted.close());
    await assert.rejects(get(untrusted), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });
});
