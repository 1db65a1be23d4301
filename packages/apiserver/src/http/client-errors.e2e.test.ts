import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Requests Node's HTTP parser refuses, over the real HTTPS server: the client reads Go's answer (400 or 431)
 * rather than a reset connection, and request lines and headers up to Go's 1 MiB are served as kube-apiserver
 * serves them.
 */

describe('requests the HTTP parser refuses', () => {
  let t: TestServer;
  const errors: Record<string, unknown>[] = [];
  before(async () => {
    t = await startTestServer({ log: (entry) => entry.level === 'error' && errors.push(entry) });
  });
  after(async () => {
    await t.close();
  });

  /** Sends the bytes on a TLS connection of its own and reads everything until the server closes it. */
  async function exchange(bytes: string): Promise<string> {
    const url = new URL(t.url);
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A reset after the answer (the server closes while unread request bytes remain) ends the read too.
    socket.on('error', () => {});
    await once(socket, 'secureConnect');
    socket.write(Buffer.from(bytes, 'latin1'));
    await once(socket, 'close');
    return Buffer.concat(chunks).toString('latin1');
  }

  const head = (path: string, extra = '') =>
    `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n${extra}Connection: close\r\n\r\n`;

  it('answers a malformed request line or header with 400 Bad Request, over TLS', async () => {
    for (const bytes of [
      'GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`,
      `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Control: a\x01b\r\n\r\n',
    ]) {
      const answer = await exchange(bytes);
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(bytes));
      assert.match(answer, /\r\n\r\n400 Bad Request$/);
    }
  });

  it('lets the client read the answer when a large body follows the refused request', async () => {
    // The body keeps coming after the 400: closing at once with those bytes unread reset the connection.
    const body = 'x'.repeat(400_000);
    const answer = await exchange(
      `POST /api?\xff HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  });

  it('serves request lines and headers up to 1 MiB, as Go, and answers 431 beyond', async () => {
    // 20 KiB of path: Node's default limit (16 KiB) reset the connection without an answer.
    const long = await exchange(head(`/api/v1/namespaces/default/configmaps/${'a'.repeat(20_000)}`));
    assert.match(long, /^HTTP\/1\.1 404 Not Found\r\n/);
    const selector = await exchange(
      head(`/api/v1/namespaces/default/configmaps?labelSelector=a+in+(${'b,'.repeat(100_000)}c)`),
    );
    assert.match(selector, /^HTTP\/1\.1 200 OK\r\n/);
    const huge = await exchange(head('/healthz', `X-Padding: ${'p'.repeat(1 << 20)}\r\n`));
    assert.match(huge, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  });

  it('keeps serving, and logs no internal error', async () => {
    const res = await t.fetch('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(errors, []);
  });
});
