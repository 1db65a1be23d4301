import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Request headers sent a byte at a time (slowloris) on a connection that has already authenticated: every
 * request has the time kube-apiserver gives it to send its headers (Go's ReadHeaderTimeout, 32 s; the
 * connection bounds' `firstRequestTimeoutMs`, shortened here), not only the first. Node's own 60 s, checked
 * every 30 s, kept such a connection for up to 90 s.
 */

describe('slow request headers', () => {
  let t: TestServer;
  const headerTimeoutMs = 1500;
  before(async () => {
    t = await startTestServer({ connectionLimits: { firstRequestTimeoutMs: headerTimeoutMs } });
  });
  after(async () => {
    await t.close();
  });

  it('closes a connection whose next request headers take longer than the header timeout', async () => {
    const socket: TLSSocket = connect({
      host: '127.0.0.1',
      port: Number(new URL(t.url).port),
      ca: t.caCertPem,
      servername: 'localhost',
    });
    socket.on('error', () => {});
    await once(socket, 'secureConnect');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const closed = once(socket, 'close');
    socket.write(`GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n\r\n`);
    while (!text.includes('"gitVersion"')) await sleep(20);
    const started = performance.now();
    socket.write('GET /version HTTP/1.1\r\n');
    let trickled = 0;
    while (!socket.destroyed && performance.now() - started < 20_000) {
      await sleep(250);
      if (!socket.destroyed) socket.write(`X-${trickled++}: a\r\n`);
    }
    await closed;
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 6, `closed after ${seconds.toFixed(1)} s of trickled headers (limit 1.5 s)`);
    assert.ok(seconds >= 1.4, `closed after ${seconds.toFixed(1)} s, before the limit`);
    assert.equal((await t.fetch('GET', '/healthz')).status, 200);
  });
});
