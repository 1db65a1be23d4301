import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * `Expect: 100-continue` over the real HTTPS server, as Go's server answers it: the invitation to send the
 * body comes when the handler reads it, so a request refused before that (401, 413) gets its final answer
 * without one, and its body is never sent. Node's default sent 100 Continue to every such request at once,
 * an unauthenticated one included.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t.close();
});

async function connect(): Promise<{ socket: TLSSocket; received: () => string }> {
  const url = new URL(t.url);
  const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {});
  await once(socket, 'secureConnect');
  return { socket, received: () => Buffer.concat(chunks).toString('utf8') };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
}

const post = (length: number, auth: boolean) =>
  'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  `${auth ? `Authorization: Bearer ${t.token}\r\n` : ''}Content-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

describe('Expect: 100-continue', () => {
  it('an unauthenticated request gets its 401 with no 100 Continue, and the connection closes', async () => {
    const { socket, received } = await connect();
    socket.write(post(100, false));
    await once(socket, 'close');
    assert.match(received(), /^HTTP\/1\.1 401 Unauthorized\r\n/);
    assert.doesNotMatch(received(), /100 Continue/);
  });

  it('a body declared over 3 MiB gets its 413 with no 100 Continue', async () => {
    const { socket, received } = await connect();
    socket.write(post(100_000_000, true));
    await once(socket, 'close');
    assert.match(received(), /^HTTP\/1\.1 413 Payload Too Large\r\n/);
    assert.match(received(), /"reason":"RequestEntityTooLarge"/);
  });

  it('an accepted request is invited once its body is read, and the connection is kept', async () => {
    const { socket, received } = await connect();
    const body = JSON.stringify({ metadata: { name: 'expecting' } });
    socket.write(post(Buffer.byteLength(body), true));
    await until(() => received().length > 0);
    assert.equal(received(), 'HTTP/1.1 100 Continue\r\n\r\n');
    socket.write(body);
    await until(() => /\r\n\r\n\{.*\}$/s.test(received().slice(25)));
    assert.match(received().slice(25), /^HTTP\/1\.1 201 Created\r\n/);
    socket.write(
      `GET /api/v1/namespaces/default/configmaps/expecting HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nConnection: close\r\n\r\n`,
    );
    await once(socket, 'close');
    assert.match(received(), /HTTP\/1\.1 200 OK\r\n[\s\S]*"name":"expecting"/);
  });
});
