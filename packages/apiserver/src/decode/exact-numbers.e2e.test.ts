import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { startWebhookServer } from '@certkit/testenv/admission/webhook-server';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';

/**
 * Numbers the server cannot store as written (ADR 0403), over real HTTPS: an integer beyond ±(2^53 − 1) in a
 * custom resource's integer field, in its preserve-unknown-fields part, in a built-in kind's int64 field, in
 * a patch, a YAML body and an apply, and a number beyond float64, are refused with a 400 naming the field,
 * and nothing is stored; the largest exact integers and large floats are stored and read back as written.
 * kubectl and the Python client show the user the server's message.
 */

const GROUP = 'numbers.certkit.test';
const widgets = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const TOO_LARGE = '9007199254740993';
const BOUND = 'must be within ±(2^53 - 1) (9007199254740991) to be stored exactly';

let t: TestServer;
let workDir: string;
let kubectl: Kubectl;

before(async () => {
  t = await startTestServer();
  workDir = await mkdtemp(join(tmpdir(), 'certkit-numbers-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
  const crd = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      size: { type: 'integer', format: 'int64' },
                      ratio: { type: 'number' },
                      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  for (let i = 0; i < 100 && (await t.fetch('GET', widgets)).status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
});
after(async () => {
  await t.close();
  await rm(workDir, { recursive: true, force: true });
});

function widget(name: string, spec: string): string {
  return `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":${spec}}`;
}

/** Asserts a 400 naming `field` with the number as sent. */
function assertRefused(res: { status: number; text: string; json: any }, field: string, number: string) {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.kind, 'Status');
  assert.equal(res.json.reason, 'BadRequest');
  assert.ok(
    (res.json.message as string).startsWith(`${field}: Invalid value: ${number}: must be within`),
    res.json.message,
  );
  assert.deepEqual(
    res.json.details.causes.map((c: { field: string; reason: string }) => [c.field, c.reason]),
    [[field, 'FieldValueInvalid']],
  );
}

describe('numbers a float64 does not hold', () => {
  it('are refused with the field path in a custom resource, and nothing is stored', async () => {
    const cases: [string, string, string][] = [
      [`{"size":${TOO_LARGE}}`, 'spec.size', TOO_LARGE],
      [`{"free":{"list":[1,-${TOO_LARGE}]}}`, 'spec.free.list[1]', `-${TOO_LARGE}`],
      // Beyond int64, which kube-apiserver itself refuses for an integer field.
      ['{"size":99999999999999999999}', 'spec.size', '99999999999999999999'],
      // Beyond float64, which would otherwise be stored as null.
      ['{"ratio":1e400}', 'spec.ratio', '1e400'],
    ];
    for (const [spec, field, number] of cases) {
      const res = await t.fetch('POST', widgets, { rawBody: widget('w', spec) });
      assertRefused(res, field, number);
      assert.equal((await t.fetch('GET', `${widgets}/w`)).status, 404);
    }
    const res = await t.fetch('POST', widgets, { rawBody: widget('w', `{"size":${TOO_LARGE}}`) });
    assert.equal(res.json.message, `spec.size: Invalid value: ${TOO_LARGE}: ${BOUND}`);
    const huge = await t.fetch('POST', widgets, { rawBody: widget('w', '{"ratio":-1e400}') });
    assert.equal(
      huge.json.message,
      'spec.ratio: Invalid value: -1e400: must be within the range of a float64 (±1.7976931348623157e+308)',
    );
  });

  it('are stored and read back exactly up to ±(2^53 - 1), floats as float64', async () => {
    const created = await t.fetch('POST', widgets, {
      rawBody: widget('exact', '{"size":9007199254740991,"ratio":1.5e300,"free":{"n":-9007199254740991}}'),
    });
    assert.equal(created.status, 201, created.text);
    const read = await t.fetch('GET', `${widgets}/exact`);
    assert.match(read.text, /"size":9007199254740991[,}]/);
    assert.match(read.text, /"n":-9007199254740991[,}]/);
    assert.equal(read.json.spec.ratio, 1.5e300);
  });

  it('are refused in a merge patch, a YAML body and an apply, and the object is unchanged', async () => {
    const patched = await t.fetch('PATCH', `${widgets}/exact`, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
      rawBody: `{"spec":{"free":{"n":${TOO_LARGE}}}}`,
    });
    assertRefused(patched, 'spec.free.n', TOO_LARGE);
    const yaml = await t.fetch('POST', widgets, {
      headers: { 'Content-Type': 'application/yaml' },
      rawBody: `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: y\nspec:\n  size: ${TOO_LARGE}\n`,
    });
    assertRefused(yaml, 'spec.size', TOO_LARGE);
    const applied = await t.fetch('PATCH', `${widgets}/exact?fieldManager=test`, {
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      rawBody: `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: exact\nspec:\n  free:\n    n: ${TOO_LARGE}\n`,
    });
    assertRefused(applied, 'spec.free.n', TOO_LARGE);
    const read = await t.fetch('GET', `${widgets}/exact`);
    assert.match(read.text, /"n":-9007199254740991[,}]/);
  });

  it("are refused in a built-in kind's int64 field", async () => {
    const pod = await t.fetch('POST', '/api/v1/namespaces/default/pods', {
      rawBody: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"activeDeadlineSeconds":${TOO_LARGE},"containers":[{"name":"c","image":"nginx"}]}}`,
    });
    assertRefused(pod, 'spec.activeDeadlineSeconds', TOO_LARGE);
  });

  it("in a mutating webhook's patch fail the call (failurePolicy Fail: a 500), and nothing is stored", async () => {
    const patch = Buffer.from(`[{"op":"add","path":"/spec/free","value":{"n":${TOO_LARGE}}}]`).toString(
      'base64',
    );
    const server = await startWebhookServer((review) => ({
      raw: {
        statusCode: 200,
        body: JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch },
        }),
      },
    }));
    const configs = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
    const config = await t.fetch('POST', configs, {
      body: {
        metadata: { name: 'big-number' },
        webhooks: [
          {
            name: 'big.example.com',
            clientConfig: { url: `${server.url}/mutate`, caBundle: server.caBundle },
            rules: [
              { operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['widgets'] },
            ],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    assert.equal(config.status, 201, config.text);
    try {
      let res;
      // The configuration takes effect once the server's watch cache has it.
      for (let i = 0; i < 100; i++) {
        res = await t.fetch('POST', widgets, { rawBody: widget('mutated', '{"size":1}') });
        if (res.status !== 201) break;
        await t.fetch('DELETE', `${widgets}/mutated`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(res!.status, 500, res!.text);
      assert.equal(
        res!.json.message,
        `Internal error occurred: failed calling webhook "big.example.com": received invalid webhook response: response.patch: [0].value.n: Invalid value: ${TOO_LARGE}: ${BOUND}`,
      );
      assert.equal((await t.fetch('GET', `${widgets}/mutated`)).status, 404);
    } finally {
      await t.fetch('DELETE', `${configs}/big-number`);
      await server.close();
    }
  });

  it("show kubectl users the server's message", { skip: kubectlSkip }, async () => {
    const manifest = await kubectl.manifest(
      `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: k\n  namespace: default\nspec:\n  size: ${TOO_LARGE}\n`,
    );
    for (const args of [
      ['create', '-f', manifest],
      ['apply', '--server-side', '-f', manifest],
    ]) {
      const r = await kubectl.run(...args);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(
        r.stderr,
        new RegExp(`spec\\.size: Invalid value: ${TOO_LARGE}: must be within ±\\(2\\^53 - 1\\)`),
      );
    }
    assert.equal((await t.fetch('GET', `${widgets}/k`)).status, 404);
  });

  it('show Python client users a 400 with the message', { skip: pythonClientSkip }, async () => {
    const python: PythonClient = pythonClientFor(t.kubeconfigPath);
    const result = await python.run(`
api = client.CustomObjectsApi()
try:
    api.create_namespaced_custom_object('${GROUP}', 'v1', 'default', 'widgets', {
        'apiVersion': '${GROUP}/v1', 'kind': 'Widget', 'metadata': {'name': 'py'},
        'spec': {'free': {'n': ${TOO_LARGE}}}})
    emit({'status': 201})
except ApiException as e:
    import json
    emit({'status': e.status, 'message': json.loads(e.body)['message']})
`);
    assert.deepEqual(result, { status: 400, message: `spec.free.n: Invalid value: ${TOO_LARGE}: ${BOUND}` });
  });
});
