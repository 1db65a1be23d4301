import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Requests of any shape against the real API server: malformed percent-escapes are 400s, with or without a
 * token, and neither they nor a failing log sink can end the process (this test runner) or stop it serving.
 */

describe('malformed request targets', () => {
  let t: TestServer;
  const errors: Record<string, unknown>[] = [];
  before(async () => {
    t = await startTestServer({ log: (entry) => entry.level === 'error' && errors.push(entry) });
  });
  after(async () => {
    await t.close();
  });

  it('answers a bad escape in the path with 400 BadRequest, before and after authentication', async () => {
    // `/%zz` without a token used to answer 401 and then end the process from the request log.
    for (const anonymous of [true, false]) {
      for (const path of [
        '/%zz',
        '/api/v1/namespaces/%zz/configmaps',
        '/api/v1/namespaces/default/secrets/%',
      ]) {
        const res = await t.fetch('GET', path, { anonymous });
        assert.equal(res.status, 400, `${path} anonymous=${anonymous}`);
        assert.equal(res.json.kind, 'Status');
        assert.equal(res.json.reason, 'BadRequest');
        assert.match(res.json.message, /^invalid URL escape "%(zz|)"$/);
      }
    }
    assert.equal((await t.fetch('GET', '/healthz', { anonymous: true })).status, 200);
  });
  it('answers escapes that are not UTF-8 in a path segment with 400 BadRequest', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const res = await t.fetch(method, '/api/v1/namespaces/%ff%fe/configmaps/x', { body: {} });
      assert.equal(res.status, 400, method);
      assert.equal(res.json.reason, 'BadRequest');
      assert.match(res.json.message, /not UTF-8/);
    }
  });
  it('takes dot segments as names, refused with 400, never resolved to the path above', async () => {
    // Resolved, DELETE .../configmaps/.. deleted the namespace, and a list in namespace ".." listed all.
    assert.equal(
      (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'dots' } } })).status,
      201,
    );
    const cm = { metadata: { name: 'kept' } };
    assert.equal((await t.fetch('POST', '/api/v1/namespaces/dots/configmaps', { body: cm })).status, 201);
    for (const [method, name] of [
      ['DELETE', '..'],
      ['DELETE', '%2e%2E'],
      ['GET', '..'],
      ['GET', '.'],
      ['PUT', '.%2e'],
    ]) {
      const res = await t.fetch(method, `/api/v1/namespaces/dots/configmaps/${name}`, {
        body: cm,
        pathAsIs: true,
      });
      assert.equal(res.status, 400, `${method} ${name}: ${res.text}`);
      assert.equal(res.json.reason, 'BadRequest');
      assert.match(res.json.message, /^Name parameter invalid: "\.\.?": may not be '\.\.?'$/);
    }
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/dots')).json.status.phase, 'Active');
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/dots/configmaps/kept')).status, 200);
    const listed = await t.fetch('GET', '/api/v1/namespaces/dots/configmaps/../../default/configmaps', {
      pathAsIs: true,
    });
    assert.notEqual(listed.status, 200, 'a path climbing out of its namespace is not served');
    const none = await t.fetch('GET', '/api/v1/namespaces/../configmaps', { pathAsIs: true });
    assert.equal(none.status, 200);
    assert.deepEqual(none.json.items, [], 'namespace ".." holds nothing');
  });
  it('answers a bad escape in the query with 400 BadRequest', async () => {
    for (const query of ['labelSelector=%zz', 'limit=5&continue=%4', 'watch=%']) {
      const res = await t.fetch('GET', `/api/v1/namespaces/default/configmaps?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.json.reason, 'BadRequest');
    }
    // Valid escapes are decoded as before.
    const res = await t.fetch('GET', '/api/v1/namespaces/default/configmaps?labelSelector=a%3Db');
    assert.equal(res.status, 200);
  });
  it('survives clients that drop the connection mid-request and mid-answer', async () => {
    const url = new URL(t.url);
    const open = async () => {
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
      socket.on('error', () => {});
      await once(socket, 'secureConnect');
      return socket;
    };
    const head = (method: string, path: string, length: number) =>
      `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${t.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    // A body announced and cut short: the body read fails after the request was routed.
    const cut = await open();
    cut.write(head('POST', '/api/v1/namespaces/default/configmaps', 1000) + '{"metadata":');
    await new Promise((r) => setTimeout(r, 50));
    cut.destroy();
    // A list dropped while it is being sent.
    for (let i = 0; i < 3; i++) {
      await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: `bulk-${i}` }, data: { x: 'y'.repeat(500_000) } },
      });
    }
    const dropped = await open();
    dropped.write(head('GET', '/api/v1/namespaces/default/configmaps', 0));
    await once(dropped, 'data');
    dropped.destroy();
    // A watch whose client goes away.
    const watcher = await open();
    watcher.write(head('GET', '/api/v1/namespaces/default/configmaps?watch=true', 0));
    await once(watcher, 'data');
    watcher.destroy();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/bulk-0')).status, 200);
  });
  it('answers a read at a resourceVersion not reached yet with 504, not logged as a server failure', async () => {
    // The 504 Timeout (ResourceVersionTooLarge) is the answer kube-apiserver gives after waiting for it; it
    // was logged as 'request failed' like an exception.
    const res = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/x?resourceVersion=99999');
    assert.equal(res.status, 504);
    assert.equal(res.json.details.causes[0].reason, 'ResourceVersionTooLarge');
  });
  it('keeps serving after all of them, none of them logged as a server failure', async () => {
    const res = await t.fetch('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(res.status, 200);
    assert.deepEqual(errors, []);
  });
});

describe('a log sink that throws', () => {
  let t: TestServer;
  const lines: Record<string, unknown>[] = [];
  before(async () => {
    t = await startTestServer({
      log: (entry) => {
        lines.push(entry);
        // Every request logs once it is answered (in a `finally`): all of them fail here.
        if (entry.level === 'debug') throw new Error('log sink down');
      },
    });
  });
  after(async () => {
    await t.close();
  });

  it('leaves every answer intact and the server serving', async () => {
    for (let i = 0; i < 3; i++) {
      const created = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: `logged-${i}` }, data: { a: 'b' } },
      });
      assert.equal(created.status, 201);
      assert.equal((await t.fetch('GET', '/%zz', { anonymous: true })).status, 400);
      assert.equal((await t.fetch('GET', `/api/v1/namespaces/default/configmaps/logged-${i}`)).status, 200);
    }
    // The guard logged each failure once, naming the request.
    const failures = lines.filter((l) => l.msg === 'request failed');
    assert.ok(failures.length >= 9, `${failures.length} failures logged`);
    assert.ok(failures.every((l) => typeof l.method === 'string' && typeof l.path === 'string'));
    assert.ok(failures.some((l) => l.path === '/%zz'));
  });
});
