import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { startWebhookServer, type TestWebhookServer } from '@certkit/testenv/admission/webhook-server';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';

/**
 * `?timeout=` as kube-apiserver's request deadline filter reads it: a value Go's time.ParseDuration refuses is
 * a 400 on any request that is not long-running (before authentication, as the filter comes first), with the
 * parser's text; watches do not read it.
 */

describe('?timeout=', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses a malformed duration with 400 BadRequest and the parse error', async () => {
    for (const [value, reason] of [
      ['abc', 'time: invalid duration "abc"'],
      ['10', 'time: missing unit in duration "10"'],
      ['1e9s', 'time: unknown unit "e" in duration "1e9s"'],
      ['9999999999h', 'time: invalid duration "9999999999h"'],
    ]) {
      for (const [method, path, anonymous] of [
        ['GET', '/api/v1/namespaces/default/configmaps', false],
        ['POST', '/api/v1/namespaces/default/configmaps', false],
        ['GET', '/version', true],
      ] as const) {
        const res = await t.fetch(method, `${path}?timeout=${encodeURIComponent(value)}`, {
          anonymous,
          body: method === 'POST' ? { metadata: { name: 'never' } } : undefined,
        });
        assert.equal(res.status, 400, `${method} ${path} timeout=${value}: ${res.text}`);
        assert.equal(res.json.reason, 'BadRequest');
        assert.equal(res.json.message, `invalid timeout specified in the request URL - ${reason}`);
      }
    }
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/never')).status, 404);
  });

  it('takes well-formed ones (negative and zero too) and leaves watches alone', async () => {
    for (const value of ['30s', '1m0s', '-1s', '0', '1h']) {
      const res = await t.fetch('GET', `/api/v1/namespaces/default/configmaps?timeout=${value}`);
      assert.equal(res.status, 200, `timeout=${value}: ${res.text}`);
    }
    const watch = await t.fetch(
      'GET',
      '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&timeout=abc',
    );
    assert.equal(watch.status, 200, watch.text);
  });
});

/**
 * The deadline itself (--request-timeout, 1.5 s here): a create held by a slow admission webhook gets kube's
 * 504 when it passes, seen through client-node, kubectl and the Python client; a shorter `?timeout=` is
 * honoured and a longer one is not; a watch outlives it.
 */
describe('--request-timeout', { skip: kubectlSkip || pythonClientSkip }, () => {
  const TIMEOUT_MS = 1500;
  let t: TestServer;
  let webhook: TestWebhookServer;
  let workDir: string;
  let kubectl: Kubectl;
  let py: PythonClient;
  let core: CoreV1Api;
  let kc: KubeConfig;
  const ns = 'deadline';
  before(async () => {
    t = await startTestServer({ requestTimeoutMs: TIMEOUT_MS });
    // ConfigMaps named slow-* wait 4 s in admission; the others pass at once.
    webhook = await startWebhookServer(async (review) => {
      if (String(review.request.name).startsWith('slow-')) await new Promise((r) => setTimeout(r, 4000));
      return { allowed: true };
    });
    const res = await t.fetch(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      {
        body: {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'slow' },
          webhooks: [
            {
              name: 'slow.example.com',
              clientConfig: { url: `${webhook.url}/validate`, caBundle: webhook.caBundle },
              rules: [
                { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
              ],
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              timeoutSeconds: 10,
            },
          ],
        },
      },
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(
      (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status,
      201,
    );
    // The webhook applies once the server's cache has its configuration: until a create reaches it.
    for (let i = 0; webhook.reviews.length === 0; i++) {
      assert.ok(i < 100, 'the webhook was never called');
      await t.fetch('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { metadata: { name: `probe-${i}` } },
      });
      if (webhook.reviews.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    kc = new KubeConfig();
    kc.loadFromFile(t.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    workDir = await mkdtemp(join(tmpdir(), 'certkit-deadline-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
    py = pythonClientFor(t.kubeconfigPath);
  });
  after(async () => {
    await t?.close();
    await webhook?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('answers a create that outlives it with kube’s 504 Timeout, at the deadline', async () => {
    const started = performance.now();
    try {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'slow-node' } } });
      assert.fail('the create succeeded');
    } catch (err) {
      const elapsed = performance.now() - started;
      assert.ok(err instanceof ApiException, String(err));
      assert.equal(err.code, 504);
      assert.equal(err.headers['content-type'], 'text/plain; charset=utf-8');
      // kube's timeout filter encodes the Status itself: no kind or apiVersion.
      assert.deepEqual(JSON.parse(err.body as string), {
        metadata: {},
        status: 'Failure',
        message: 'Timeout: request did not complete within the allotted timeout',
        reason: 'Timeout',
        details: {},
        code: 504,
      });
      assert.ok(elapsed >= TIMEOUT_MS - 50 && elapsed < 3500, `answered after ${elapsed} ms`);
    }
    // client-go reads it as kube-apiserver's: a 504 the server may still be working on.
    const out = await kubectl.run('create', 'configmap', 'slow-kubectl', '-n', ns);
    assert.notEqual(out.code, 0);
    assert.match(
      out.stderr,
      /error: failed to create configmap: the server was unable to return a response in the time allotted, but may still be processing the request \(post configmaps\)/,
    );
  });

  it('honours a shorter ?timeout= and ignores a longer one', async () => {
    const out = await py.run(
      `
ns = ARGS
def timed(timeout, name):
    started = time.monotonic()
    try:
        core.api_client.call_api('/api/v1/namespaces/{namespace}/configmaps', 'POST', {'namespace': ns},
            [('timeout', timeout)], {'Content-Type': 'application/json', 'Accept': 'application/json'},
            body={'metadata': {'name': name}}, auth_settings=['BearerToken'], response_type='V1ConfigMap')
        return {'status': 201}
    except ApiException as e:
        return {'status': e.status, 'seconds': time.monotonic() - started, 'reason': json.loads(e.body)['reason']}
emit({'short': timed('300ms', 'slow-short'), 'long': timed('1h', 'slow-long')})
`,
      ns,
    );
    assert.equal(out.short.status, 504);
    assert.equal(out.short.reason, 'Timeout');
    assert.ok(out.short.seconds >= 0.25 && out.short.seconds < 1.4, `short: ${out.short.seconds} s`);
    assert.equal(out.long.status, 504);
    assert.ok(out.long.seconds >= 1.4 && out.long.seconds < 3.5, `long: ${out.long.seconds} s`);
  });

  it('closes the connection of a request whose body is still arriving at the deadline', async () => {
    const started = performance.now();
    const answer = await new Promise<{ status?: number; connection?: string; body: string }>(
      (resolve, reject) => {
        const url = new URL(`/api/v1/namespaces/${ns}/configmaps`, t.url);
        const req = request(url, {
          method: 'POST',
          ca: t.caCertPem,
          headers: {
            Authorization: `Bearer ${t.token}`,
            'Content-Type': 'application/json',
            'Content-Length': '1000',
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
        req.write('{"metadata":');
      },
    );
    const elapsed = performance.now() - started;
    assert.equal(answer.status, 504);
    assert.equal(answer.connection, 'close');
    assert.equal(JSON.parse(answer.body).reason, 'Timeout');
    assert.ok(elapsed >= TIMEOUT_MS - 50 && elapsed < 3500, `answered after ${elapsed} ms`);
  });

  it('leaves a watch running past it, and the server whole after the late handlers finish', async () => {
    const seen: string[] = [];
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const watching = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { resourceVersion: list.metadata!.resourceVersion },
      (type, obj: { metadata: { name: string } }) => seen.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    try {
      await new Promise((r) => setTimeout(r, TIMEOUT_MS + 1000));
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'after-deadline' } } });
      for (let i = 0; i < 100 && !seen.includes('ADDED after-deadline'); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(seen.includes('ADDED after-deadline'), seen.join());
    } finally {
      watching.abort();
    }
    // The slow webhooks have answered by now; what their requests wrote after the 504 went nowhere.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await t.fetch('GET', '/version')).status, 200);
  });
});
