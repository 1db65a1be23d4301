import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Built-in kinds are decoded as their Kubernetes types, as kube-apiserver decodes them: a wrongly typed field is
 * refused with Go's decoder error naming the field, fields the type lacks are dropped and handled per
 * fieldValidation at any depth, and repeated keys are found. Over raw HTTP and with kubectl.
 */

let t: TestServer;
const SECRETS = '/api/v1/namespaces/default/secrets';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';

const cannotHandle = (kind: string) => `${kind} in version "v1" cannot be handled as a ${kind}: `;

before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function storedNames(path: string): Promise<string[]> {
  const list = await t.fetch('GET', path);
  return list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name);
}

describe('wrongly typed built-in objects over HTTP', () => {
  const cases: { what: string; path: string; kind: string; body: unknown; error: string }[] = [
    {
      what: 'a number as metadata.name',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 5 } },
      error: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string',
    },
    {
      what: 'labels as a string',
      path: CONFIGMAPS,
      kind: 'ConfigMap',
      body: { metadata: { name: 'labels-string', labels: 'app=web' } },
      error:
        'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    {
      what: 'labels as a number',
      path: CONFIGMAPS,
      kind: 'ConfigMap',
      body: { metadata: { name: 'labels-number', labels: 7 } },
      error:
        'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    {
      what: 'labels as an array',
      path: CONFIGMAPS,
      kind: 'ConfigMap',
      body: { metadata: { name: 'labels-array', labels: ['app'] } },
      error:
        'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    {
      what: 'a label value as a number',
      path: CONFIGMAPS,
      kind: 'ConfigMap',
      body: { metadata: { name: 'label-value', labels: { replica: 1 } } },
      error: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    },
    {
      what: 'annotations as a string',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 'annotations-string', annotations: 'note' } },
      error:
        'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    },
    {
      what: 'annotations as a number',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 'annotations-number', annotations: 3 } },
      error:
        'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    },
    {
      what: 'annotations as an array',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 'annotations-array', annotations: [] } },
      error:
        'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    },
    {
      what: 'a stringData value as a number',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 'string-data' }, stringData: { port: 8080 } },
      error: 'json: cannot unmarshal number into Go struct field Secret.stringData of type string',
    },
    {
      what: 'an owner reference name as a number, inside a list',
      path: SECRETS,
      kind: 'Secret',
      body: {
        metadata: {
          name: 'owner-name',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 1, uid: 'u' }],
        },
      },
      error:
        'json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.name of type string',
    },
    {
      what: 'Secret data that is not base64 (Go decodes []byte as it reads)',
      path: SECRETS,
      kind: 'Secret',
      body: { metadata: { name: 'not-base64' }, data: { password: 'admin' } },
      error: 'illegal base64 data at input byte 4',
    },
    {
      what: 'a Lease duration as a string',
      path: LEASES,
      kind: 'Lease',
      body: { metadata: { name: 'lease-duration' }, spec: { leaseDurationSeconds: '30' } },
      error:
        'json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    },
    {
      what: 'a Lease duration beyond int32',
      path: LEASES,
      kind: 'Lease',
      body: { metadata: { name: 'lease-overflow' }, spec: { leaseDurationSeconds: 2 ** 31 } },
      error:
        'json: cannot unmarshal number 2147483648 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    },
    {
      what: 'immutable as a string',
      path: CONFIGMAPS,
      kind: 'ConfigMap',
      body: { metadata: { name: 'immutable-string' }, immutable: 'true' },
      error: 'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool',
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.what} with 400 and the field's path, storing nothing`, async () => {
      const before = await storedNames(c.path);
      const res = await t.fetch('POST', c.path, { body: c.body });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.kind, 'Status');
      assert.equal(res.json.reason, 'BadRequest');
      assert.equal(res.json.message, cannotHandle(c.kind) + c.error);
      assert.deepEqual(await storedNames(c.path), before);
    });
  }

  it('takes base64 with line breaks, as Go does, and stores it canonical', async () => {
    const res = await t.fetch('POST', SECRETS, {
      body: { metadata: { name: 'wrapped-base64' }, data: { key: 'aGVs\nbG8=' } },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.json.data, { key: 'aGVsbG8=' });
  });

  it('refuses a wrongly typed update the same way', async () => {
    const created = await t.fetch('POST', CONFIGMAPS, { body: { metadata: { name: 'typed-update' } } });
    assert.equal(created.status, 201);
    const res = await t.fetch('PUT', `${CONFIGMAPS}/typed-update`, {
      body: { metadata: { name: 'typed-update' }, data: { key: false } },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.json.message,
      cannotHandle('ConfigMap') +
        'json: cannot unmarshal bool into Go struct field ConfigMap.data of type string',
    );
  });

  it('refuses a patch that leaves a wrong type with 422 on `patch`, as kube-apiserver does', async () => {
    await t.fetch('POST', CONFIGMAPS, { body: { metadata: { name: 'typed-patch' } } });
    const res = await t.fetch('PATCH', `${CONFIGMAPS}/typed-patch`, {
      body: { metadata: { labels: 'app' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(res.json.details.causes[0].field, 'patch');
    assert.match(
      res.json.message,
      /json: cannot unmarshal string into Go struct field ObjectMeta\.metadata\.labels of type map\[string\]string$/,
    );
    const stored = await t.fetch('GET', `${CONFIGMAPS}/typed-patch`);
    assert.equal(stored.json.metadata.labels, undefined);
  });
});

describe('server-side apply of a built-in kind', () => {
  const apply = (name: string, body: unknown) =>
    t.fetch('PATCH', `${CONFIGMAPS}/${name}?fieldManager=tester`, {
      rawBody: JSON.stringify(body),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });

  it('refuses a field the kind lacks, at any depth, with 400 and its path', async () => {
    const res = await apply('applied', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'applied',
        ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u', y: 1 }],
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(
      res.json.message,
      'failed to create typed patch object (default/applied; /v1, Kind=ConfigMap): .metadata.ownerReferences[0].y: field not declared in schema',
    );
    assert.equal((await t.fetch('GET', `${CONFIGMAPS}/applied`)).status, 404);
  });

  it('refuses a wrongly typed value with 400 and its path', async () => {
    const res = await apply('applied', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', labels: 'app' },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(
      res.json.message,
      'failed to create typed patch object (default/applied; /v1, Kind=ConfigMap): .metadata.labels: expected map, got string',
    );
  });
});

describe('unknown fields at every depth, per fieldValidation', () => {
  // A real owner: the garbage collector would delete a Lease whose owner does not exist.
  let ownerUid = '';
  before(async () => {
    const owner = await t.fetch('POST', CONFIGMAPS, { body: { metadata: { name: 'lease-owner' } } });
    ownerUid = owner.json.metadata.uid;
  });
  const lease = (name: string) => ({
    metadata: {
      name,
      bogus: 1,
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'lease-owner', uid: ownerUid, colour: 'red' },
      ],
    },
    spec: { holderIdentity: 'me', renewals: 3 },
  });
  const unknown = ['metadata.bogus', 'metadata.ownerReferences[0].colour', 'spec.renewals'];

  it('Strict refuses them all with 400, naming each', async () => {
    const res = await t.fetch('POST', `${LEASES}?fieldValidation=Strict`, { body: lease('strict') });
    assert.equal(res.status, 400);
    assert.equal(
      res.json.message,
      cannotHandle('Lease') +
        `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`,
    );
    assert.equal((await t.fetch('GET', `${LEASES}/strict`)).status, 404);
  });

  it('Warn stores the object without them and names each in a Warning header', async () => {
    const res = await t.fetch('POST', `${LEASES}?fieldValidation=Warn`, { body: lease('warned') });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, unknown.map((f) => `299 - "unknown field \\"${f}\\""`).join(', '));
    const stored = (await t.fetch('GET', `${LEASES}/warned`)).json;
    assert.equal(stored.metadata.bogus, undefined);
    assert.deepEqual(stored.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'lease-owner', uid: ownerUid },
    ]);
    assert.deepEqual(stored.spec, { holderIdentity: 'me' });
  });

  it('Ignore drops them without a word', async () => {
    const res = await t.fetch('POST', `${LEASES}?fieldValidation=Ignore`, { body: lease('ignored') });
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, undefined);
    const stored = (await t.fetch('GET', `${LEASES}/ignored`)).json;
    assert.equal(stored.metadata.bogus, undefined);
    assert.deepEqual(stored.spec, { holderIdentity: 'me' });
  });

  it('a patch adding a nested unknown field: 422 under Strict, a warning and dropped under Warn', async () => {
    const path = `${LEASES}/warned`;
    const patch = { spec: { holderIdentity: 'you', renewals: 4 } };
    const headers = { 'Content-Type': 'application/merge-patch+json' };
    const strict = await t.fetch('PATCH', `${path}?fieldValidation=Strict`, { body: patch, headers });
    assert.equal(strict.status, 422, strict.text);
    assert.match(strict.json.message, /strict decoding error: unknown field "spec\.renewals"$/);
    const warned = await t.fetch('PATCH', path, { body: patch, headers });
    assert.equal(warned.status, 200);
    assert.equal(warned.headers.warning, '299 - "unknown field \\"spec.renewals\\""');
    assert.deepEqual(warned.json.spec, { holderIdentity: 'you' });
  });

  it('custom resources: unknown metadata fields are found at depth too', async () => {
    const crd = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
            },
          ],
        },
      },
    });
    assert.equal(crd.status, 201, crd.text);
    const path = '/apis/example.com/v1/namespaces/default/gadgets';
    for (let i = 0; i < 50 && (await t.fetch('GET', path)).status !== 200; i++) await sleep(100);
    const res = await t.fetch('POST', `${path}?fieldValidation=Strict`, {
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: {
          name: 'g',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u', x: 1 }],
        },
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.match(
      res.json.message,
      /strict decoding error: unknown field "metadata\.ownerReferences\[0\]\.x"$/,
    );
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('repeated keys', () => {
  const body = '{"metadata":{"name":"first","labels":{"a":"1","a":"2"},"name":"dup-keys"},"data":{"k":"v"}}';

  it('Strict refuses them with 400, naming each', async () => {
    const res = await t.fetch('POST', `${CONFIGMAPS}?fieldValidation=Strict`, {
      rawBody: body,
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.json.message,
      cannotHandle('ConfigMap') +
        'strict decoding error: duplicate field "metadata.labels.a", duplicate field "metadata.name"',
    );
  });

  it('Warn stores the last value and warns', async () => {
    const res = await t.fetch('POST', CONFIGMAPS, {
      rawBody: body,
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 201);
    assert.equal(
      res.headers.warning,
      '299 - "duplicate field \\"metadata.labels.a\\"", 299 - "duplicate field \\"metadata.name\\""',
    );
    assert.equal(res.json.metadata.name, 'dup-keys');
    assert.equal(res.json.metadata.labels.a, '2');
  });

  it('Ignore takes the last value silently', async () => {
    const res = await t.fetch('POST', `${CONFIGMAPS}?fieldValidation=Ignore`, {
      rawBody: body.replace('dup-keys', 'dup-keys-ignored'),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, undefined);
  });

  // The scan for repeated keys is skipped when the body cannot hold one (ADR 1170): a body whose values are
  // full of colons (timestamps, URLs) and a key apart from its colon must still be scanned.
  it('Strict refuses a repeated key among timestamps and URLs, and one spaced apart from its colon', async () => {
    const timestamps =
      '{"metadata":{"name":"dup-times","annotations":{"at":"2026-11-26T15:43:00Z","url":"https://a:443/b"}},' +
      '"data":{"from":"00:00:00","to":"23:59:59"},"data" \n : {"k":"v"}}';
    const res = await t.fetch('POST', `${CONFIGMAPS}?fieldValidation=Strict`, {
      rawBody: timestamps,
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.json.message,
      cannotHandle('ConfigMap') + 'strict decoding error: duplicate field "data"',
    );
  });

  it('a merge patch with repeated keys: 422 under Strict', async () => {
    const res = await t.fetch('PATCH', `${CONFIGMAPS}/dup-keys?fieldValidation=Strict`, {
      rawBody: '{"data":{"k":"x","k":"y"}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /strict decoding error: duplicate field "data\.k"$/);
  });

  it('a JSON patch: members its operations lack and repeated keys, worded as json patch errors', async () => {
    const headers = { 'Content-Type': 'application/json-patch+json' };
    const rawBody = '[{"op":"add","path":"/data/j","value":"1","value":"2","bogus":true}]';
    const strict = await t.fetch('PATCH', `${CONFIGMAPS}/dup-keys?fieldValidation=Strict`, {
      rawBody,
      headers,
    });
    assert.equal(strict.status, 422, strict.text);
    assert.match(
      strict.json.message,
      /strict decoding error: json patch unknown field "\[0\]\.bogus", json patch duplicate field "\[0\]\.value"$/,
    );
    const warned = await t.fetch('PATCH', `${CONFIGMAPS}/dup-keys`, { rawBody, headers });
    assert.equal(warned.status, 200, warned.text);
    assert.equal(
      warned.headers.warning,
      '299 - "json patch unknown field \\"[0].bogus\\"", 299 - "json patch duplicate field \\"[0].value\\""',
    );
    assert.equal(warned.json.data.j, '2');
  });

  it('colons inside values do not make a body look repeated', async () => {
    const res = await t.fetch('POST', `${CONFIGMAPS}?fieldValidation=Strict`, {
      body: { metadata: { name: 'colons', annotations: { url: 'https://a:1/b' } }, data: { 'k:': 'x:y:z' } },
    });
    // The key `k:` is refused by ConfigMap key validation (422), not as a repeated field.
    assert.equal(res.status, 422, res.text);
    const ok = await t.fetch('POST', `${CONFIGMAPS}?fieldValidation=Strict`, {
      body: { metadata: { name: 'colons', annotations: { url: 'https://a:1/b' } }, data: { k: 'x:y:z' } },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.headers.warning, undefined);
  });
});

describe('with kubectl', { skip: kubectlSkip }, () => {
  let workDir: string;
  let kubectl: Kubectl;
  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'certkit-typed-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
  });
  after(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const refused: { what: string; yaml: string; error: RegExp }[] = [
    {
      what: 'a number as metadata.name',
      yaml: 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: 5\n  namespace: default\n',
      // kubectl reads metadata itself before sending, and refuses with the decoder error the server gives.
      error: /json: cannot unmarshal number into Go struct field ObjectMeta\.metadata\.name of type string/,
    },
    {
      what: 'labels as a string',
      yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-labels\n  namespace: default\n  labels: web\n',
      // kubectl reads labels itself (for its selectors) and refuses them first, with the server's text.
      error:
        /cannot unmarshal string into Go struct field ObjectMeta\.metadata\.labels of type map\[string\]string/,
    },
    {
      what: 'annotations as a list',
      yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-annotations\n  namespace: default\n  annotations: [a]\n',
      error:
        /cannot unmarshal array into Go struct field ObjectMeta\.metadata\.annotations of type map\[string\]string/,
    },
    {
      what: 'a stringData number',
      yaml: 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: kubectl-string-data\n  namespace: default\nstringData:\n  port: 8080\n',
      error:
        /Error from server \(BadRequest\).*cannot unmarshal number into Go struct field Secret\.stringData of type string/,
    },
    {
      what: 'a Lease duration as a string',
      yaml: 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: kubectl-duration\n  namespace: default\nspec:\n  leaseDurationSeconds: "30"\n',
      error:
        /Error from server \(BadRequest\).*cannot unmarshal string into Go struct field LeaseSpec\.spec\.leaseDurationSeconds of type int32/,
    },
    {
      what: 'a nested unknown field (strict by default)',
      yaml: 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: kubectl-lease\n  namespace: default\nspec:\n  holderIdentity: me\n  renewals: 3\n',
      error: /Error from server \(BadRequest\).*strict decoding error: unknown field "spec\.renewals"/,
    },
  ];
  for (const c of refused) {
    it(`kubectl create refuses ${c.what}`, async () => {
      const r = await kubectl.run('create', '-f', await kubectl.manifest(c.yaml));
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stderr, c.error);
    });
  }

  it('kubectl --validate=warn prints the warning and stores the object without the field', async () => {
    const yaml =
      'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: kubectl-warned\n  namespace: default\n  bogus: x\nspec:\n  holderIdentity: me\n';
    const r = await kubectl.run('create', '--validate=warn', '-f', await kubectl.manifest(yaml));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: unknown field "metadata\.bogus"/);
    const stored = JSON.parse(
      await kubectl.ok('get', 'lease', 'kubectl-warned', '-n', 'default', '-o', 'json'),
    );
    assert.equal(stored.metadata.bogus, undefined);
  });
});

describe('objects stored with fields their type lacks (written before such fields were dropped)', () => {
  let legacy: TestServer;
  before(async () => {
    legacy = await startTestServer({
      seed: async (storage) => {
        await storage.create(
          '/registry/core/configmaps/default/legacy',
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: 'legacy',
              namespace: 'default',
              uid: 'legacy-uid',
              creationTimestamp: '2024-01-01T00:00:00Z',
            },
            data: { k: 'v' },
            dat: { typo: 'x' },
          }),
        );
      },
    });
  });
  after(async () => {
    await legacy?.close();
  });

  it('a Strict patch is judged by what it brings: the stored unknown field is dropped silently', async () => {
    const res = await legacy.fetch('PATCH', `${CONFIGMAPS}/legacy?fieldValidation=Strict`, {
      body: { data: { k: 'w' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.warning, undefined);
    assert.equal(res.json.dat, undefined);
    assert.deepEqual(res.json.data, { k: 'w' });
  });
});
