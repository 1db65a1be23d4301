import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { guardRequests } from './guard.ts';

/**
 * The request guard on a real HTTP server: handlers that throw, reject, fail after answering, or write to a
 * finished response, and a log sink that throws itself. The process (this test runner) must survive all of
 * them, and the server keep answering.
 */

type Handler = (res: import('node:http').ServerResponse) => Promise<void>;

const handlers: Record<string, Handler> = {
  '/throws': () => {
    throw new Error('thrown synchronously');
  },
  '/rejects': async () => {
    await Promise.resolve();
    throw new Error('rejected later');
  },
  '/fails-mid-answer': async (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"items":[');
    await new Promise((r) => setImmediate(r));
    throw new Error('failed while streaming');
  },
  '/writes-after-end': async (res) => {
    res.end('done');
    res.write('more');
  },
  '/ok': async (res) => {
    res.end('ok');
  },
};

let server: Server;
let base: string;
const logged: Record<string, unknown>[] = [];
let logThrows = false;

before(async () => {
  server = createServer(
    guardRequests(
      // Not async, so that /throws throws synchronously out of the handler the guard calls.
      (req, res) => handlers[req.url ?? ''](res),
      (entry) => {
        logged.push(entry);
        if (logThrows) throw new Error('log sink down');
      },
    ),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function get(path: string): Promise<{ status: number; text: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(`${base}${path}`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', (err) => resolve({ error: err.message }));
      res.on('aborted', () => resolve({ error: 'aborted' }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

describe('guardRequests', () => {
  it('answers a handler that throws or rejects with a 500 InternalError Status and one log line', async () => {
    for (const path of ['/throws', '/rejects']) {
      logged.length = 0;
      const res = await get(path);
      assert.ok('status' in res, path);
      assert.equal(res.status, 500, path);
      const status = JSON.parse(res.text);
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'InternalError');
      assert.match(status.message, /^Internal error occurred: (thrown synchronously|rejected later)$/);
      assert.equal(logged.length, 1, path);
      assert.equal(logged[0].method, 'GET');
      assert.equal(logged[0].path, path);
      assert.equal(logged[0].level, 'error');
    }
  });
  it('closes the connection when the answer had begun, rather than appending a Status to it', async () => {
    logged.length = 0;
    const res = await get('/fails-mid-answer');
    // The client never sees a complete, well-formed answer: the connection is cut.
    assert.ok('error' in res || !res.text.endsWith(']}'), JSON.stringify(res));
    assert.ok(!('status' in res && res.text.includes('InternalError')));
    assert.equal(logged.length, 1);
    assert.equal(logged[0].path, '/fails-mid-answer');
    assert.deepEqual(await get('/ok'), { status: 200, text: 'ok' });
  });
  it('survives a write after the end of the answer', async () => {
    logged.length = 0;
    const res = await get('/writes-after-end');
    assert.deepEqual(res, { status: 200, text: 'done' });
    // The 'error' event of the late write arrives on the next tick.
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(logged.length, 1);
    assert.match(String(logged[0].err), /write after end/);
    assert.deepEqual(await get('/ok'), { status: 200, text: 'ok' });
  });
  it('still answers 500 when the log sink itself throws', async () => {
    logThrows = true;
    try {
      const res = await get('/throws');
      assert.ok('status' in res);
      assert.equal(res.status, 500);
      assert.deepEqual(await get('/ok'), { status: 200, text: 'ok' });
    } finally {
      logThrows = false;
    }
  });
});
