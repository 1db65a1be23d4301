import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { decodeOpenApiV2Protobuf } from '@certkit/testenv/openapi/openapi-v2-protobuf';
import { parse as parseYaml } from 'yaml';

/**
 * OpenAPI as kube-apiserver serves it: /openapi/v3 documents and /openapi/v2 carry every served kind's schema
 * under `x-kubernetes-group-version-kind`, built-in kinds with their Kubernetes descriptions and CRDs with
 * their own schemas, so that `kubectl explain` works for every kind.
 */

const CERT_MANAGER_CRDS = fileURLToPath(new URL('../../../../deploy/crds.yaml', import.meta.url));

/** What kubectl's Accept names, and what kube-openapi answers with. */
const KUBECTL_OPENAPI_V2_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

describe('OpenAPI documents', () => {
  it('/openapi/v3/api/v1 describes Secret field by field, with its group/version/kind', async () => {
    const root = await t.fetch('GET', '/openapi/v3');
    const url: string = root.json.paths['api/v1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{32}$/);
    const doc = (await t.fetch('GET', url)).json;
    const secret = doc.components.schemas['io.k8s.api.core.v1.Secret'];
    assert.deepEqual(secret['x-kubernetes-group-version-kind'], [
      { group: '', kind: 'Secret', version: 'v1' },
    ]);
    assert.deepEqual(secret.properties.data.additionalProperties, { type: 'string', format: 'byte' });
    assert.match(secret.properties.data.description, /^Data contains the secret data\./);
    assert.deepEqual(secret.properties.metadata, {
      $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
    const meta = doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'];
    assert.deepEqual(meta.properties.labels.additionalProperties, { type: 'string' });
    const owner = doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference'];
    assert.deepEqual(owner.required, ['apiVersion', 'kind', 'name', 'uid']);
    // The lists' strategic-merge strategies are the ones the server merges by.
    assert.equal(meta.properties.ownerReferences['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(meta.properties.ownerReferences['x-kubernetes-patch-merge-key'], 'uid');
    assert.equal(meta.properties.finalizers['x-kubernetes-patch-strategy'], 'merge');
    const serviceAccount = doc.components.schemas['io.k8s.api.core.v1.ServiceAccount'];
    assert.equal(serviceAccount.properties.secrets['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(serviceAccount.properties.imagePullSecrets['x-kubernetes-patch-strategy'], undefined);
  });

  it('a CRD adds its kind, from its own schema, to its group/version document', async () => {
    const before = (await t.fetch('GET', '/openapi/v3')).json.paths;
    assert.equal(before['apis/example.com/v1'], undefined);
    const crd = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
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
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    });
    assert.equal(crd.status, 201, crd.text);
    let url: string | undefined;
    for (let i = 0; i < 50 && url === undefined; i++) {
      url = (await t.fetch('GET', '/openapi/v3')).json.paths['apis/example.com/v1']?.serverRelativeURL;
      if (url === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(url, 'the CRD group/version is listed');
    const schemas = (await t.fetch('GET', url)).json.components.schemas;
    const widget = schemas['com.example.v1.Widget'];
    assert.deepEqual(widget['x-kubernetes-group-version-kind'], [
      { group: 'example.com', kind: 'Widget', version: 'v1' },
    ]);
    assert.deepEqual(widget.properties.spec.properties.size, { type: 'integer' });
    assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'], 'metadata is ObjectMeta');
  });

  it('a group/version that is not served, or a path that names none, is a 404', async () => {
    for (const path of [
      '/openapi/v3/apis/nowhere.example.com/v1',
      '/openapi/v3/api/v2',
      '/openapi/v3/a/b/c/d',
    ]) {
      const res = await t.fetch('GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json.kind, 'Status');
    }
  });

  it('/openapi/v2 serves the same schemas as Swagger 2.0 JSON, by default', async () => {
    const res = await t.fetch('GET', '/openapi/v2');
    assert.equal(res.status, 200);
    assert.equal(res.json.swagger, '2.0');
    const lease = res.json.definitions['io.k8s.api.coordination.v1.Lease'];
    assert.deepEqual(lease['x-kubernetes-group-version-kind'], [
      { group: 'coordination.k8s.io', kind: 'Lease', version: 'v1' },
    ]);
    assert.deepEqual(lease.properties.spec, { $ref: '#/definitions/io.k8s.api.coordination.v1.LeaseSpec' });
    const duration =
      res.json.definitions['io.k8s.api.coordination.v1.LeaseSpec'].properties.leaseDurationSeconds;
    assert.equal(duration.type, 'integer');
    assert.equal(duration.format, 'int32');
    assert.match(duration.description, /^leaseDurationSeconds is a duration/);
    // JSON is what a client naming no type gets.
    const anyType = await t.fetch('GET', '/openapi/v2', { headers: { Accept: '' } });
    assert.equal(anyType.headers['content-type'], 'application/json');
    assert.equal(anyType.text, res.text);
  });

  it('/openapi/v2 in gnostic protobuf to kubectl, decoded back to the JSON document’s content', async () => {
    const json = await t.fetch('GET', '/openapi/v2');
    const res = await t.fetch('GET', '/openapi/v2', { headers: { Accept: KUBECTL_OPENAPI_V2_ACCEPT } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], OPENAPI_V2_PROTOBUF);
    assert.equal(res.headers.vary, 'Accept');
    // One ETag for both encodings of one document (responses vary by Accept), as kube-openapi gives.
    assert.match(String(res.headers.etag), /^"[0-9A-F]{128}"$/);
    assert.equal(res.headers.etag, json.headers.etag);
    const doc = decodeOpenApiV2Protobuf(res.bytes);
    assert.equal(doc.swagger, '2.0');
    assert.deepEqual(doc.info, json.json.info);

    const definitions = new Map<string, any>(
      doc.definitions.additional_properties.map((d: any) => [d.name, d.value]),
    );
    assert.equal(definitions.size, Object.keys(json.json.definitions).length);
    const secret = definitions.get('io.k8s.api.core.v1.Secret');
    assert.deepEqual(secret.type, { value: ['object'] });
    // Vendor extensions are YAML text, which kubectl parses back.
    const gvk = secret.vendor_extension.find((e: any) => e.name === 'x-kubernetes-group-version-kind');
    assert.deepEqual(parseYaml(gvk.value.yaml), [{ group: '', kind: 'Secret', version: 'v1' }]);
    const properties = new Map<string, any>(
      secret.properties.additional_properties.map((p: any) => [p.name, p.value]),
    );
    assert.deepEqual(properties.get('data').additional_properties.schema, {
      type: { value: ['string'] },
      format: 'byte',
    });
    assert.match(properties.get('data').description, /^Data contains the secret data\./);
    assert.deepEqual(properties.get('metadata'), {
      _ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
    const owner = definitions.get('io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference');
    assert.deepEqual(owner.required, ['apiVersion', 'kind', 'name', 'uid']);
    const meta = definitions.get('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const finalizers = meta.properties.additional_properties.find((p: any) => p.name === 'finalizers').value;
    assert.deepEqual(finalizers.items, { schema: [{ type: { value: ['string'] } }] });

    // The PATCH of a Lease declares fieldValidation, which is what kubectl's v2 verifier looks for.
    const paths = new Map<string, any>(doc.paths.path.map((p: any) => [p.name, p.value]));
    assert.equal(paths.size, Object.keys(json.json.paths).length);
    const patch = paths.get('/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}').patch;
    assert.equal(patch.operation_id, 'patchLease');
    const leasePath = '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}';
    const jsonParameter = json.json.paths[leasePath].patch.parameters.find(
      (p: any) => p.name === 'fieldValidation',
    );
    const query = patch.parameters.map((p: any) => p.parameter.non_body_parameter.query_parameter_sub_schema);
    assert.deepEqual(
      query.find((q: any) => q.name === 'fieldValidation'),
      {
        in: 'query',
        name: 'fieldValidation',
        description: jsonParameter.description,
        type: 'string',
        unique_items: true,
      },
    );
    assert.match(jsonParameter.description, /^fieldValidation instructs/);
    const patchGvk = patch.vendor_extension.find((e: any) => e.name === 'x-kubernetes-group-version-kind');
    assert.deepEqual(parseYaml(patchGvk.value.yaml), {
      group: 'coordination.k8s.io',
      version: 'v1',
      kind: 'Lease',
    });
    assert.deepEqual(patch.responses.response_code, [
      { name: '200', value: { response: { description: 'OK' } } },
    ]);
  });

  it('/openapi/v2 negotiates: the preferred acceptable type wins, 304 for a known ETag, 406 for others', async () => {
    const protobufFirst = await t.fetch('GET', '/openapi/v2', {
      headers: { Accept: `application/json;q=0.5, ${OPENAPI_V2_PROTOBUF}` },
    });
    assert.equal(protobufFirst.headers['content-type'], OPENAPI_V2_PROTOBUF);
    const jsonFirst = await t.fetch('GET', '/openapi/v2', {
      headers: { Accept: `${KUBECTL_OPENAPI_V2_ACCEPT};q=0.9, application/json` },
    });
    assert.equal(jsonFirst.headers['content-type'], 'application/json');
    assert.equal(jsonFirst.json.swagger, '2.0');

    const notModified = await t.fetch('GET', '/openapi/v2', {
      headers: { Accept: KUBECTL_OPENAPI_V2_ACCEPT, 'If-None-Match': String(protobufFirst.headers.etag) },
    });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.bytes.length, 0);

    for (const accept of [
      'application/yaml',
      'application/vnd.kubernetes.protobuf',
      `${OPENAPI_V2_PROTOBUF};q=0`,
    ]) {
      const refused = await t.fetch('GET', '/openapi/v2', { headers: { Accept: accept } });
      assert.equal(refused.status, 406, accept);
      assert.equal(refused.json.reason, 'NotAcceptable');
    }
  });
});

describe('kubectl explain', { skip: kubectlSkip }, () => {
  let workDir: string;
  let kubectl: Kubectl;
  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'certkit-explain-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
  });
  after(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('explains secret.data', async () => {
    const out = await kubectl.ok('explain', 'secret.data');
    assert.match(out, /^KIND:\s+Secret\nVERSION:\s+v1\n/);
    assert.match(out, /FIELD: data <map\[string\]string>/);
    assert.match(out, /Data contains the secret data\./);
  });

  it('explains configmap with all its fields', async () => {
    const out = await kubectl.ok('explain', 'configmap');
    assert.match(out, /KIND:\s+ConfigMap/);
    assert.match(out, /ConfigMap holds configuration data for pods to consume\./);
    for (const field of ['apiVersion', 'binaryData', 'data', 'immutable', 'kind', 'metadata'])
      assert.match(out, new RegExp(`^  ${field}\\t<`, 'm'), field);
  });

  it('explains lease', async () => {
    const out = await kubectl.ok('explain', 'lease');
    assert.match(out, /GROUP:\s+coordination\.k8s\.io\nKIND:\s+Lease\nVERSION:\s+v1/);
    assert.match(out, /^  spec\t<LeaseSpec>/m);
    const spec = await kubectl.ok('explain', 'lease.spec.leaseDurationSeconds');
    assert.match(spec, /FIELD: leaseDurationSeconds <integer>/);
  });

  it('explains every kind the server serves', async () => {
    const resources = (await kubectl.ok('api-resources', '-o', 'name')).trim().split('\n');
    assert.ok(
      resources.includes('secrets') && resources.includes('leases.coordination.k8s.io'),
      resources.join(),
    );
    for (const resource of resources) {
      // kubectl resolves `events.events.k8s.io` to core's events (its first resource named `events`) and the
      // rest as fields, on any cluster: a name another group's resource shares is explained by its version.
      const [plural, ...rest] = resource.split('.');
      const group = rest.join('.');
      let args = ['explain', resource];
      if (group && resources.includes(plural)) {
        const listed = await kubectl.ok('api-resources', `--api-group=${group}`, '--no-headers');
        const line = listed.split('\n').find((l) => l.startsWith(`${plural} `))!;
        args = [
          'explain',
          plural,
          `--api-version=${line.split(/\s+/).find((c) => c.startsWith(`${group}/`))}`,
        ];
      }
      const r = await kubectl.run(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^(GROUP:.*\n)?KIND:/, resource);
    }
  });

  it('explains certificates.spec.dnsNames once the cert-manager CRDs are installed', async () => {
    await kubectl.ok('apply', '-f', CERT_MANAGER_CRDS);
    let out = '';
    for (let i = 0; i < 50; i++) {
      const r = await kubectl.run('explain', 'certificates.spec.dnsNames');
      out = r.stdout;
      if (r.code === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(out, /GROUP:\s+cert-manager\.io\nKIND:\s+Certificate\nVERSION:\s+v1/);
    assert.match(out, /FIELD: dnsNames <\[\]string>/);
    assert.match(out, /Requested DNS subject alternative names\./);
  });

  it('explains from /openapi/v2 (protobuf) with --output=plaintext-openapiv2, CRDs included', async () => {
    const secret = await kubectl.ok('explain', 'secret.data', '--output=plaintext-openapiv2');
    assert.match(secret, /^KIND:\s+Secret\nVERSION:\s+v1\n/);
    assert.match(secret, /FIELD:\s+data <map\[string\]string>/);
    assert.match(secret, /Data contains the secret data\./);
    const dnsNames = await kubectl.ok(
      'explain',
      'certificates.spec.dnsNames',
      '--output=plaintext-openapiv2',
    );
    assert.match(dnsNames, /KIND:\s+Certificate\nVERSION:\s+cert-manager\.io\/v1/);
    assert.match(dnsNames, /FIELD:\s+dnsNames <\[\]string>/);
    assert.match(dnsNames, /Requested DNS subject alternative names\./);
  });

  it('apply of a typo’d kind or apiVersion names it, as against kube-apiserver, after reading /openapi/v2', async () => {
    // The kind is missing from OpenAPI v3, so kubectl's validation falls back to /openapi/v2 in protobuf; read,
    // it lets the RESTMapper report the unknown kind (a 406 there was "failed to download openapi"). A custom
    // kind under an unserved version skips validation instead (kubectl finds the kind among the CRDs).
    for (const [apiVersion, kind, readsV2] of [
      ['cert-manager.io/v1', 'Certificat', true],
      ['v1', 'ConfigMapp', true],
      ['coordination.k8s.io/v2', 'Lease', true],
      ['cert-manager.io/v2', 'Certificate', false],
    ] as const) {
      const path = await kubectl.manifest(
        `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: typo\n  namespace: default\n`,
      );
      const r = await kubectl.run('apply', '-f', path, '-v=6');
      assert.equal(r.code, 1, r.stderr);
      const v2 = /GET https:\/\/\S+\/openapi\/v2\?timeout=\d+s (\d+)/.exec(r.stderr);
      assert.equal(v2?.[1], readsV2 ? '200' : undefined, `${apiVersion} ${kind}: ${r.stderr}`);
      assert.ok(
        r.stderr.endsWith(
          `error: resource mapping not found for name: "typo" namespace: "default" from "${path}": ` +
            `no matches for kind "${kind}" in version "${apiVersion}"\nensure CRDs are installed first\n`,
        ),
        r.stderr,
      );
    }
  });
});
