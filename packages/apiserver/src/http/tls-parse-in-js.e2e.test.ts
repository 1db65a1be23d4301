import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { loopbackServingCertificates } from '@certkit/testenv/pki/loopback-serving';
import { parseTlsConnectionsInJs } from './tls-parse-in-js.ts';

/**
 * Guards the private Node.js behaviour parseTlsConnectionsInJs relies on, on a bare node:https server (no API
 * server code in the way): if Node renames `_consumed`, or stops dropping a request that arrives while an
 * answer drains, these fail and say which, so the workaround is fixed or removed rather than silently inert.
 */

const LARGE_ANSWER = Buffer.alloc(8 * 1024 * 1024, 'x');
const LARGE_REQUEST = 'y'.repeat(1024 * 1024);

let dir: string;
let tls: { cert: string; key: string; ca: string };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tls-parse-in-js-'));
  const pki = await loopbackServingCertificates(dir);
  tls = { cert: pki.certPem, key: pki.keyPem, ca: pki.caCertPem };
});
after(() => rm(dir, { recursive: true, force: true }));

interface Observed {
  /** `_consumed` on each request's socket handle when the handler ran. */
  consumed: unknown[];
  /** The codes of the parse errors the server reported. */
  clientErrors: string[];
  /** The status lines the client read before the connection ended. */
  statuses: string[];
}

/**
 * A GET with an 8 MB answer and, while the client leaves that answer unread, a 1 MB POST behind it on the
 * same connection: Node's server stops reading the connection until the answer drains.
 */
async function largeRequestBehindLargeAnswer(setup: (server: Server) => void): Promise<Observed> {
  const observed: Observed = { consumed: [], clientErrors: [], statuses: [] };
  const server = createServer(
    { cert: tls.cert, key: tls.key },
    (req: IncomingMessage, res: ServerResponse) => {
      const handle = (req.socket as unknown as { _handle?: { _consumed?: unknown } })._handle;
      observed.consumed.push(handle?._consumed);
      if (req.method === 'GET') {
        res.end(LARGE_ANSWER);
        return;
      }
      req.resume();
      req.once('end', () => {
        res.statusCode = 201;
        res.end('created');
      });
    },
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    observed.clientErrors.push(err.code ?? err.message);
    socket.destroy();
  });
  setup(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const socket = tlsConnect({ host: '127.0.0.1', port, ca: tls.ca });
  try {
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {});
    await once(socket, 'secureConnect');
    const head = (method: string, body = '') =>
      `${method} / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    socket.pause();
    socket.write(head('GET'));
    await new Promise((r) => setTimeout(r, 300));
    socket.write(head('POST', LARGE_REQUEST));
    await new Promise((r) => setTimeout(r, 300));
    socket.resume();
    const statuses = () => [
      ...Buffer.concat(received)
        .toString('latin1')
        .matchAll(/HTTP\/1\.1 (\d+)/g),
    ];
    for (let waited = 0; statuses().length < 2 && !socket.destroyed && waited < 20_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    observed.statuses = statuses().map((m) => m[1]);
    return observed;
  } finally {
    socket.destroy();
    server.closeAllConnections();
    server.close();
  }
}

describe('parseTlsConnectionsInJs', () => {
  it('Node still reads TLS sockets natively, marks their handle `_consumed`, and drops a request behind a draining answer', async () => {
    const native = await largeRequestBehindLargeAnswer(() => {});
    assert.equal(
      native.consumed[0],
      true,
      'Node no longer marks a natively read handle `_consumed`: parseTlsConnectionsInJs sets a field Node ignores',
    );
    assert.deepEqual(
      // Node may report the error more than once as the connection comes down.
      { statuses: native.statuses, clientErrors: [...new Set(native.clientErrors)] },
      { statuses: ['200'], clientErrors: ['HPE_PAUSED'] },
      'a bare https server no longer drops the request with HPE_PAUSED: Node fixed it, parseTlsConnectionsInJs can go',
    );
  });

  it('with it, the request behind the draining answer is read and answered', async () => {
    const inJs = await largeRequestBehindLargeAnswer(parseTlsConnectionsInJs);
    assert.deepEqual(inJs, { consumed: [true, true], clientErrors: [], statuses: ['200', '201'] });
  });
});
