import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/**
 * HTTP/1.1 pipelining against the real HTTPS server: requests sent back to back on one connection, in one
 * write, by a client that reads nothing. They are handled in turn, as Go's server handles them; they used to
 * run all at once, each holding an inflight slot and its whole answer in memory behind the unread first one.
 */

describe('pipelined requests', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    assert.equal(
      (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'pipe' } } })).status,
      201,
    );
    for (const name of ['a', 'b']) {
      const body = { metadata: { name }, data: { big: 'x'.repeat(400_000) } };
      assert.equal((await t.fetch('POST', '/api/v1/namespaces/pipe/configmaps', { body })).status, 201);
    }
  });
  after(async () => {
    await t.close();
  });

  const inflight = () =>
    Number(
      /apiserver_current_inflight_requests\{request_kind="readOnly"\} (\d+)/.exec(
        t.server.metrics.render(),
      )?.[1],
    );

  async function open(): Promise<TLSSocket> {
    const socket = connect({
      host: '127.0.0.1',
      port: Number(new URL(t.url).port),
      ca: t.caCertPem,
      servername: 'localhost',
    });
    await once(socket, 'secureConnect');
    return socket;
  }

  /**
   * The status codes of the answers read from the connection so far (the bodies here never contain a status
   * line); `until(count)` waits for that many, or the connection's end.
   */
  function answers(socket: TLSSocket) {
    const codes: string[] = [];
    let text = '';
    let wake = () => {};
    const done = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      for (
        let at = text.indexOf('HTTP/1.1 ');
        at !== -1 && at + 12 <= text.length;
        at = text.indexOf('HTTP/1.1 ')
      ) {
        codes.push(text.slice(at + 9, at + 12));
        text = text.slice(at + 12);
      }
      // Keep only what may begin a status line split across reads.
      if (text.indexOf('HTTP/1.1 ') === -1) text = text.slice(-11);
      wake();
    });
    return {
      codes,
      async until(count: number): Promise<string[]> {
        while (codes.length < count && !socket.destroyed) {
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), done]);
        }
        return codes.slice(0, count);
      },
    };
  }

  it('runs one request of a connection at a time, however many were sent and however slowly it reads', async () => {
    const socket = await open();
    const read = answers(socket);
    socket.pause();
    const list = `GET /api/v1/namespaces/pipe/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n\r\n`;
    socket.write(list.repeat(60));
    // The first list waits for the client to read; the rest used to run at once beside it (60 inflight, 60
    // answers of 800 kB buffered).
    await eventually(() => inflight() > 0, 'the first list in flight');
    await sleep(1000);
    assert.equal(inflight(), 1);
    // Read, all are answered in order.
    socket.resume();
    const lines = await read.until(60);
    assert.deepEqual(lines, Array(60).fill('200'));
    socket.destroy();
    await eventually(() => inflight() === 0, 'no list in flight');
  });

  it('answers thousands of cheap pipelined requests in order, those past the bound with 429, on a connection that stays up', async () => {
    const socket = await open();
    const read = answers(socket);
    const version = `GET /version HTTP/1.1\r\nHost: x\r\n\r\n`;
    const health = `GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n\r\n`;
    const secrets = `GET /api/v1/namespaces/pipe/secrets HTTP/1.1\r\nHost: x\r\n\r\n`;
    socket.write((version + health + secrets).repeat(700));
    const lines = await read.until(2100);
    const expected = Array.from({ length: 2100 }, (_, i) => ['200', '200', '401'][i % 3]);
    assert.equal(lines.length, 2100);
    // The first and the 64 waiting behind it are served; after them, those parsed in the same read wait for
    // no turn but are refused (a 429 each, in its place).
    assert.deepEqual(lines.slice(0, 65), expected.slice(0, 65));
    lines.forEach((line, i) => assert.ok(line === expected[i] || line === '429', `answer ${i}: ${line}`));
    assert.ok(lines.includes('429'), 'a read of 16 KiB holds more than 65 of these requests');
    socket.write(health);
    assert.deepEqual((await read.until(2101)).slice(2100), ['200']);
    socket.destroy();
  });

  it('handles a pipelined request whose body follows in the same packet after the one before it is answered', async () => {
    const socket = await open();
    const body = (name: string) => JSON.stringify({ metadata: { name } });
    const post = (name: string) =>
      `POST /api/v1/namespaces/pipe/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body(name).length}\r\n\r\n${body(name)}`;
    const read = answers(socket);
    socket.write(post('p1') + post('p2') + post('p1'));
    assert.deepEqual(await read.until(3), ['201', '201', '409']);
    socket.destroy();
  });
});
