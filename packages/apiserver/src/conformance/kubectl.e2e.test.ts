import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kubectl, kubectlFor, kubectlPath, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/**
 * Conformance with kubectl, a client nobody here wrote: apply (client-side), get (human tables and JSON),
 * label/annotate/patch, CRDs with printer columns and short names, deletion with garbage collection,
 * `get -w`, namespaces and discovery. Skipped, with the reason printed, when kubectl is not on PATH.
 */

const skip = kubectlSkip;
if (skip) console.log(`# skipping the kubectl conformance suite: ${skip}`);

let t: TestServer;
let workDir: string;
let env: NodeJS.ProcessEnv;

let kubectl: Kubectl['run'];
let ok: Kubectl['ok'];
let manifest: Kubectl['manifest'];

async function getJson(...args: string[]) {
  return JSON.parse(await ok('get', ...args, '-o', 'json'));
}

async function createNamespace(name: string): Promise<string> {
  await ok('create', 'namespace', name);
  return name;
}

async function exists(kind: string, name: string, ns: string): Promise<boolean> {
  const out = await ok('get', kind, name, '-n', ns, '--ignore-not-found', '-o', 'name');
  return out.trim() !== '';
}

/** A CRD with a free-form schema in meters.example.com. */
function minimalCrd(plural: string, scope: 'Cluster' | 'Namespaced' = 'Cluster'): string {
  const kind = plural[0].toUpperCase() + plural.slice(1, -1);
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.meters.example.com}
spec:
  group: meters.example.com
  scope: ${scope}
  names: {plural: ${plural}, singular: ${plural.slice(0, -1)}, kind: ${kind}}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
}

/** A ConfigMap `owner` and a Secret `owned-credentials` with an ownerReference to it; returns the owner uid. */
async function ownerAndDependent(ns: string, blockOwnerDeletion = false): Promise<string> {
  await ok('create', 'configmap', 'owner', '-n', ns, '--from-literal=release=v1');
  const uid = (await ok('get', 'configmap', 'owner', '-n', ns, '-o', 'jsonpath={.metadata.uid}')).trim();
  assert.match(uid, /^[0-9a-f-]{36}$/);
  const out = await ok(
    'apply',
    '-f',
    await manifest(`apiVersion: v1
kind: Secret
metadata:
  name: owned-credentials
  namespace: ${ns}
  ownerReferences:
    - apiVersion: v1
      kind: ConfigMap
      name: owner
      uid: ${uid}
      blockOwnerDeletion: ${blockOwnerDeletion}
stringData:
  token: abc123
`),
  );
  assert.equal(out.trim(), 'secret/owned-credentials created');
  return uid;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/**
 * Splits a kubectl human table into rows of cells, cutting every line at the header's column offsets
 * (kubectl aligns columns with a tabwriter), so an empty cell stays an empty string.
 */
function tableRows(out: string): string[][] {
  const lines = out.replace(/\n+$/, '').split('\n');
  const starts = [...lines[0].matchAll(/(?:^|\s{2,})(\S)/g)].map((m) => (m.index ?? 0) + m[0].length - 1);
  return lines.map((line) =>
    starts.map((start, i) => line.slice(start, i + 1 < starts.length ? starts[i + 1] : undefined).trim()),
  );
}

describe('kubectl', { skip }, () => {
  before(async () => {
    t = await startTestServer();
    workDir = await mkdtemp(join(tmpdir(), 'certkit-kubectl-'));
    env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
    ({ run: kubectl, ok, manifest } = kubectlFor(env, workDir));
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  describe('apply and get of a Secret', () => {
    it('creates on the first apply, configures on a changed apply, and is unchanged on a repeat', async () => {
      const ns = await createNamespace('orders-api');
      const secretYaml = (password: string) => `apiVersion: v1
kind: Secret
metadata:
  name: postgres-credentials
  namespace: ${ns}
  labels:
    app.kubernetes.io/name: orders-api
type: Opaque
data:
  username: ${b64('orders')}
  password: ${b64(password)}
`;
      const path = await manifest(secretYaml('s3cr3t-v1'));
      assert.equal((await ok('apply', '-f', path)).trim(), 'secret/postgres-credentials created');

      const first = await getJson('secret', 'postgres-credentials', '-n', ns);
      assert.equal(first.kind, 'Secret');
      assert.equal(unb64(first.data.password), 's3cr3t-v1');
      assert.equal(unb64(first.data.username), 'orders');
      assert.equal(first.type, 'Opaque');
      assert.ok(
        first.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'],
        'client-side apply records the last applied configuration',
      );

      await writeFile(path, secretYaml('s3cr3t-v2'));
      assert.equal((await ok('apply', '-f', path)).trim(), 'secret/postgres-credentials configured');
      const second = await getJson('secret', 'postgres-credentials', '-n', ns);
      assert.equal(unb64(second.data.password), 's3cr3t-v2');
      assert.equal(unb64(second.data.username), 'orders');
      assert.equal(second.metadata.uid, first.metadata.uid);
      assert.notEqual(second.metadata.resourceVersion, first.metadata.resourceVersion);

      // (With stringData kubectl would report "configured" every time, against any server: the live object
      // never carries stringData. So this manifest uses data only.)
      assert.equal((await ok('apply', '-f', path)).trim(), 'secret/postgres-credentials unchanged');
    });

    it('removes keys, labels and ownerReferences dropped from the manifest on the next apply', async () => {
      const ns = await createNamespace('apply-prune');
      await ok('create', 'configmap', 'parent-a', '-n', ns);
      await ok('create', 'configmap', 'parent-b', '-n', ns);
      const uid = async (name: string) =>
        (await ok('get', 'configmap', name, '-n', ns, '-o', 'jsonpath={.metadata.uid}')).trim();
      const refs = { a: await uid('parent-a'), b: await uid('parent-b') };
      const yaml = (keys: string[], labels: string[], owners: ('a' | 'b')[]) => `apiVersion: v1
kind: Secret
metadata:
  name: api-keys
  namespace: ${ns}
  labels: {${labels.map((l) => `${l}: "true"`).join(', ')}}
  ownerReferences:
${owners.map((o) => `    - {apiVersion: v1, kind: ConfigMap, name: parent-${o}, uid: ${refs[o]}}`).join('\n')}
data: {${keys.map((k) => `${k}: ${b64(k)}`).join(', ')}}
`;
      const path = await manifest(yaml(['github', 'gitlab', 'slack'], ['billing', 'public'], ['a', 'b']));
      await ok('apply', '-f', path);
      // Something else adds a key kubectl never applied: apply must leave it alone.
      await ok(
        'patch',
        'secret',
        'api-keys',
        '-n',
        ns,
        '--type',
        'merge',
        '-p',
        `{"data":{"pagerduty":"${b64('pd')}"}}`,
      );
      await writeFile(path, yaml(['github'], ['billing'], ['b']));
      assert.equal((await ok('apply', '-f', path)).trim(), 'secret/api-keys configured');
      const secret = await getJson('secret', 'api-keys', '-n', ns);
      assert.deepEqual(Object.keys(secret.data).sort(), ['github', 'pagerduty']);
      assert.deepEqual(secret.metadata.labels, { billing: 'true' });
      assert.deepEqual(
        secret.metadata.ownerReferences.map((r: { name: string }) => r.name),
        ['parent-b'],
      );
    });

    it('does not persist a --dry-run=server apply', async () => {
      const ns = await createNamespace('dry-run');
      const path = await manifest(`apiVersion: v1
kind: Secret
metadata:
  name: preview-token
  namespace: ${ns}
stringData:
  token: preview
`);
      const out = await ok('apply', '-f', path, '--dry-run=server');
      assert.equal(out.trim(), 'secret/preview-token created (server dry run)');
      assert.equal(await exists('secret', 'preview-token', ns), false);
      await ok('apply', '-f', path);
      const live = await getJson('secret', 'preview-token', '-n', ns);
      await ok('label', 'secret', 'preview-token', '-n', ns, 'stage=canary', '--dry-run=server');
      const after = await getJson('secret', 'preview-token', '-n', ns);
      assert.equal(after.metadata.labels, undefined);
      assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion);
    });

    it('rejects unknown fields under the default strict field validation', async () => {
      const ns = await createNamespace('strict-fields');
      const r = await kubectl(
        'apply',
        '-f',
        await manifest(`apiVersion: v1
kind: ConfigMap
metadata:
  name: typo-config
  namespace: ${ns}
  lables:
    app: typo
data:
  key: value
datta:
  other: value
`),
      );
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stderr, /unknown field "datta"/);
      assert.match(r.stderr, /unknown field "metadata\.lables"/);
      assert.equal(await exists('configmap', 'typo-config', ns), false);
    });

    it('lists across namespaces and in chunks, with labels shown', async () => {
      const a = await createNamespace('chunk-east');
      const b = await createNamespace('chunk-west');
      for (const ns of [a, b]) {
        for (let i = 0; i < 3; i++) {
          await ok('create', 'configmap', `shard-${i}`, '-n', ns, `--from-literal=region=${ns}`);
        }
        await ok('label', 'configmap', '--all', '-n', ns, `region=${ns}`);
      }
      const rows = tableRows(
        await ok(
          'get',
          'configmaps',
          '-A',
          '-l',
          'region in (chunk-east,chunk-west)',
          '--chunk-size=2',
          '--show-labels',
        ),
      );
      assert.deepEqual(rows[0], ['NAMESPACE', 'NAME', 'DATA', 'AGE', 'LABELS']);
      assert.deepEqual(
        rows.slice(1).map((r) => [r[0], r[1], r[4]]),
        [a, b].flatMap((ns) => [0, 1, 2].map((i) => [ns, `shard-${i}`, `region=${ns}`])),
      );
      // --sort-by asks for Tables with includeObject=Object.
      const sorted = tableRows(await ok('get', 'configmaps', '-n', a, '--sort-by=.metadata.name'));
      assert.deepEqual(
        sorted.slice(1).map((r) => r[0]),
        ['shard-0', 'shard-1', 'shard-2'],
      );
      assert.match(
        await ok('delete', 'configmaps', '-n', b, '-l', `region=${b}`),
        /configmap "shard-2" deleted/,
      );
      assert.equal((await ok('get', 'configmaps', '-n', b, '-l', `region=${b}`, '-o', 'name')).trim(), '');
    });

    it('prints Secrets and ConfigMaps with the kube-apiserver columns', async () => {
      const ns = await createNamespace('printing');
      await ok(
        'create',
        'secret',
        'generic',
        'smtp-relay',
        '-n',
        ns,
        '--from-literal=user=mailer',
        '--from-literal=pass=x',
      );
      await ok('create', 'configmap', 'feature-flags', '-n', ns, '--from-literal=darkMode=true');
      const secrets = tableRows(await ok('get', 'secrets', '-n', ns));
      assert.deepEqual(secrets[0], ['NAME', 'TYPE', 'DATA', 'AGE']);
      assert.deepEqual(secrets[1].slice(0, 3), ['smtp-relay', 'Opaque', '2']);
      const configMaps = tableRows(await ok('get', 'configmaps', '-n', ns));
      assert.deepEqual(configMaps[0], ['NAME', 'DATA', 'AGE']);
      assert.deepEqual(configMaps[1].slice(0, 2), ['feature-flags', '1']);
    });
  });

  describe('other built-ins and errors', () => {
    it('prints Leases, ServiceAccounts, Events and CRDs with the kube-apiserver columns', async () => {
      const ns = await createNamespace('tables');
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: scheduler-lock, namespace: ${ns}}
spec: {holderIdentity: node-a_7f3e, leaseDurationSeconds: 15}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: ci-deployer, namespace: ${ns}}
---
apiVersion: v1
kind: Event
metadata: {name: ci-deployer.17a1, namespace: ${ns}}
involvedObject: {kind: ServiceAccount, name: ci-deployer, namespace: ${ns}}
reason: TokenRotated
message: rotated the token
type: Normal
`),
      );
      const leases = tableRows(await ok('get', 'leases', '-n', ns));
      assert.deepEqual(leases[0], ['NAME', 'HOLDER', 'AGE']);
      assert.deepEqual(leases[1].slice(0, 2), ['scheduler-lock', 'node-a_7f3e']);
      const sas = tableRows(await ok('get', 'sa', '-n', ns));
      assert.deepEqual(sas[0], ['NAME', 'SECRETS', 'AGE']);
      assert.deepEqual(sas[1].slice(0, 2), ['ci-deployer', '0']);
      const events = tableRows(await ok('get', 'events', '-n', ns));
      assert.deepEqual(events[0], ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      assert.deepEqual(events[1].slice(1), [
        'Normal',
        'TokenRotated',
        'serviceaccount/ci-deployer',
        'rotated the token',
      ]);
      // -o wide adds kube-apiserver's SUBOBJECT, SOURCE, FIRST SEEN, COUNT and NAME: the source is the legacy
      // source (component, host), else reportingComponent and reportingInstance; no count means one.
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: v1
kind: Event
metadata: {name: ci-deployer.17a2, namespace: ${ns}}
involvedObject: {kind: ServiceAccount, name: ci-deployer, namespace: ${ns}, fieldPath: 'secrets[0]'}
reason: TokenChecked
message: '  checked the token  '
type: Normal
source: {component: token-checker, host: node-a}
count: 3
---
apiVersion: v1
kind: Event
metadata: {name: ci-deployer.17a3, namespace: ${ns}}
involvedObject: {kind: ServiceAccount, name: ci-deployer, namespace: ${ns}}
reason: TokenAudited
message: audited
type: Warning
reportingComponent: token-auditor
reportingInstance: auditor-0
`),
      );
      const wide = tableRows(
        await ok('get', 'events', '-n', ns, '-o', 'wide', '--sort-by', '.metadata.name'),
      );
      assert.deepEqual(wide[0], [
        'LAST SEEN',
        'TYPE',
        'REASON',
        'OBJECT',
        'SUBOBJECT',
        'SOURCE',
        'MESSAGE',
        'FIRST SEEN',
        'COUNT',
        'NAME',
      ]);
      assert.deepEqual(wide[1].slice(1, 4), ['Normal', 'TokenRotated', 'serviceaccount/ci-deployer']);
      assert.deepEqual(wide[1].slice(-2), ['1', 'ci-deployer.17a1']);
      const checked = wide[2].join(' ');
      assert.match(checked, / secrets\[0\] token-checker, node-a checked the token \S+ 3 ci-deployer\.17a2$/);
      const audited = wide[3].join(' ');
      assert.match(audited, / token-auditor, auditor-0 audited \S+ 1 ci-deployer\.17a3$/);
      await ok('apply', '-f', await manifest(minimalCrd('gauges')));
      const crds = tableRows(await ok('get', 'crd', 'gauges.meters.example.com'));
      assert.deepEqual(crds[0], ['NAME', 'CREATED AT']);
      assert.equal(crds[1][0], 'gauges.meters.example.com');
      assert.match(crds[1][1], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    it('reports NotFound and AlreadyExists as kubectl does', async () => {
      const ns = await createNamespace('errors');
      const missing = await kubectl('get', 'secret', 'vault-token', '-n', ns);
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr.trim(), 'Error from server (NotFound): secrets "vault-token" not found');
      const path = await manifest(`apiVersion: v1
kind: Secret
metadata: {name: vault-token, namespace: ${ns}}
stringData: {token: s.abc}
`);
      await ok('create', '-f', path);
      const again = await kubectl('create', '-f', path);
      assert.equal(again.code, 1);
      assert.equal(
        again.stderr.trim(),
        `Error from server (AlreadyExists): error when creating "${path}": secrets "vault-token" already exists`,
      );
      const missingNs = await kubectl('get', 'namespace', 'no-such-team');
      assert.equal(
        missingNs.stderr.trim(),
        'Error from server (NotFound): namespaces "no-such-team" not found',
      );
    });

    it('replaces from a file and diffs against the live object with a server dry run', async () => {
      const ns = await createNamespace('diffing');
      const cm = (level: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: logging, namespace: ${ns}}
data: {level: ${level}}
`;
      const path = await manifest(cm('info'));
      await ok('create', '-f', path);
      await writeFile(path, cm('debug'));
      assert.equal((await ok('replace', '-f', path)).trim(), 'configmap/logging replaced');
      assert.equal((await getJson('configmap', 'logging', '-n', ns)).data.level, 'debug');

      const same = await kubectl('diff', '-f', path);
      assert.equal(same.code, 0, `no differences: ${same.stdout}${same.stderr}`);
      await writeFile(path, cm('warn'));
      const changed = await kubectl('diff', '-f', path);
      assert.equal(changed.code, 1, `differences: ${changed.stderr}`);
      assert.match(changed.stdout, /^-  level: debug$/m);
      assert.match(changed.stdout, /^\+  level: warn$/m);
      assert.equal(
        (await getJson('configmap', 'logging', '-n', ns)).data.level,
        'debug',
        'diff changes nothing',
      );
    });
  });

  describe('label, annotate and patch', () => {
    it('labels and annotates (add, overwrite, remove)', async () => {
      const ns = await createNamespace('search');
      await ok(
        'create',
        'configmap',
        'elasticsearch-config',
        '-n',
        ns,
        '--from-literal=cluster.name=search-prod',
      );
      assert.match(
        await ok('label', 'configmap', 'elasticsearch-config', '-n', ns, 'tier=data', 'team=search'),
        /configmap\/elasticsearch-config labeled/,
      );
      assert.match(
        await ok(
          'annotate',
          'configmap',
          'elasticsearch-config',
          '-n',
          ns,
          'oncall.example.com/pager=search-team',
        ),
        /configmap\/elasticsearch-config annotated/,
      );
      const overwrite = await kubectl('label', 'configmap', 'elasticsearch-config', '-n', ns, 'tier=hot');
      assert.notEqual(overwrite.code, 0, 'changing a label needs --overwrite');
      await ok('label', 'configmap', 'elasticsearch-config', '-n', ns, 'tier=hot', '--overwrite');
      await ok('label', 'configmap', 'elasticsearch-config', '-n', ns, 'team-');
      const cm = await getJson('configmap', 'elasticsearch-config', '-n', ns);
      assert.deepEqual(cm.metadata.labels, { tier: 'hot' });
      assert.equal(cm.metadata.annotations['oncall.example.com/pager'], 'search-team');
      assert.equal(cm.data['cluster.name'], 'search-prod');

      const selected = await ok('get', 'configmaps', '-n', ns, '-l', 'tier=hot', '-o', 'name');
      assert.equal(selected.trim(), 'configmap/elasticsearch-config');
    });

    it('patches with strategic (default), merge and json patch types', async () => {
      const ns = await createNamespace('gateway');
      await ok(
        'create',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '--from-literal=timeout=5s',
        '--from-literal=retries=3',
      );

      const strategic = await ok(
        'patch',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '-p',
        '{"data":{"timeout":"10s"}}',
      );
      assert.match(strategic, /configmap\/envoy-routes patched/);
      const merge = await ok(
        'patch',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '--type',
        'merge',
        '-p',
        '{"data":{"retries":null,"circuitBreaker":"on"}}',
      );
      assert.match(merge, /configmap\/envoy-routes patched/);
      const json = await ok(
        'patch',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '--type',
        'json',
        '-p',
        '[{"op":"add","path":"/data/hosts","value":"api.example.com"},{"op":"replace","path":"/data/timeout","value":"15s"},{"op":"remove","path":"/data/circuitBreaker"}]',
      );
      assert.match(json, /configmap\/envoy-routes patched/);
      const cm = await getJson('configmap', 'envoy-routes', '-n', ns);
      assert.deepEqual(cm.data, { timeout: '15s', hosts: 'api.example.com' });

      const noop = await ok(
        'patch',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '-p',
        '{"data":{"timeout":"15s"}}',
      );
      assert.match(noop, /configmap\/envoy-routes patched \(no change\)/);

      const failed = await kubectl(
        'patch',
        'configmap',
        'envoy-routes',
        '-n',
        ns,
        '--type',
        'json',
        '-p',
        '[{"op":"test","path":"/data/timeout","value":"1s"}]',
      );
      assert.notEqual(failed.code, 0, 'a failed json-patch test op is an error');
    });

    it('merges ownerReferences by uid and finalizers as a set in a strategic merge patch', async () => {
      const ns = await createNamespace('smp-lists');
      await ok('create', 'configmap', 'release-a', '-n', ns);
      await ok('create', 'configmap', 'release-b', '-n', ns);
      const uidA = (
        await ok('get', 'configmap', 'release-a', '-n', ns, '-o', 'jsonpath={.metadata.uid}')
      ).trim();
      const uidB = (
        await ok('get', 'configmap', 'release-b', '-n', ns, '-o', 'jsonpath={.metadata.uid}')
      ).trim();
      await ok(
        'create',
        'secret',
        'generic',
        'release-values',
        '-n',
        ns,
        '--from-literal=values.yaml=replicas: 2',
      );
      const ref = (name: string, uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
      await ok(
        'patch',
        'secret',
        'release-values',
        '-n',
        ns,
        '-p',
        JSON.stringify({
          metadata: { ownerReferences: [ref('release-a', uidA)], finalizers: ['example.com/a'] },
        }),
      );
      await ok(
        'patch',
        'secret',
        'release-values',
        '-n',
        ns,
        '-p',
        JSON.stringify({
          metadata: { ownerReferences: [ref('release-b', uidB)], finalizers: ['example.com/b'] },
        }),
      );
      const secret = await getJson('secret', 'release-values', '-n', ns);
      assert.deepEqual(secret.metadata.ownerReferences.map((r: { name: string }) => r.name).sort(), [
        'release-a',
        'release-b',
      ]);
      assert.deepEqual([...secret.metadata.finalizers].sort(), ['example.com/a', 'example.com/b']);
      // Release the finalizers so the namespace could go.
      await ok(
        'patch',
        'secret',
        'release-values',
        '-n',
        ns,
        '--type',
        'merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      );
    });
  });

  describe('CustomResourceDefinitions', () => {
    const crdYaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: lamps.furniture.example.com
spec:
  group: furniture.example.com
  scope: Namespaced
  names:
    plural: lamps
    singular: lamp
    kind: Lamp
    listKind: LampList
    shortNames:
      - lp
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
      additionalPrinterColumns:
        - name: Color
          type: string
          jsonPath: .spec.color
        - name: Watts
          type: integer
          jsonPath: .spec.watts
        - name: Lit
          type: boolean
          jsonPath: .status.lit
        - name: Room
          type: string
          jsonPath: .spec.room
          priority: 1
        - name: Age
          type: date
          jsonPath: .metadata.creationTimestamp
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [color]
              properties:
                color:
                  type: string
                  enum: [amber, white, red]
                watts:
                  type: integer
                  minimum: 1
                  maximum: 200
                room:
                  type: string
            status:
              type: object
              properties:
                lit:
                  type: boolean
`;
    const lampYaml = (ns: string, name: string, spec: string) => `apiVersion: furniture.example.com/v1
kind: Lamp
metadata:
  name: ${name}
  namespace: ${ns}
spec:
${spec}
`;
    let crdApplied: Promise<void> | undefined;
    const applyCrd = () => {
      crdApplied ??= (async () => {
        const out = await ok('apply', '-f', await manifest(crdYaml));
        assert.equal(
          out.trim(),
          'customresourcedefinition.apiextensions.k8s.io/lamps.furniture.example.com created',
        );
      })();
      return crdApplied;
    };

    it('applies a CRD, then at once a custom resource, and prints it by short name with its columns', async () => {
      await applyCrd();
      const ns = await createNamespace('living-room');
      const out = await ok(
        'apply',
        '-f',
        await manifest(lampYaml(ns, 'desk-lamp', '  color: amber\n  watts: 40')),
      );
      assert.equal(out.trim(), 'lamp.furniture.example.com/desk-lamp created');

      const rows = tableRows(await ok('get', 'lp', '-n', ns));
      assert.deepEqual(rows[0], ['NAME', 'COLOR', 'WATTS', 'LIT', 'AGE']);
      assert.equal(rows.length, 2);
      assert.deepEqual(
        rows[1].slice(0, 4),
        ['desk-lamp', 'amber', '40', ''],
        'a missing value is an empty cell',
      );
      assert.match(rows[1][rows[1].length - 1], /^\d+s$/, `an age like 3s in ${JSON.stringify(rows[1])}`);

      const lamp = await getJson('lamp', 'desk-lamp', '-n', ns);
      assert.equal(lamp.apiVersion, 'furniture.example.com/v1');
      assert.equal(lamp.spec.color, 'amber');

      const fullName = tableRows(await ok('get', 'lamps.furniture.example.com', 'desk-lamp', '-n', ns));
      assert.deepEqual(fullName[0], ['NAME', 'COLOR', 'WATTS', 'LIT', 'AGE']);

      await ok('patch', 'lamp', 'desk-lamp', '-n', ns, '--type', 'merge', '-p', '{"spec":{"room":"study"}}');
      const wide = tableRows(await ok('get', 'lp', '-n', ns, '-o', 'wide'));
      // Declared order: Color, Watts, Lit, Room (priority 1), Age.
      assert.deepEqual(
        wide[0],
        ['NAME', 'COLOR', 'WATTS', 'LIT', 'ROOM', 'AGE'],
        'priority-1 columns only in -o wide',
      );
      assert.equal(wide[1][4], 'study', JSON.stringify(wide));
    });

    it('updates status only through the status subresource', async () => {
      await applyCrd();
      const ns = await createNamespace('bedroom');
      await ok('apply', '-f', await manifest(lampYaml(ns, 'reading-lamp', '  color: white\n  watts: 12')));
      await ok('patch', 'lamp', 'reading-lamp', '-n', ns, '--type', 'merge', '-p', '{"status":{"lit":true}}');
      let lamp = await getJson('lamp', 'reading-lamp', '-n', ns);
      assert.equal(lamp.status?.lit, undefined, 'status is ignored on the main resource');
      assert.equal(lamp.metadata.generation, 1);

      await ok(
        'patch',
        'lamp',
        'reading-lamp',
        '-n',
        ns,
        '--subresource=status',
        '--type',
        'merge',
        '-p',
        '{"status":{"lit":true},"spec":{"watts":99}}',
      );
      lamp = await getJson('lamp', 'reading-lamp', '-n', ns);
      assert.equal(lamp.status.lit, true);
      assert.equal(lamp.spec.watts, 12, 'spec is ignored on the status subresource');
      assert.equal(lamp.metadata.generation, 1);
      const rows = tableRows(await ok('get', 'lp', 'reading-lamp', '-n', ns));
      assert.deepEqual(rows[1].slice(0, 4), ['reading-lamp', 'white', '12', 'true']);
    });

    it('kubectl get <shortname> -w prints changes with the printer columns, and kubectl wait sees status', async () => {
      await applyCrd();
      const ns = await createNamespace('hallway');
      await ok('apply', '-f', await manifest(lampYaml(ns, 'ceiling-lamp', '  color: white\n  watts: 60')));
      const child = spawn(kubectlPath!, ['get', 'lp', '-n', ns, '-w'], { env });
      let stdout = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      try {
        await eventually(async () => stdout.includes('ceiling-lamp'), 'the initial table', 10_000, 100);
        await sleep(500);
        const waiting = kubectl(
          'wait',
          'lamp/ceiling-lamp',
          '-n',
          ns,
          '--for=jsonpath={.status.lit}=true',
          '--timeout=15s',
        );
        await sleep(300);
        await ok(
          'patch',
          'lamp',
          'ceiling-lamp',
          '-n',
          ns,
          '--type',
          'merge',
          '-p',
          '{"spec":{"color":"red"}}',
        );
        await ok(
          'patch',
          'lamp',
          'ceiling-lamp',
          '-n',
          ns,
          '--subresource=status',
          '--type',
          'merge',
          '-p',
          '{"status":{"lit":true}}',
        );
        await eventually(
          async () => /ceiling-lamp\s+red\s+60\s+true\s/.test(stdout),
          'the lit lamp in the watch output',
          10_000,
          100,
        );
        const lines = tableRows(stdout);
        assert.deepEqual(lines[0], ['NAME', 'COLOR', 'WATTS', 'LIT', 'AGE']);
        assert.equal(lines.filter((l) => l[0] === 'NAME').length, 1, 'headers are printed once');
        const waited = await waiting;
        assert.equal(waited.code, 0, waited.stderr);
        assert.equal(waited.stdout.trim(), 'lamp.furniture.example.com/ceiling-lamp condition met');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });

    it('serves a CRD change at once, and deleting a CRD deletes its custom resources', async () => {
      const crd = (columns: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sofas.furniture.example.com
spec:
  group: furniture.example.com
  scope: Namespaced
  names: {plural: sofas, singular: sofa, kind: Sofa}
  versions:
    - name: v1
      served: true
      storage: true
      additionalPrinterColumns:
${columns}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                seats: {type: integer}
                fabric: {type: string}
`;
      const crdPath = await manifest(crd('        - {name: Seats, type: integer, jsonPath: .spec.seats}'));
      await ok('apply', '-f', crdPath);
      const ns = await createNamespace('lounge');
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: furniture.example.com/v1
kind: Sofa
metadata: {name: chesterfield, namespace: ${ns}}
spec: {seats: 3, fabric: leather}
`),
      );
      assert.deepEqual(tableRows(await ok('get', 'sofas', '-n', ns))[0], ['NAME', 'SEATS']);

      await writeFile(
        crdPath,
        crd(
          '        - {name: Seats, type: integer, jsonPath: .spec.seats}\n        - {name: Fabric, type: string, jsonPath: .spec.fabric}',
        ),
      );
      assert.match(await ok('apply', '-f', crdPath), /configured/);
      await eventually(
        async () => {
          const rows = tableRows(await ok('get', 'sofas', '-n', ns));
          return rows[0].join(' ') === 'NAME SEATS FABRIC' && rows[1]?.[2] === 'leather';
        },
        'the new printer column',
        10_000,
        100,
      );

      assert.match(
        await ok('delete', 'crd', 'sofas.furniture.example.com'),
        /customresourcedefinition.apiextensions.k8s.io "sofas.furniture.example.com" deleted/,
      );
      const gone = await kubectl('get', 'sofas.furniture.example.com', '-n', ns);
      assert.notEqual(gone.code, 0);
      assert.match(gone.stderr, /the server doesn't have a resource type "sofas/);
      const raw = await t.fetch('GET', `/apis/furniture.example.com/v1/namespaces/${ns}/sofas`);
      assert.equal(raw.status, 404);

      // Recreated, the CRD starts empty: its custom resources went with it.
      await ok('apply', '-f', crdPath);
      await eventually(
        async () => {
          const r = await kubectl('get', 'sofas', '-n', ns, '-o', 'name');
          return r.code === 0 && r.stdout.trim() === '';
        },
        'the recreated resource to be served',
        10_000,
        100,
      );
      await ok('delete', 'crd', 'sofas.furniture.example.com');
    });

    it('refuses a strategic merge patch on a custom resource, naming the patch types it accepts', async () => {
      await applyCrd();
      const ns = await createNamespace('porch');
      await ok('apply', '-f', await manifest(lampYaml(ns, 'porch-light', '  color: amber')));
      const r = await kubectl('patch', 'lamp', 'porch-light', '-n', ns, '-p', '{"spec":{"watts":7}}');
      assert.notEqual(r.code, 0);
      const accepted = /accepted media types include: (.*?); got|accepted media types include: (.*)$/m.exec(
        r.stderr,
      );
      assert.ok(accepted, r.stderr);
      const types = (accepted[1] ?? accepted[2]).split(', ');
      assert.ok(types.includes('application/merge-patch+json'), r.stderr);
      assert.ok(types.includes('application/json-patch+json'), r.stderr);
      assert.ok(
        !types.includes('application/strategic-merge-patch+json'),
        `custom resources do not take strategic merge patches, so it must not be listed as accepted: ${r.stderr}`,
      );
    });

    it('fails to apply an invalid custom resource with the field path in stderr', async () => {
      await applyCrd();
      const ns = await createNamespace('garage');
      const tooBright = await kubectl(
        'apply',
        '-f',
        await manifest(lampYaml(ns, 'flood-light', '  color: white\n  watts: 5000')),
      );
      assert.notEqual(tooBright.code, 0);
      assert.match(tooBright.stderr, /spec\.watts/);
      assert.match(tooBright.stderr, /is invalid/);

      const badColor = await kubectl(
        'apply',
        '-f',
        await manifest(lampYaml(ns, 'disco-ball', '  color: rainbow')),
      );
      assert.notEqual(badColor.code, 0);
      assert.match(badColor.stderr, /spec\.color/);
      assert.match(badColor.stderr, /supported values: "amber", "white", "red"/);

      const unknown = await kubectl(
        'apply',
        '-f',
        await manifest(lampYaml(ns, 'smart-bulb', '  color: red\n  brightness: 80')),
      );
      assert.notEqual(unknown.code, 0, 'fields not in the schema are rejected under strict field validation');
      assert.match(unknown.stderr, /unknown field "spec\.brightness"/);

      assert.equal(await exists('lamp', 'flood-light', ns), false);
      assert.equal(await exists('lamp', 'disco-ball', ns), false);
      assert.equal(await exists('lamp', 'smart-bulb', ns), false);
    });

    it('lists secrets and the custom resource in api-resources', async () => {
      await applyCrd();
      const rows = tableRows(await ok('api-resources'));
      assert.deepEqual(rows[0], ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
      const byName = new Map(rows.slice(1).map((r) => [`${r[0]} ${r[2]}`, r]));
      assert.deepEqual(byName.get('secrets v1'), ['secrets', '', 'v1', 'true', 'Secret']);
      assert.deepEqual(byName.get('configmaps v1'), ['configmaps', 'cm', 'v1', 'true', 'ConfigMap']);
      assert.deepEqual(byName.get('namespaces v1'), ['namespaces', 'ns', 'v1', 'false', 'Namespace']);
      assert.deepEqual(byName.get('leases coordination.k8s.io/v1'), [
        'leases',
        '',
        'coordination.k8s.io/v1',
        'true',
        'Lease',
      ]);
      assert.deepEqual(byName.get('lamps furniture.example.com/v1'), [
        'lamps',
        'lp',
        'furniture.example.com/v1',
        'true',
        'Lamp',
      ]);
      assert.deepEqual(byName.get('customresourcedefinitions apiextensions.k8s.io/v1'), [
        'customresourcedefinitions',
        'crd,crds',
        'apiextensions.k8s.io/v1',
        'false',
        'CustomResourceDefinition',
      ]);
      const namespaced = await ok('api-resources', '--namespaced=false', '-o', 'name');
      assert.match(namespaced, /^namespaces$/m);
      assert.doesNotMatch(namespaced, /^secrets$/m);
    });
  });

  describe('deletion and garbage collection', () => {
    it('deletes a dependent in the background after its owner is deleted', async () => {
      const ns = await createNamespace('gc-background');
      await ownerAndDependent(ns);
      assert.equal((await ok('delete', 'configmap', 'owner', '-n', ns)).trim(), 'configmap "owner" deleted');
      assert.equal(await exists('configmap', 'owner', ns), false);
      await eventually(
        async () => !(await exists('secret', 'owned-credentials', ns)),
        'the dependent Secret to be collected',
        10_000,
        100,
      );
    });

    it('keeps the dependent and strips its ownerReference with --cascade=orphan', async () => {
      const ns = await createNamespace('gc-orphan');
      await ownerAndDependent(ns);
      const out = await ok('delete', 'configmap', 'owner', '-n', ns, '--cascade=orphan');
      assert.equal(out.trim(), 'configmap "owner" deleted');
      assert.equal(await exists('configmap', 'owner', ns), false, 'kubectl waited for the owner to go');
      await sleep(1000);
      const secret = await getJson('secret', 'owned-credentials', '-n', ns);
      assert.equal(secret.metadata.ownerReferences, undefined);
      assert.equal(secret.metadata.deletionTimestamp, undefined);
      assert.equal(unb64(secret.data.token), 'abc123');
    });

    it('removes the dependent before the owner with --cascade=foreground', async () => {
      const ns = await createNamespace('gc-foreground');
      await ownerAndDependent(ns, true);
      const started = Date.now();
      const out = await ok('delete', 'configmap', 'owner', '-n', ns, '--cascade=foreground');
      assert.equal(out.trim(), 'configmap "owner" deleted');
      assert.ok(Date.now() - started < 15_000);
      assert.equal(await exists('configmap', 'owner', ns), false);
      assert.equal(
        await exists('secret', 'owned-credentials', ns),
        false,
        'the blocking dependent went first',
      );
    });
  });

  describe('garbage collection, harder cases', () => {
    it('keeps a foreground-deleting owner until a blocking dependent with a finalizer is gone', async () => {
      const ns = await createNamespace('gc-foreground-blocked');
      const uid = await ownerAndDependent(ns, true);
      await ok(
        'patch',
        'secret',
        'owned-credentials',
        '-n',
        ns,
        '-p',
        '{"metadata":{"finalizers":["example.com/audit"]}}',
      );
      await ok('delete', 'configmap', 'owner', '-n', ns, '--cascade=foreground', '--wait=false');
      await eventually(
        async () => {
          const secret = await getJson('secret', 'owned-credentials', '-n', ns);
          return secret.metadata.deletionTimestamp !== undefined;
        },
        'the dependent to be deleting',
        10_000,
        100,
      );
      await sleep(500);
      const owner = await getJson('configmap', 'owner', '-n', ns);
      assert.equal(owner.metadata.uid, uid);
      assert.ok(owner.metadata.deletionTimestamp, 'the owner is deleting');
      assert.deepEqual(owner.metadata.finalizers, ['foregroundDeletion']);

      await ok(
        'patch',
        'secret',
        'owned-credentials',
        '-n',
        ns,
        '--type',
        'merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      );
      await eventually(
        async () => !(await exists('configmap', 'owner', ns)),
        'the owner to go once the blocking dependent went',
        10_000,
        100,
      );
      assert.equal(await exists('secret', 'owned-credentials', ns), false);
    });

    it('collects a dependent whose owner does not exist, or exists with another uid', async () => {
      const ns = await createNamespace('gc-dangling');
      await ok('create', 'configmap', 'recreated-owner', '-n', ns);
      const dependent = (name: string, owner: string, uid: string) => `apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: ${ns}
  ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: ${owner}, uid: ${uid}}
stringData: {k: v}
`;
      await ok(
        'apply',
        '-f',
        await manifest(
          dependent('orphaned-by-missing', 'never-existed', '0b6a3c52-5a1b-4d47-9a0e-2d1f0c7e6a11'),
        ),
      );
      await ok(
        'apply',
        '-f',
        await manifest(
          dependent('orphaned-by-uid', 'recreated-owner', '6f1c2e0a-7c3d-4b8e-8f21-93d5a4b0c7de'),
        ),
      );
      await ok('create', 'secret', 'generic', 'unowned', '-n', ns, '--from-literal=k=v');
      await eventually(
        async () => {
          const names = (await ok('get', 'secrets', '-n', ns, '-o', 'name')).trim();
          return names === 'secret/unowned';
        },
        'both dangling dependents to be collected',
        10_000,
        100,
      );
    });

    it('collects a custom resource owned by a ConfigMap, and a ConfigMap owned by a custom resource', async () => {
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shelves.furniture.example.com}
spec:
  group: furniture.example.com
  scope: Namespaced
  names: {plural: shelves, singular: shelf, kind: Shelf}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`),
      );
      const ns = await createNamespace('gc-custom');
      await ok('create', 'configmap', 'catalogue', '-n', ns);
      const cmUid = (
        await ok('get', 'configmap', 'catalogue', '-n', ns, '-o', 'jsonpath={.metadata.uid}')
      ).trim();
      await eventually(
        async () => (await kubectl('get', 'shelves', '-n', ns)).code === 0,
        'the Shelf resource to be served',
        10_000,
        100,
      );
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: furniture.example.com/v1
kind: Shelf
metadata:
  name: bookshelf
  namespace: ${ns}
  ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: catalogue, uid: ${cmUid}}
spec: {boards: 5}
---
apiVersion: furniture.example.com/v1
kind: Shelf
metadata: {name: wall-shelf, namespace: ${ns}}
spec: {boards: 2}
`),
      );
      const shelfUid = (
        await ok('get', 'shelf', 'wall-shelf', '-n', ns, '-o', 'jsonpath={.metadata.uid}')
      ).trim();
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: v1
kind: ConfigMap
metadata:
  name: wall-shelf-layout
  namespace: ${ns}
  ownerReferences:
    - {apiVersion: furniture.example.com/v1, kind: Shelf, name: wall-shelf, uid: ${shelfUid}}
data: {rows: "2"}
`),
      );
      await ok('delete', 'configmap', 'catalogue', '-n', ns);
      await ok('delete', 'shelf', 'wall-shelf', '-n', ns);
      await eventually(
        async () => !(await exists('shelf', 'bookshelf', ns)),
        'the custom dependent to be collected',
        10_000,
        100,
      );
      await eventually(
        async () => !(await exists('configmap', 'wall-shelf-layout', ns)),
        'the dependent of the custom owner to be collected',
        10_000,
        100,
      );
    });
  });

  describe('watch', () => {
    it('kubectl get secrets -w prints a change made after it starts', async () => {
      const ns = await createNamespace('watch-tls');
      await ok('create', 'secret', 'generic', 'existing-cert', '-n', ns, '--from-literal=tls.crt=old');
      const child = spawn(kubectlPath!, ['get', 'secrets', '-n', ns, '-w'], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      try {
        await eventually(async () => stdout.includes('existing-cert'), 'the initial list', 10_000, 100).catch(
          (err) => {
            throw new Error(`${(err as Error).message}; stdout=${stdout} stderr=${stderr}`);
          },
        );
        // Let the watch request start after the list.
        await sleep(500);
        assert.doesNotMatch(stdout, /rotated-cert/);
        await ok('create', 'secret', 'generic', 'rotated-cert', '-n', ns, '--from-literal=tls.crt=new');
        await eventually(
          async () => stdout.includes('rotated-cert'),
          'the new Secret in the watch output',
          10_000,
          100,
        ).catch((err) => {
          throw new Error(`${(err as Error).message}; stdout=${stdout} stderr=${stderr}`);
        });
        const lines = stdout.trim().split('\n');
        assert.match(lines[lines.length - 1], /^rotated-cert\s+Opaque\s+1\s+/);
        assert.equal(child.exitCode, null, `kubectl get -w is still running; stderr=${stderr}`);
      } finally {
        clearTimeout(timer);
        child.kill('SIGTERM');
        await exited;
      }
    });
  });

  describe('watch events', () => {
    it('kubectl get -w --output-watch-events prints ADDED, MODIFIED and DELETED', async () => {
      const ns = await createNamespace('watch-events');
      const child = spawn(kubectlPath!, ['get', 'configmaps', '-n', ns, '-w', '--output-watch-events'], {
        env,
      });
      let stdout = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      let stderr = '';
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      try {
        // An empty namespace prints nothing until the first event; give the watch time to start.
        await sleep(1500);
        await ok('create', 'configmap', 'cdn-origins', '-n', ns, '--from-literal=primary=a.example.com');
        await ok(
          'patch',
          'configmap',
          'cdn-origins',
          '-n',
          ns,
          '-p',
          '{"data":{"secondary":"b.example.com"}}',
        );
        await ok('delete', 'configmap', 'cdn-origins', '-n', ns);
        await eventually(
          async () => /DELETED\s+cdn-origins/.test(stdout),
          'the DELETED event',
          10_000,
          100,
        ).catch((err) => {
          throw new Error(`${(err as Error).message}; stdout=${stdout} stderr=${stderr}`);
        });
        const rows = tableRows(stdout);
        assert.deepEqual(rows[0], ['EVENT', 'NAME', 'DATA', 'AGE']);
        assert.deepEqual(
          rows.slice(1).map((r) => r.slice(0, 3)),
          [
            ['ADDED', 'cdn-origins', '1'],
            ['MODIFIED', 'cdn-origins', '2'],
            ['DELETED', 'cdn-origins', '2'],
          ],
        );
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  });

  describe('namespaces', () => {
    it('kubectl get ns shows the default namespaces', async () => {
      const rows = tableRows(await ok('get', 'ns'));
      assert.deepEqual(rows[0], ['NAME', 'STATUS', 'AGE']);
      const status = new Map(rows.slice(1).map((r) => [r[0], r[1]]));
      for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
        assert.equal(status.get(name), 'Active', `namespace ${name}`);
      }
    });

    it('kubectl delete namespace removes the namespace and its Secrets', async () => {
      const ns = await createNamespace('tenant-acme');
      await ok('create', 'secret', 'generic', 'acme-api-token', '-n', ns, '--from-literal=token=t0k3n');
      await ok(
        'create',
        'secret',
        'docker-registry',
        'acme-registry',
        '-n',
        ns,
        '--docker-server=registry.example.com',
        '--docker-username=acme',
        '--docker-password=pull-only',
      );
      await ok('create', 'configmap', 'acme-settings', '-n', ns, '--from-literal=plan=gold');
      await ok('apply', '-f', await manifest(minimalCrd('quotas', 'Namespaced')));
      await eventually(
        async () => (await kubectl('get', 'quotas', '-n', ns)).code === 0,
        'the Quota resource to be served',
        10_000,
        100,
      );
      await ok(
        'apply',
        '-f',
        await manifest(`apiVersion: meters.example.com/v1
kind: Quota
metadata: {name: acme-api-calls, namespace: ${ns}}
spec: {limit: 10000}
`),
      );
      assert.equal((await ok('get', 'secrets', '-n', ns, '-o', 'name')).trim().split('\n').length, 2);

      assert.equal((await ok('delete', 'namespace', ns)).trim(), `namespace "${ns}" deleted`);
      const get = await kubectl('get', 'namespace', ns);
      assert.notEqual(get.code, 0);
      assert.match(get.stderr, new RegExp(`namespaces "${ns}" not found`));
      const secrets = await t.fetch('GET', `/api/v1/namespaces/${ns}/secrets`);
      assert.equal(secrets.status, 200);
      assert.deepEqual(secrets.json.items, []);
      const configMaps = await t.fetch('GET', `/api/v1/namespaces/${ns}/configmaps`);
      assert.deepEqual(configMaps.json.items, []);
      const quotas = await t.fetch('GET', `/apis/meters.example.com/v1/namespaces/${ns}/quotas`);
      assert.deepEqual(quotas.json.items, [], 'custom resources in the namespace went too');
    });
  });
});
