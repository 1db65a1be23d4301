import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Server-side apply with kubectl (`apply --server-side`) and raw requests: creation, idempotent re-apply,
 * field removal, list-maps and atomic lists, managedFields, conflicts between managers and forcing.
 */

const skip = kubectlSkip;

let t: TestServer;
let workDir: string;
let env: NodeJS.ProcessEnv;

let kubectl: Kubectl['run'];
let ok: Kubectl['ok'];
let manifest: Kubectl['manifest'];

async function getJson(...args: string[]) {
  return JSON.parse(await ok('get', ...args, '-o', 'json', '--show-managed-fields'));
}

const ssa = (path: string, ...extra: string[]) => ok('apply', '--server-side', '-f', path, ...extra);

function entries(obj: { metadata: { managedFields?: { manager: string; operation: string }[] } }) {
  return (obj.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`).sort();
}

const configMap = (ns: string, data: Record<string, string>) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
data:
${Object.entries(data)
  .map(([k, v]) => `  ${k}: "${v}"`)
  .join('\n')}
`;

const widgetCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.ssa.example.com}
spec:
  group: ssa.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            status:
              type: object
              properties:
                phase: {type: string}
            spec:
              type: object
              properties:
                size: {type: integer}
                ports:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string}
                      port: {type: integer}
                args:
                  type: array
                  items: {type: string}
                tags:
                  type: array
                  x-kubernetes-list-type: set
                  items: {type: string}
`;

describe('server-side apply', { skip }, () => {
  before(async () => {
    t = await startTestServer();
    workDir = await mkdtemp(join(tmpdir(), 'certkit-ssa-'));
    env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
    ({ run: kubectl, ok, manifest } = kubectlFor(env, workDir));
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('creates a ConfigMap, re-applies without a write, updates and removes fields', async () => {
    await ok('create', 'namespace', 'ssa-cm');
    const path = await manifest(configMap('ssa-cm', { a: '1', b: '2' }));
    assert.match(await ssa(path), /configmap\/settings serverside-applied/);
    const first = await getJson('configmap', 'settings', '-n', 'ssa-cm');
    assert.deepEqual(first.data, { a: '1', b: '2' });
    assert.deepEqual(first.metadata.managedFields, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: first.metadata.managedFields[0].time,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
      },
    ]);

    await ssa(path);
    const again = await getJson('configmap', 'settings', '-n', 'ssa-cm');
    assert.equal(
      again.metadata.resourceVersion,
      first.metadata.resourceVersion,
      'a repeat apply writes nothing',
    );

    await writeFile(path, configMap('ssa-cm', { a: '10' }));
    await ssa(path);
    const changed = await getJson('configmap', 'settings', '-n', 'ssa-cm');
    assert.deepEqual(changed.data, { a: '10' }, 'b, applied before and omitted now, is removed');
    assert.deepEqual(changed.metadata.managedFields[0].fieldsV1, { 'f:data': { 'f:a': {} } });
  });

  it('merges a built-in list-map by key and keeps another manager’s items', async () => {
    await ok('create', 'namespace', 'ssa-sa');
    const sa = (secrets: string[]) => `apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: ssa-sa}
secrets:
${secrets.map((s) => `  - name: ${s}`).join('\n')}
`;
    await ssa(await manifest(sa(['one', 'two'])));
    await ssa(await manifest(sa(['three'])), '--field-manager=other');
    const both = await getJson('serviceaccount', 'robot', '-n', 'ssa-sa');
    assert.deepEqual(
      both.secrets.map((s: { name: string }) => s.name),
      ['one', 'two', 'three'],
    );
    const mine = both.metadata.managedFields.find((e: { manager: string }) => e.manager === 'kubectl');
    assert.deepEqual(mine.fieldsV1, {
      'f:secrets': {
        'k:{"name":"one"}': { '.': {}, 'f:name': {} },
        'k:{"name":"two"}': { '.': {}, 'f:name': {} },
      },
    });
    await ssa(await manifest(sa(['one'])));
    const after = await getJson('serviceaccount', 'robot', '-n', 'ssa-sa');
    assert.deepEqual(
      after.secrets.map((s: { name: string }) => s.name),
      ['one', 'three'],
    );
  });

  it('applies custom resources: list-map by key, set by value, atomic list replaced', async () => {
    await ssa(await manifest(widgetCrd));
    await ok('create', 'namespace', 'ssa-cr');
    for (let i = 0; i < 50; i++) {
      if ((await kubectl('get', 'widgets', '-n', 'ssa-cr')).code === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const widget = (spec: string) => `apiVersion: ssa.example.com/v1
kind: Widget
metadata: {name: w, namespace: ssa-cr}
spec:
${spec}`;
    const path = await manifest(
      widget(`  size: 1
  ports: [{name: http, port: 80}, {name: https, port: 443}]
  args: [a, b]
  tags: [x]
`),
    );
    await ssa(path);
    const first = await getJson('widget', 'w', '-n', 'ssa-cr');
    await ssa(path);
    assert.equal(
      (await getJson('widget', 'w', '-n', 'ssa-cr')).metadata.resourceVersion,
      first.metadata.resourceVersion,
    );
    const fields = first.metadata.managedFields[0].fieldsV1;
    assert.deepEqual(fields['f:spec']['f:args'], {}, 'an atomic list is one field');
    assert.deepEqual(fields['f:spec']['f:tags'], { 'v:"x"': {} });
    assert.deepEqual(fields['f:spec']['f:ports']['k:{"name":"http"}'], {
      '.': {},
      'f:name': {},
      'f:port': {},
    });

    await writeFile(
      path,
      widget(`  size: 2
  ports: [{name: http, port: 8080}]
  args: [c]
`),
    );
    await ssa(path);
    const second = await getJson('widget', 'w', '-n', 'ssa-cr');
    assert.deepEqual(second.spec, { size: 2, ports: [{ name: 'http', port: 8080 }], args: ['c'] });
  });

  it('applies to the status subresource, owned apart from the spec', async () => {
    // The custom resource of the previous test.
    const path = '/apis/ssa.example.com/v1/namespaces/ssa-cr/widgets/w/status?fieldManager=status-writer';
    const applyStatus = (phase: string) =>
      t.fetch('PATCH', path, {
        rawBody: `apiVersion: ssa.example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {phase: ${phase}}\n`,
        headers: { 'content-type': 'application/apply-patch+yaml' },
      });
    const applied = await applyStatus('Ready');
    assert.equal(applied.status, 200, JSON.stringify(applied.json));
    const widget = await getJson('widget', 'w', '-n', 'ssa-cr');
    assert.equal(widget.status.phase, 'Ready');
    assert.equal(widget.spec.size, 2, 'the spec is untouched');
    const entry = widget.metadata.managedFields.find(
      (e: { manager: string }) => e.manager === 'status-writer',
    );
    assert.equal(entry.subresource, 'status');
    assert.equal(entry.operation, 'Apply');
    assert.deepEqual(entry.fieldsV1, { 'f:status': { 'f:phase': {} } });

    // A spec apply by its own manager neither owns nor removes the status.
    await ok(
      'apply',
      '--server-side',
      '-f',
      await manifest(`apiVersion: ssa.example.com/v1
kind: Widget
metadata: {name: w, namespace: ssa-cr}
spec:
  size: 3
  ports: [{name: http, port: 8080}]
  args: [c]
`),
    );
    const after = await getJson('widget', 'w', '-n', 'ssa-cr');
    assert.equal(after.spec.size, 3);
    assert.equal(after.status.phase, 'Ready');
    // The status manager applies a new value without conflict: nobody else owns it.
    assert.equal((await applyStatus('Degraded')).status, 200);
    assert.equal((await getJson('widget', 'w', '-n', 'ssa-cr')).status.phase, 'Degraded');
  });

  it('conflicts with another manager, forces, and shows both managers', async () => {
    await ok('create', 'namespace', 'ssa-conflict');
    await ssa(
      await manifest(configMap('ssa-conflict', { mode: 'fast', owner: 'a' })),
      '--field-manager=alpha',
    );
    const path = await manifest(configMap('ssa-conflict', { mode: 'slow' }));
    const r = await kubectl('apply', '--server-side', '--field-manager=beta', '-f', path);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "alpha": \.data\.mode/);

    const raw = await t.fetch(
      'PATCH',
      '/api/v1/namespaces/ssa-conflict/configmaps/settings?fieldManager=beta',
      {
        rawBody: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { mode: 'slow' } }),
        headers: { 'content-type': 'application/apply-patch+yaml' },
      },
    );
    assert.equal(raw.status, 409);
    assert.equal(raw.json.reason, 'Conflict');
    assert.deepEqual(raw.json.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alpha"', field: '.data.mode' },
    ]);

    await ssa(path, '--field-manager=beta', '--force-conflicts');
    const forced = await getJson('configmap', 'settings', '-n', 'ssa-conflict');
    assert.equal(forced.data.mode, 'slow');
    assert.deepEqual(entries(forced), ['alpha/Apply', 'beta/Apply']);
    const alpha = forced.metadata.managedFields.find((e: { manager: string }) => e.manager === 'alpha');
    assert.deepEqual(alpha.fieldsV1, { 'f:data': { 'f:owner': {} } }, 'forcing took .data.mode from alpha');
    const yaml = await ok(
      'get',
      'configmap',
      'settings',
      '-n',
      'ssa-conflict',
      '-o',
      'yaml',
      '--show-managed-fields',
    );
    assert.match(yaml, /manager: alpha/);
    assert.match(yaml, /manager: beta/);
  });

  it('moves ownership to an ordinary update, so the applier then conflicts with it', async () => {
    await ok('create', 'namespace', 'ssa-update');
    const path = await manifest(configMap('ssa-update', { level: 'info' }));
    await ssa(path);
    await ok(
      'patch',
      'configmap',
      'settings',
      '-n',
      'ssa-update',
      '--type=merge',
      '-p',
      '{"data":{"level":"debug"}}',
    );
    const patched = await getJson('configmap', 'settings', '-n', 'ssa-update');
    assert.deepEqual(entries(patched), ['kubectl-patch/Update']);
    const update = patched.metadata.managedFields[0];
    assert.equal(update.apiVersion, 'v1');
    assert.deepEqual(update.fieldsV1, { 'f:data': { 'f:level': {} } });

    const r = await kubectl('apply', '--server-side', '-f', path);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /conflict with "kubectl-patch" using v1: \.data\.level/);

    // A raw update without fieldManager is owned by its User-Agent's product.
    const current = (await t.fetch('GET', '/api/v1/namespaces/ssa-update/configmaps/settings')).json;
    const put = await t.fetch('PUT', '/api/v1/namespaces/ssa-update/configmaps/settings', {
      body: { ...current, data: { ...current.data, extra: 'x' } },
      headers: { 'user-agent': 'my-tool/1.2 (linux)' },
    });
    assert.equal(put.status, 200, put.text);
    assert.ok(put.json.metadata.managedFields.some((e: { manager: string }) => e.manager === 'my-tool'));
  });

  it('leaves objects that were never applied without managedFields', async () => {
    await ok('create', 'namespace', 'ssa-plain');
    await ok('create', 'configmap', 'plain', '-n', 'ssa-plain', '--from-literal=a=1');
    await ok('patch', 'configmap', 'plain', '-n', 'ssa-plain', '--type=merge', '-p', '{"data":{"a":"2"}}');
    const plain = await getJson('configmap', 'plain', '-n', 'ssa-plain');
    assert.equal(plain.metadata.managedFields, undefined);
  });

  it('refuses an apply without fieldManager and creates with dryRun=All without storing', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } });
    const headers = { 'content-type': 'application/apply-patch+yaml' };
    const none = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/dry', {
      rawBody: body,
      headers,
    });
    assert.equal(none.status, 422);
    assert.equal(
      none.json.message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const dry = await t.fetch(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/dry?fieldManager=x&dryRun=All',
      {
        rawBody: body,
        headers,
      },
    );
    // An apply that creates answers 201, dry run or not (patch.go: wasCreated).
    assert.equal(dry.status, 201, dry.text);
    assert.equal(dry.json.data.a, '1');
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/dry')).status, 404);
  });

  it('applies the repository examples (cert-manager CRDs, Issuers, Certificates, a Secret)', async () => {
    // The CRDs as shipped; certificates' crds.test.ts keeps this file equal to what certManagerCrds() renders.
    // Read as a file, not imported: apiserver sits below certificates.
    await ssa(join(import.meta.dirname, '../../../../deploy/crds.yaml'));
    for (let i = 0; i < 50; i++) {
      if ((await kubectl('get', 'certificates', '-A')).code === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const examples = join(import.meta.dirname, '../../../../examples');
    const out = await ssa(examples);
    const files = await readdir(examples);
    assert.ok(files.length >= 4);
    assert.match(out, /issuer\.cert-manager\.io\/selfsigned serverside-applied/);
    assert.match(out, /certificate\.cert-manager\.io\/\S+ serverside-applied/);
    assert.match(out, /secret\/\S+ serverside-applied/);
    const again = await ssa(examples);
    assert.match(again, /serverside-applied/);
  });
});
