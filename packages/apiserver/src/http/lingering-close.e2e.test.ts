import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * A client that sends a large body to a path that answers without reading it, on a connection that closes
 * after the answer (`Connection: close`): it reads the whole answer. Node's own close reset the connection
 * with the body's bytes unread, and the client lost the answer (a 160 KB OpenAPI document).
 */

describe('closing a connection after its answer', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  function send(method: string, path: string, body: string): Promise<{ status: number; length: number }> {
    const agent = new Agent({ ca: t.caCertPem, keepAlive: false });
    const { hostname, port } = new URL(t.url);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          hostname,
          port,
          path,
          method,
          agent,
          headers: {
            Authorization: `Bearer ${t.token}`,
            'Content-Type': 'application/json',
            'Content-Length': String(body.length),
          },
        },
        (res) => {
          let length = 0;
          res.on('data', (c: Buffer) => (length += c.length));
          res.on('end', () => resolve({ status: res.statusCode!, length }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    }).finally(() => agent.destroy()) as Promise<{ status: number; length: number }>;
  }

  it('lets the client read a large answer while it still sends a body nobody reads', async () => {
    // An OpenAPI document of about 400 KB (a CRD with a long description): answered at once, without
    // reading the body, and long enough to be read still when the reset came.
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.linger.example.com' },
      spec: {
        group: 'linger.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', description: 'd'.repeat(300_000) } },
          },
        ],
      },
    };
    assert.equal(
      (await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd }))
        .status,
      201,
    );
    let expected = 0;
    for (let tries = 0; expected < 300_000 && tries < 100; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      expected = Buffer.byteLength((await t.fetch('GET', '/openapi/v2')).text);
    }
    for (let i = 0; i < 3; i++) {
      const res = await send('PUT', '/openapi/v2', 'x'.repeat(3_145_000));
      assert.deepEqual(res, { status: 200, length: expected });
    }
  });

  for (const framing of ['Content-Length: 1000000000', 'Transfer-Encoding: chunked']) {
    it(`a body over 3 MiB (${framing}): 413 while the client sends, then the connection closes`, async () => {
      // Kept alive, the server read whatever the client sent after the 413 (a gigabyte, at its pace); Go's
      // server closes a connection with more than 256 KiB of body unread.
      const url = new URL(t.url);
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
      socket.on('error', () => {});
      let answer = '';
      let ended = false;
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      socket.on('end', () => (ended = true));
      socket.on('close', () => (ended = true));
      await new Promise((r) => socket.once('secureConnect', r));
      socket.write(
        `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`,
      );
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      const started = Date.now();
      while (!ended && Date.now() - started < 15_000) {
        const framed = framing.startsWith('Transfer')
          ? Buffer.concat([Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n')])
          : chunk;
        if (!socket.write(framed)) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setImmediate(r));
      }
      socket.destroy();
      assert.ok(ended, 'the connection was still open after 15 s of body');
      assert.match(answer, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
      assert.match(answer, /\r\nConnection: close\r\n/i);
    });
  }

  it('still closes the connection after the answer', async () => {
    const agent = new Agent({ ca: t.caCertPem, keepAlive: false });
    const { hostname, port } = new URL(t.url);
    const closed = await new Promise<boolean>((resolve, reject) => {
      const req = request({ hostname, port, path: '/healthz', agent }, (res) => {
        res.resume();
        res.on('end', () => req.socket!.once('close', () => resolve(true)));
      });
      req.on('error', reject);
      req.end();
    });
    agent.destroy();
    assert.equal(closed, true);
  });
});
