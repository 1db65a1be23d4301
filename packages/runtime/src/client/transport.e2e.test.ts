import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  isInternalError,
  isNotFound,
  isServiceUnavailable,
  isTooManyRequests,
  StatusError,
} from '@certkit/apimachinery';
import { configMaps, leases } from './builtins.ts';
import { KubeClient } from './kube-client.ts';
import {
  type Handler,
  type LocalServer,
  sendJson,
  startLocalServer,
  statusBody,
} from '@certkit/testenv/http/local-server';
import type { RequestInfo } from './transport.ts';

/** Protocol behaviour against a scripted local HTTP server: retries, error decoding, headers, metrics. */

const servers: LocalServer[] = [];
const clients: KubeClient[] = [];
after(async () => {
  for (const c of clients) c.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(
  handler: Handler,
  options: { onRequest?: (i: RequestInfo) => void; token?: string } = {},
) {
  const server = await startLocalServer(handler);
  servers.push(server);
  const kube = new KubeClient({ server: server.url, qps: -1, ...options });
  clients.push(kube);
  return { server, kube };
}

const cm = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'ns' },
  data: { a: '1' },
};

describe('Retry-After', () => {
  it('retries a 429 with Retry-After after that many seconds, then succeeds', async () => {
    const codes: number[] = [];
    const { server, kube } = await setup(
      (_req, res, i) => {
        if (i < 2)
          sendJson(res, 429, statusBody(429, 'TooManyRequests', 'slow down'), { 'Retry-After': '1' });
        else sendJson(res, 200, cm);
      },
      { onRequest: (info) => codes.push(info.code) },
    );
    const started = performance.now();
    const got = await kube.resource(configMaps).get('ns', 'x');
    const elapsed = performance.now() - started;
    assert.equal(got.metadata?.name, 'x');
    assert.equal(server.requests.length, 3);
    assert.deepEqual(codes, [429, 429, 200]);
    assert.ok(elapsed >= 1950 && elapsed < 3500, `took ${elapsed} ms`);
  });

  it('retries 5xx with Retry-After too, and gives up after 10 retries', async () => {
    const { server, kube } = await setup((_req, res) =>
      sendJson(res, 503, statusBody(503, 'ServiceUnavailable', 'not ready'), { 'Retry-After': '0' }),
    );
    const err = await kube
      .resource(configMaps)
      .create('ns', cm)
      .catch((e: unknown) => e);
    assert.ok(isServiceUnavailable(err), String(err));
    assert.equal(server.requests.length, 11, 'one request and 10 retries');
  });

  it('re-sends the same body on every retry', async () => {
    const bodies: string[] = [];
    const { kube } = await setup(async (req, res, i) => {
      req.pause();
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      bodies.push(Buffer.concat(chunks).toString());
      if (i === 0) sendJson(res, 500, statusBody(500, 'InternalError', 'boom'), { 'Retry-After': '0' });
      else sendJson(res, 200, cm);
    });
    await kube.resource(configMaps).patch('ns', 'x', 'merge', { data: { a: '2' } });
    assert.deepEqual(bodies, ['{"data":{"a":"2"}}', '{"data":{"a":"2"}}']);
  });

  it('encodes the body as each attempt is written, not once for the exchange (docs/adr/1225)', async () => {
    const bodies: string[] = [];
    let encodings = 0;
    const { kube } = await setup(async (req, res, i) => {
      req.pause();
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      bodies.push(Buffer.concat(chunks).toString());
      // Not encoded again until the answer asks for a retry.
      assert.equal(encodings, i + 1);
      if (i === 0) sendJson(res, 500, statusBody(500, 'InternalError', 'boom'), { 'Retry-After': '0' });
      else sendJson(res, 200, cm);
    });
    const patch = {
      toJSON() {
        encodings++;
        return { data: { a: '3' } };
      },
    };
    await kube.resource(configMaps).patch('ns', 'x', 'merge', patch);
    assert.equal(encodings, 2);
    assert.deepEqual(bodies, ['{"data":{"a":"3"}}', '{"data":{"a":"3"}}']);
  });

  it('does not retry a 429 without Retry-After', async () => {
    const { server, kube } = await setup((_req, res) =>
      sendJson(res, 429, statusBody(429, 'TooManyRequests', 'no')),
    );
    await assert.rejects(kube.resource(configMaps).get('ns', 'x'), isTooManyRequests);
    assert.equal(server.requests.length, 1);
  });

  it('rejects a watch answered with 429', async () => {
    const { kube } = await setup((_req, res) =>
      sendJson(res, 429, statusBody(429, 'TooManyRequests', 'storage is (re)initializing')),
    );
    const err = await kube
      .resource(configMaps)
      .watch('ns', { resourceVersion: '1' })
      .catch((e: unknown) => e);
    assert.ok(isTooManyRequests(err));
    assert.match((err as Error).message, /initializing/);
  });

  it('stops waiting when the signal aborts', async () => {
    const { kube } = await setup((_req, res) =>
      sendJson(res, 429, statusBody(429, 'TooManyRequests', 'later'), { 'Retry-After': '30' }),
    );
    const started = performance.now();
    await assert.rejects(kube.resource(configMaps).get('ns', 'x', { signal: AbortSignal.timeout(200) }), {
      name: 'TimeoutError',
    });
    assert.ok(performance.now() - started < 2000);
  });
});

describe('errors without a Status body', () => {
  it("word the error as client-go's NewGenericServerResponse", async () => {
    const { kube } = await setup((req, res) => {
      if (req.url?.includes('/leases/')) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found');
        return;
      }
      res.writeHead(500, { 'Content-Type': 'text/html' }).end('<html>proxy error</html>');
    });
    const err = await kube
      .resource(configMaps)
      .get('ns', 'x')
      .catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.ok(isInternalError(err));
    assert.equal(err.code, 500);
    assert.equal(
      err.message,
      'an error on the server ("<html>proxy error</html>") has prevented the request from succeeding (get configmaps x)',
    );
    assert.equal(err.status.details?.causes?.[0]?.reason, 'UnexpectedServerResponse');

    const notFound = await kube
      .resource(leases)
      .get('ns', 'l')
      .catch((e: unknown) => e);
    assert.ok(isNotFound(notFound));
    assert.equal(
      (notFound as Error).message,
      'the server could not find the requested resource (get leases.coordination.k8s.io l)',
    );
  });
});

describe('requests', () => {
  it('send the user agent, bearer token, JSON content type and query parameters', async () => {
    const { server, kube } = await setup((_req, res) => sendJson(res, 200, cm), { token: 'sekret' });
    await kube.resource(configMaps).create('ns', cm, { dryRun: true, fieldManager: 'certkit' });
    const [req] = server.requests;
    assert.match(
      req.headers['user-agent'] ?? '',
      /^certkit\/\d+\.\d+\.\d+ \(linux\/x64\)$|^certkit\/\S+ \(\w+\/\w+\)$/,
    );
    assert.equal(req.headers.authorization, 'Bearer sekret');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/api/v1/namespaces/ns/configmaps?dryRun=All&fieldManager=certkit');
  });

  it('put the server URL path in front and encode paths as the URL parser does', async () => {
    const server = await startLocalServer((_req, res) => sendJson(res, 200, cm));
    servers.push(server);
    const kube = new KubeClient({ server: `${server.url}/k8s/clusters/c1/`, qps: -1 });
    clients.push(kube);
    // (A name with `/` is refused before it is sent, as client-go refuses it: path-segments.e2e.test.ts.)
    await kube.resource(configMaps).get('ns', 'a b:ü');
    await kube.getJson('/version');
    await kube.getJson('/api/x y/{z}?');
    await kube.getJson('/api/v1/./namespaces/../x');
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/k8s/clusters/c1/api/v1/namespaces/ns/configmaps/a%20b%3A%C3%BC',
        '/k8s/clusters/c1/version',
        '/k8s/clusters/c1/api/x%20y/%7Bz%7D%3F',
        '/k8s/clusters/c1/api/v1/x',
      ],
    );
    assert.ok(server.requests.every((r) => r.headers.host === server.url.slice('http://'.length)));
  });

  it('use one keep-alive connection for sequential requests', async () => {
    const { server, kube } = await setup((_req, res) => sendJson(res, 200, cm));
    const client = kube.resource(configMaps);
    for (let i = 0; i < 5; i++) await client.get('ns', 'x');
    const sockets = new Set(server.requests.map((r) => r.socket));
    assert.equal(sockets.size, 1);
  });

  it('report every exchange to onRequest with verb, resource and code', async () => {
    const seen: RequestInfo[] = [];
    const { kube } = await setup(
      (req, res) => {
        if (req.method === 'DELETE') sendJson(res, 404, statusBody(404, 'NotFound', 'gone'));
        else sendJson(res, 200, req.url?.includes('/leases') ? { items: [], metadata: {} } : cm);
      },
      { onRequest: (info) => seen.push(info) },
    );
    await kube.resource(configMaps).get('ns', 'x');
    await kube.resource(configMaps).update(cm);
    await kube.resource(leases).list(undefined);
    await kube
      .resource(configMaps)
      .delete('ns', 'x')
      .catch(() => {});
    assert.deepEqual(
      seen.map(({ verb, resource, code }) => `${verb} ${resource} ${code}`),
      [
        'get configmaps 200',
        'update configmaps 200',
        'list leases.coordination.k8s.io 200',
        'delete configmaps 404',
      ],
    );
    assert.ok(seen.every((i) => i.durationMs >= 0));
  });

  it('report connection failures with code 0', async () => {
    const seen: RequestInfo[] = [];
    const server = await startLocalServer(() => {});
    const url = server.url;
    await server.close();
    const kube = new KubeClient({ server: url, qps: -1, onRequest: (i) => seen.push(i) });
    clients.push(kube);
    await assert.rejects(kube.resource(configMaps).get('ns', 'x'), { code: 'ECONNREFUSED' });
    assert.deepEqual(
      seen.map((i) => i.code),
      [0],
    );
  });

  it('fail after close()', async () => {
    const { kube } = await setup((_req, res) => sendJson(res, 200, cm));
    kube.close();
    await assert.rejects(kube.resource(configMaps).get('ns', 'x'), /closed/);
  });
});
