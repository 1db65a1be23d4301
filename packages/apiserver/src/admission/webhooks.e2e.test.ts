import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { startWebhookServer, type TestWebhookServer } from '@certkit/testenv/admission/webhook-server';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { MAX_WEBHOOK_RESPONSE_BYTES } from './client.ts';

/**
 * Admission webhooks end to end: real HTTPS webhooks written here, a real API server, kubectl as the client.
 * Each test registers its configurations and removes them at its end; a configuration takes effect once
 * the server's watch cache has it (waitForConfigurations), as in kube-apiserver, where it is an informer.
 */

const GROUP = 'admissionregistration.k8s.io';

let t: TestServer;
let kubectl: Kubectl;
let workDir: string;

before(async () => {
  t = await startTestServer();
  workDir = await mkdtemp(join(tmpdir(), 'certkit-webhooks-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
});

after(async () => {
  await t.close();
  await rm(workDir, { recursive: true, force: true });
});

type Kind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

function resourceOf(kind: Kind): string {
  return kind === 'MutatingWebhookConfiguration'
    ? 'mutatingwebhookconfigurations'
    : 'validatingwebhookconfigurations';
}

/** Waits until the admission chain's index (the watch cache) holds the write of that revision. */
async function waitForConfigurations(kind: Kind, resourceVersion: string): Promise<void> {
  const store = t.server.registry.byResource(GROUP, resourceOf(kind))!;
  const cache = t.server.caches.cacheFor(store)!;
  assert.ok(
    await cache.waitForRevision(Number(resourceVersion), 10_000),
    'configuration never reached the cache',
  );
}

/** Creates a configuration through the API and waits for it to take effect; returns a function removing it. */
async function configure(kind: Kind, name: string, webhooks: unknown[]): Promise<() => Promise<void>> {
  const path = `/apis/${GROUP}/v1/${resourceOf(kind)}`;
  const res = await t.fetch('POST', path, {
    body: { apiVersion: `${GROUP}/v1`, kind, metadata: { name }, webhooks },
  });
  assert.equal(res.status, 201, res.text);
  await waitForConfigurations(kind, res.json.metadata.resourceVersion);
  return async () => {
    const del = await t.fetch('DELETE', `${path}/${name}`);
    assert.equal(del.status, 200, del.text);
    await waitForConfigurations(kind, del.json.metadata.resourceVersion);
  };
}

function hook(name: string, server: TestWebhookServer, path: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url: `${server.url}${path}`, caBundle: server.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  const res = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } });
  assert.equal(res.status, 201, res.text);
}

describe('webhook configurations', () => {
  const path = `/apis/${GROUP}/v1/validatingwebhookconfigurations`;

  it(
    'are served, defaulted as kube-apiserver defaults them and listed by kubectl',
    { skip: kubectlSkip },
    async () => {
      const file = await kubectl.manifest(`
apiVersion: ${GROUP}/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: defaults
webhooks:
- name: defaults.example.com
  clientConfig:
    service: {namespace: default, name: hooks, path: /validate}
  rules:
  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
  sideEffects: None
  admissionReviewVersions: [v1]
`);
      await kubectl.ok('apply', '-f', file);
      const stored = JSON.parse(
        await kubectl.ok('get', 'validatingwebhookconfiguration', 'defaults', '-o', 'json'),
      );
      const webhook = stored.webhooks[0];
      assert.equal(webhook.failurePolicy, 'Fail');
      assert.equal(webhook.matchPolicy, 'Equivalent');
      assert.equal(webhook.timeoutSeconds, 10);
      assert.deepEqual(webhook.namespaceSelector, {});
      assert.deepEqual(webhook.objectSelector, {});
      assert.equal(webhook.rules[0].scope, '*');
      assert.equal(webhook.clientConfig.service.port, 443);
      const table = await kubectl.ok('get', 'validatingwebhookconfigurations');
      assert.match(table, /^NAME\s+WEBHOOKS\s+AGE\n/);
      assert.match(table, /\ndefaults\s+1\s+/);
      await kubectl.ok('delete', '-f', file);
    },
  );

  it('refuses invalid webhooks with 422 and the field path of each problem', async () => {
    const res = await t.fetch('POST', path, {
      body: {
        metadata: { name: 'invalid' },
        webhooks: [
          {
            name: 'one.example.com',
            clientConfig: { url: 'http://user:pw@example.com/x?q=1#f' },
            rules: [
              { operations: ['CREATE', 'PUT'], apiGroups: [], apiVersions: ['v1'], resources: ['*', 'pods'] },
            ],
            timeoutSeconds: 31,
            failurePolicy: 'Sometimes',
          },
          {
            name: 'one.example.com',
            clientConfig: { url: 'https://example.com/', service: { namespace: 'a', name: 'b' } },
            sideEffects: 'Some',
            admissionReviewVersions: ['v2'],
          },
          {
            name: 'short.name',
            clientConfig: { service: { namespace: '', name: 'svc', path: 'relative', port: 70000 } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
          {
            name: 'ca.example.com',
            clientConfig: {
              url: 'https://example.com/',
              caBundle: Buffer.from('not a certificate').toString('base64'),
            },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.reason, 'Invalid');
    const causes = new Map<string, string[]>();
    for (const c of res.json.details.causes) causes.set(c.field, [...(causes.get(c.field) ?? []), c.message]);
    const has = (field: string, text: string) =>
      assert.ok(
        (causes.get(field) ?? []).some((m) => m.includes(text)),
        `${field} should say "${text}"; causes: ${JSON.stringify(Object.fromEntries(causes))}`,
      );
    has('webhooks[0].clientConfig.url', "'https' is the only allowed URL scheme");
    has('webhooks[0].clientConfig.url', 'user information is not permitted in the URL');
    has('webhooks[0].clientConfig.url', 'fragments are not permitted in the URL');
    has('webhooks[0].clientConfig.url', 'query parameters are not permitted in the URL');
    has('webhooks[0].rules[0].operations[1]', 'Unsupported value: "PUT"');
    has('webhooks[0].rules[0].apiGroups', 'Required value');
    has(
      'webhooks[0].rules[0].resources',
      "if '*' is present, must not specify other resources without subresources",
    );
    has('webhooks[0].timeoutSeconds', 'the timeout value must be between 1 and 30 seconds');
    has('webhooks[0].failurePolicy', 'Unsupported value: "Sometimes"');
    has('webhooks[0].sideEffects', 'Required value');
    has('webhooks[0].admissionReviewVersions', 'Required value: must specify one of v1, v1beta1');
    has('webhooks[1].name', 'Duplicate value: "one.example.com"');
    has('webhooks[1].clientConfig', 'exactly one of url or service is required');
    has('webhooks[1].sideEffects', 'supported values: "None", "NoneOnDryRun"');
    has('webhooks[1].admissionReviewVersions', 'must include at least one of v1, v1beta1');
    has('webhooks[2].name', 'should be a domain with at least three segments separated by dots');
    has('webhooks[2].clientConfig.service.namespace', 'service namespace is required');
    has('webhooks[2].clientConfig.service.path', "must start with a '/'");
    has('webhooks[2].clientConfig.service.port', 'port is not valid');
    has('webhooks[3].clientConfig.caBundle', 'must hold PEM-encoded certificates');
  });
});

describe('mutating webhooks', () => {
  it(
    'add a label with a JSON patch, which kubectl then sees; the review says who asked and what',
    { skip: kubectlSkip },
    async () => {
      const server = await startWebhookServer(() => ({
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }],
      }));
      const remove = await configure('MutatingWebhookConfiguration', 'label-adder', [
        hook('label.example.com', server, '/mutate'),
      ]);
      try {
        await kubectl.ok('create', 'configmap', 'mutated', '--from-literal=a=b');
        assert.equal(
          await kubectl.ok('get', 'configmap', 'mutated', '-o', 'jsonpath={.metadata.labels.mutated}'),
          'yes',
        );
        assert.equal(server.reviews.length, 1);
        const review = server.reviews[0];
        assert.equal(review.apiVersion, 'admission.k8s.io/v1');
        assert.equal(review.path, '/mutate?timeout=10s');
        assert.equal(review.request.operation, 'CREATE');
        assert.deepEqual(review.request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
        assert.deepEqual(review.request.resource, { group: '', version: 'v1', resource: 'configmaps' });
        assert.equal(review.request.namespace, 'default');
        assert.equal(review.request.name, 'mutated');
        assert.equal(review.request.userInfo.username, 'certkit-admin');
        assert.ok(review.request.userInfo.groups?.includes('system:masters'));
        assert.equal(review.request.dryRun, false);
        assert.equal(review.request.options.kind, 'CreateOptions');
        assert.deepEqual(review.request.object.data, { a: 'b' });
        assert.equal(review.request.oldObject, null);
        // The webhook saw the object before the server set its system fields, as kube-apiserver's do.
        assert.equal(review.request.object.metadata.uid, undefined);
        // Server-side apply creates through the same chain.
        const file = await kubectl.manifest(
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied, namespace: default}\ndata: {k: v}\n',
        );
        await kubectl.ok('apply', '--server-side', '-f', file);
        assert.equal(
          await kubectl.ok('get', 'configmap', 'applied', '-o', 'jsonpath={.metadata.labels.mutated}'),
          'yes',
        );
        assert.equal(server.reviews.at(-1)!.request.operation, 'CREATE');
      } finally {
        await remove();
        await server.close();
      }
    },
  );

  it('see updates and patches with the old object, and only the operations their rules name', async () => {
    const server = await startWebhookServer((review) => ({
      allowed: true,
      patch: [{ op: 'add', path: '/data/seen', value: review.request.operation }],
    }));
    const remove = await configure('MutatingWebhookConfiguration', 'on-update', [
      hook('update.example.com', server, '/mutate', {
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      }),
    ]);
    try {
      const created = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'updated' }, data: { a: '1' } },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.data.seen, undefined, 'a CREATE does not match a rule for UPDATE');
      const patched = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/updated', {
        body: { data: { a: '2' } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.json.data, { a: '2', seen: 'UPDATE' });
      assert.equal(server.reviews.length, 1);
      assert.equal(server.reviews[0].request.oldObject.data.a, '1');
      assert.equal(server.reviews[0].request.object.data.a, '2');
      assert.equal(server.reviews[0].request.options.kind, 'UpdateOptions');
    } finally {
      await remove();
      await server.close();
    }
  });

  it('are called again with reinvocationPolicy IfNeeded when a later webhook changed the object', async () => {
    const first = await startWebhookServer(() => ({ allowed: true }));
    const second = await startWebhookServer(() => ({
      allowed: true,
      patch: [{ op: 'add', path: '/data/second', value: 'x' }],
    }));
    const removeFirst = await configure('MutatingWebhookConfiguration', 'a-first', [
      hook('first.example.com', first, '/m', { reinvocationPolicy: 'IfNeeded' }),
    ]);
    const removeSecond = await configure('MutatingWebhookConfiguration', 'b-second', [
      hook('second.example.com', second, '/m'),
    ]);
    try {
      const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'reinvoked' }, data: {} },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(second.reviews.length, 1);
      assert.equal(first.reviews.length, 2, 'the first webhook is reinvoked once');
      assert.equal(first.reviews[1].request.object.data.second, 'x', "and sees the second one's change");
    } finally {
      await removeFirst();
      await removeSecond();
      await first.close();
      await second.close();
    }
  });
});

describe('validating webhooks', () => {
  it(
    "deny with kube-apiserver's message and the webhook's code, as kubectl prints it",
    { skip: kubectlSkip },
    async () => {
      const server = await startWebhookServer(() => ({
        allowed: false,
        status: { code: 403, message: 'configmaps named forbidden are not allowed' },
      }));
      const remove = await configure('ValidatingWebhookConfiguration', 'denier', [
        hook('deny.example.com', server, '/validate'),
      ]);
      try {
        const r = await kubectl.run('create', 'configmap', 'forbidden');
        assert.notEqual(r.code, 0);
        assert.match(
          r.stderr,
          /admission webhook "deny\.example\.com" denied the request: configmaps named forbidden are not allowed/,
        );
        const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name: 'forbidden' } },
        });
        assert.equal(res.status, 403);
        assert.equal(
          res.json.message,
          'admission webhook "deny.example.com" denied the request: configmaps named forbidden are not allowed',
        );
        assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/forbidden')).status, 404);
      } finally {
        await remove();
        await server.close();
      }
    },
  );

  it('deny without a status as 400 "without explanation", and see deletes with the old object', async () => {
    const server = await startWebhookServer((review) => ({ allowed: review.request.operation !== 'DELETE' }));
    const remove = await configure('ValidatingWebhookConfiguration', 'no-delete', [
      hook('nodelete.example.com', server, '/validate', {
        rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      }),
    ]);
    try {
      assert.equal(
        (
          await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
            body: { metadata: { name: 'kept' } },
          })
        ).status,
        201,
      );
      const res = await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/kept');
      assert.equal(res.status, 400, res.text);
      assert.equal(
        res.json.message,
        'admission webhook "nodelete.example.com" denied the request without explanation',
      );
      const review = server.reviews.at(-1)!;
      assert.equal(review.request.operation, 'DELETE');
      assert.equal(review.request.object, null);
      assert.equal(review.request.oldObject.metadata.name, 'kept');
      assert.equal(review.request.options.kind, 'DeleteOptions');
      assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/kept')).status, 200);
    } finally {
      await remove();
      await server.close();
    }
  });

  it('send warnings that kubectl prints', { skip: kubectlSkip }, async () => {
    const server = await startWebhookServer(() => ({
      allowed: true,
      warnings: ['this configmap is deprecated'],
    }));
    const remove = await configure('ValidatingWebhookConfiguration', 'warner', [
      hook('warn.example.com', server, '/validate'),
    ]);
    try {
      const r = await kubectl.run('create', 'configmap', 'warned');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Warning: this configmap is deprecated/);
    } finally {
      await remove();
      await server.close();
    }
  });
});

describe('failures', () => {
  it('of a webhook that is down fail the write under failurePolicy Fail (500) and not under Ignore', async () => {
    const down = await startWebhookServer(() => ({ allowed: true }));
    const url = down.url;
    await down.close();
    const remove = await configure('ValidatingWebhookConfiguration', 'down', [
      hook('fail.example.com', down, '/v', {
        failurePolicy: 'Fail',
        objectSelector: { matchLabels: { policy: 'fail' } },
      }),
      hook('ignore.example.com', down, '/v', {
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { policy: 'ignore' } },
      }),
    ]);
    try {
      const failed = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'fail-closed', labels: { policy: 'fail' } } },
      });
      assert.equal(failed.status, 500, failed.text);
      assert.equal(failed.json.reason, 'InternalError');
      assert.equal(
        failed.json.message,
        `Internal error occurred: failed calling webhook "fail.example.com": failed to call webhook: Post "${url}/v?timeout=10s": dial tcp 127.0.0.1:${down.port}: connect: connection refused`,
      );
      const ignored = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'fail-open', labels: { policy: 'ignore' } } },
      });
      assert.equal(ignored.status, 201, ignored.text);
    } finally {
      await remove();
    }
  });

  it('of a webhook that does not answer within timeoutSeconds are a deadline exceeded', async () => {
    const server = await startWebhookServer(() => ({ hang: true }));
    const remove = await configure('ValidatingWebhookConfiguration', 'slow', [
      hook('slow.example.com', server, '/slow', { timeoutSeconds: 1 }),
    ]);
    try {
      const started = performance.now();
      const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'slow' } },
      });
      const elapsed = performance.now() - started;
      assert.equal(res.status, 500, res.text);
      assert.match(
        res.json.message,
        /failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded$/,
      );
      assert.ok(elapsed >= 950 && elapsed < 5000, `took ${elapsed} ms`);
    } finally {
      await remove();
      await server.close();
    }
  });

  it('of a webhook whose certificate the caBundle does not trust, or whose answer is malformed, follow failurePolicy', async () => {
    const server = await startWebhookServer((review) =>
      review.path.startsWith('/bad-uid')
        ? {
            raw: {
              statusCode: 200,
              body: JSON.stringify({
                apiVersion: 'admission.k8s.io/v1',
                kind: 'AdmissionReview',
                response: { uid: 'x', allowed: true },
              }),
            },
          }
        : { allowed: true },
    );
    const other = await startWebhookServer(() => ({ allowed: true }));
    const remove = await configure('ValidatingWebhookConfiguration', 'broken', [
      {
        ...hook('untrusted.example.com', server, '/v'),
        clientConfig: { url: `${server.url}/v`, caBundle: other.caBundle },
      },
      hook('baduid.example.com', server, '/bad-uid'),
    ]);
    try {
      const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'broken' } },
      });
      assert.equal(res.status, 500, res.text);
      assert.match(
        res.json.message,
        /failed calling webhook "(untrusted\.example\.com": failed to call webhook: Post "[^"]+": tls: failed to verify certificate: x509: certificate signed by unknown authority|baduid\.example\.com": received invalid webhook response: expected response.uid="[-0-9a-f]+", got "x")$/,
      );
    } finally {
      await remove();
      await server.close();
      await other.close();
    }
  });
});

describe('webhook answers', () => {
  it('larger than the limit fail the call, read no further, and follow failurePolicy', async () => {
    const huge = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'x', allowed: true, warnings: ['x'.repeat(MAX_WEBHOOK_RESPONSE_BYTES)] },
    });
    const server = await startWebhookServer((review) =>
      review.path.startsWith('/declared')
        ? { raw: { statusCode: 200, body: huge, headers: { 'Content-Length': String(huge.length) } } }
        : { raw: { statusCode: 200, body: huge } },
    );
    const remove = await configure('ValidatingWebhookConfiguration', 'huge', [
      hook('declared.example.com', server, '/declared', {
        objectSelector: { matchLabels: { answer: 'declared' } },
      }),
      hook('streamed.example.com', server, '/streamed', {
        objectSelector: { matchLabels: { answer: 'streamed' } },
      }),
      hook('ignored.example.com', server, '/streamed', {
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { answer: 'ignored' } },
      }),
    ]);
    try {
      // With a Content-Length past the limit, and as a chunked stream that grows past it.
      for (const answer of ['declared', 'streamed']) {
        const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name: `huge-${answer}`, labels: { answer } } },
        });
        assert.equal(res.status, 500, res.text.slice(0, 500));
        assert.equal(res.json.reason, 'InternalError');
        assert.equal(
          res.json.message,
          `Internal error occurred: failed calling webhook "${answer}.example.com": failed to call webhook: Post "${server.url}/${answer}?timeout=10s": the response body is larger than the limit of ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`,
        );
      }
      const ignored = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'huge-ignored', labels: { answer: 'ignored' } } },
      });
      assert.equal(ignored.status, 201, ignored.text.slice(0, 500));
    } finally {
      await remove();
      await server.close();
    }
  });
});

describe('selectors', () => {
  it('namespaceSelector and objectSelector skip the webhook for what they do not select', async () => {
    await createNamespace('watched', { webhooks: 'on' });
    await createNamespace('unwatched');
    const server = await startWebhookServer(() => ({ allowed: false, status: { message: 'seen' } }));
    const remove = await configure('ValidatingWebhookConfiguration', 'selective', [
      hook('selective.example.com', server, '/v', {
        namespaceSelector: { matchLabels: { webhooks: 'on' } },
        objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
      }),
    ]);
    const create = (namespace: string, name: string, labels: Record<string, string> = {}) =>
      t.fetch('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body: { metadata: { name, labels } } });
    try {
      assert.equal((await create('unwatched', 'a')).status, 201, 'namespace not selected');
      assert.equal((await create('watched', 'b', { skip: 'yes' })).status, 201, 'object not selected');
      assert.equal((await create('watched', 'c')).status, 400, 'both selected: the webhook denies');
      assert.equal(server.reviews.length, 1);
      assert.equal(server.reviews[0].request.name, 'c');
    } finally {
      await remove();
      await server.close();
    }
  });
});

describe('dry run', () => {
  it('is sent to webhooks without side effects, which then see dryRun: true; nothing is stored', async () => {
    const server = await startWebhookServer(() => ({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata/labels', value: { dry: 'run' } }],
    }));
    const remove = await configure('MutatingWebhookConfiguration', 'dry', [
      hook('dry.example.com', server, '/m'),
    ]);
    try {
      const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
        body: { metadata: { name: 'dry' } },
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.json.metadata.labels, { dry: 'run' });
      assert.equal(server.reviews[0].request.dryRun, true);
      assert.deepEqual(server.reviews[0].request.options.dryRun, ['All']);
      assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/dry')).status, 404);
    } finally {
      await remove();
      await server.close();
    }
  });

  it('is refused by a webhook with side effects (stored before v1 refused them) without calling it', async () => {
    const server = await startWebhookServer(() => ({ allowed: true }));
    // admissionregistration v1 refuses sideEffects Some; a configuration written through v1beta1 keeps it.
    const key = `/registry/${GROUP}/validatingwebhookconfigurations/legacy`;
    const legacy = {
      apiVersion: `${GROUP}/v1`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: {
        name: 'legacy',
        uid: 'b4c1d1a4-0000-4000-8000-000000000001',
        creationTimestamp: '2020-01-01T00:00:00Z',
      },
      webhooks: [
        {
          ...hook('legacy.example.com', server, '/v'),
          sideEffects: 'Some',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
        },
      ],
    };
    const revision = await t.server.storage.create(key, JSON.stringify(legacy));
    await waitForConfigurations('ValidatingWebhookConfiguration', String(revision));
    try {
      const dry = await t.fetch('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
        body: { metadata: { name: 'legacy' } },
      });
      assert.equal(dry.status, 400, dry.text);
      assert.equal(dry.json.message, 'admission webhook "legacy.example.com" does not support dry run');
      assert.equal(server.reviews.length, 0);
      const real = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'legacy' } },
      });
      assert.equal(real.status, 201, real.text);
      assert.equal(server.reviews.length, 1);
    } finally {
      const del = await t.fetch('DELETE', `/apis/${GROUP}/v1/validatingwebhookconfigurations/legacy`);
      await waitForConfigurations('ValidatingWebhookConfiguration', del.json.metadata.resourceVersion);
      await server.close();
    }
  });
});

describe('rules', () => {
  it('match a status subresource by `namespaces/status`, and never the webhook configurations themselves', async () => {
    await createNamespace('status-rules');
    const server = await startWebhookServer(() => ({ allowed: false, status: { message: 'no' } }));
    const remove = await configure('ValidatingWebhookConfiguration', 'status-only', [
      hook('status.example.com', server, '/v', {
        rules: [
          {
            operations: ['*'],
            apiGroups: ['*'],
            apiVersions: ['*'],
            resources: ['namespaces/status', 'validatingwebhookconfigurations'],
          },
        ],
      }),
    ]);
    try {
      const ns = await t.fetch('GET', '/api/v1/namespaces/status-rules');
      const labelled = await t.fetch('PUT', '/api/v1/namespaces/status-rules', {
        body: { ...ns.json, metadata: { ...ns.json.metadata, labels: { x: 'y' } } },
      });
      assert.equal(labelled.status, 200, 'the main resource is not matched by namespaces/status');
      const status = await t.fetch('PUT', '/api/v1/namespaces/status-rules/status', { body: labelled.json });
      assert.equal(status.status, 400, status.text);
      assert.equal(server.reviews.at(-1)!.request.subResource, 'status');
    } finally {
      // Deleting the configuration is never sent to a webhook, so a broken one can always be removed.
      await remove();
      await server.close();
    }
  });
});

describe('service references', () => {
  it(
    "reach the webhook at an endpoint of the Service's EndpointSlice, verified as <name>.<namespace>.svc",
    { skip: kubectlSkip },
    async () => {
      await createNamespace('hooks');
      const server = await startWebhookServer(
        () => ({ allowed: false, status: { message: 'through the service' } }),
        {
          dnsNames: ['admission.hooks.svc'],
        },
      );
      const remove = await configure('ValidatingWebhookConfiguration', 'by-service', [
        {
          ...hook('service.example.com', server, '/v', {
            objectSelector: { matchLabels: { via: 'service' } },
          }),
          clientConfig: {
            service: { namespace: 'hooks', name: 'admission', path: '/validate', port: 8443 },
            caBundle: server.caBundle,
          },
        },
      ]);
      const create = (name: string) =>
        t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name, labels: { via: 'service' } } },
        });
      try {
        // No Service yet: the call fails, and failurePolicy Fail refuses the write.
        const missing = await create('no-service');
        assert.equal(missing.status, 500, missing.text);
        assert.equal(
          missing.json.message,
          'Internal error occurred: failed calling webhook "service.example.com": failed to call webhook: Post "https://admission.hooks.svc:8443/validate?timeout=10s": service "admission" not found',
        );
        await kubectl.ok(
          'apply',
          '-f',
          await kubectl.manifest(`
apiVersion: v1
kind: Service
metadata: {name: admission, namespace: hooks}
spec:
  ports: [{name: https, port: 8443, targetPort: 9443}]
`),
        );
        const noEndpoints = await create('no-endpoints');
        assert.equal(noEndpoints.status, 500, noEndpoints.text);
        assert.match(noEndpoints.json.message, /: no endpoints available for service "admission"$/);
        await kubectl.ok(
          'apply',
          '-f',
          await kubectl.manifest(`
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: admission-1
  namespace: hooks
  labels: {kubernetes.io/service-name: admission}
addressType: IPv4
ports: [{name: https, port: ${server.port}}]
endpoints:
- addresses: [127.0.0.1]
  conditions: {ready: true}
`),
        );
        const r = await kubectl.run('create', 'configmap', 'via-service');
        assert.equal(r.code, 0, 'the configmap has no via label: not selected');
        const denied = await create('via-service-2');
        assert.equal(denied.status, 400, denied.text);
        assert.equal(
          denied.json.message,
          'admission webhook "service.example.com" denied the request: through the service',
        );
        assert.equal(server.reviews.at(-1)!.path, '/validate?timeout=10s');
      } finally {
        await remove();
        await server.close();
      }
    },
  );
});

describe('matchConditions', () => {
  it('call the webhook only when every CEL condition holds; an evaluation error is a failed call', async () => {
    const server = await startWebhookServer(() => ({ allowed: false, status: { message: 'matched' } }));
    const remove = await configure('ValidatingWebhookConfiguration', 'cel-conditions', [
      hook('cel.example.com', server, '/v', {
        matchConditions: [
          { name: 'named-cel', expression: 'object.metadata.name.startsWith("cel-")' },
          { name: 'by-admin', expression: 'request.userInfo.username == "certkit-admin"' },
        ],
      }),
      hook('cel-error.example.com', server, '/v', {
        matchConditions: [
          { name: 'needs-data', expression: 'object.metadata.name == "cel-error" && object.data.key == "x"' },
        ],
      }),
    ]);
    const create = (name: string) =>
      t.fetch('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name } } });
    try {
      assert.equal((await create('plain')).status, 201, 'a false condition skips the webhook');
      const denied = await create('cel-denied');
      assert.equal(denied.status, 400, denied.text);
      assert.equal(denied.json.message, 'admission webhook "cel.example.com" denied the request: matched');
      const failed = await create('cel-error');
      assert.equal(failed.status, 500, failed.text);
      assert.match(
        failed.json.message,
        /failed calling webhook "cel-error\.example\.com": webhook match conditions evaluation error: failed to evaluate condition "needs-data": /,
      );
      const invalid = await t.fetch('POST', `/apis/${GROUP}/v1/validatingwebhookconfigurations`, {
        body: {
          metadata: { name: 'bad-cel' },
          webhooks: [
            hook('badcel.example.com', server, '/v', {
              matchConditions: [{ name: 'n', expression: 'size(object.metadata.name)' }],
            }),
          ],
        },
      });
      assert.equal(invalid.status, 422, invalid.text);
      assert.equal(invalid.json.details.causes[0].field, 'webhooks[0].matchConditions[0].expression');
      assert.match(invalid.json.details.causes[0].message, /must evaluate to bool/);
    } finally {
      await remove();
      await server.close();
    }
  });
});

describe('versions', () => {
  it('send v1beta1 AdmissionReviews to a webhook that lists only v1beta1', async () => {
    const server = await startWebhookServer(() => ({ allowed: true }));
    const remove = await configure('ValidatingWebhookConfiguration', 'beta-review', [
      hook('beta.example.com', server, '/v', { admissionReviewVersions: ['v1beta1'] }),
    ]);
    try {
      const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'beta-review' } },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(server.reviews[0].apiVersion, 'admission.k8s.io/v1beta1');
    } finally {
      await remove();
      await server.close();
    }
  });

  it('with matchPolicy Equivalent, send a request at another served version converted to the one the rules name', async () => {
    const crd = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: ['v1', 'v1beta1'].map((name) => ({
            name,
            served: true,
            storage: name === 'v1',
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          })),
        },
      },
    });
    assert.equal(crd.status, 201, crd.text);
    const server = await startWebhookServer(() => ({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata/labels', value: { seen: 'v1' } }],
    }));
    const rules = [
      { operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] },
    ];
    const remove = await configure('MutatingWebhookConfiguration', 'equivalent', [
      hook('equivalent.example.com', server, '/m', {
        rules,
        objectSelector: { matchLabels: { policy: 'equivalent' } },
      }),
      hook('exact.example.com', server, '/m', {
        rules,
        matchPolicy: 'Exact',
        objectSelector: { matchLabels: { policy: 'exact' } },
      }),
    ]);
    const create = async (name: string, policy: string) => {
      for (let attempt = 0; ; attempt++) {
        const res = await t.fetch('POST', '/apis/example.com/v1beta1/namespaces/default/widgets', {
          body: { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name, labels: { policy } } },
        });
        // The CRD is served moments after its write.
        if (res.status !== 404 || attempt > 50) return res;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      const equivalent = await create('equivalent', 'equivalent');
      assert.equal(equivalent.status, 201, equivalent.text);
      assert.equal(equivalent.json.apiVersion, 'example.com/v1beta1');
      assert.deepEqual(equivalent.json.metadata.labels, { seen: 'v1' });
      const review = server.reviews[0].request;
      assert.deepEqual(review.kind, { group: 'example.com', version: 'v1', kind: 'Widget' });
      assert.equal(review.object.apiVersion, 'example.com/v1');
      assert.equal((review as { requestKind?: { version: string } }).requestKind?.version, 'v1beta1');
      const exact = await create('exact', 'exact');
      assert.equal(exact.status, 201, exact.text);
      assert.deepEqual(exact.json.metadata.labels, { policy: 'exact' }, 'Exact does not match v1beta1');
      assert.equal(server.reviews.length, 1);
    } finally {
      await remove();
      await server.close();
    }
  });
});

describe('Namespaces', () => {
  it('are matched by namespaceSelector on the labels they are created with, kubernetes.io/metadata.name included', async () => {
    const server = await startWebhookServer((review) => ({
      allowed: false,
      status: { message: review.request.name },
    }));
    const remove = await configure('ValidatingWebhookConfiguration', 'namespaces', [
      hook('namespaces.example.com', server, '/v', {
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'guarded' } },
      }),
    ]);
    try {
      const other = await t.fetch('POST', '/api/v1/namespaces', {
        body: { metadata: { name: 'unguarded' } },
      });
      assert.equal(other.status, 201, other.text);
      const guarded = await t.fetch('POST', '/api/v1/namespaces', {
        body: { metadata: { name: 'guarded' } },
      });
      assert.equal(guarded.status, 400, guarded.text);
      assert.equal(
        guarded.json.message,
        'admission webhook "namespaces.example.com" denied the request: guarded',
      );
      assert.equal(server.reviews.length, 1);
      assert.equal(server.reviews[0].request.namespace, 'guarded', 'a Namespace is its own namespace');
    } finally {
      await remove();
      await server.close();
    }
  });
});
