import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { tableRecords } from '@certkit/testenv/kubectl/table';

/**
 * Discovery as kubectl 1.30+ reads it (aggregated, `apidiscovery.k8s.io/v2`, with the legacy documents still
 * served to clients that do not ask for it), and the cluster-wide commands that rest on it: `kubectl
 * api-resources`, `kubectl get all` and `kubectl cluster-info`, answered as on a cluster with these kinds.
 */

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** What client-go 1.32 sends for /api and /apis. */
const CLIENT_GO_ACCEPT = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

let t: TestServer;
let workDir: string;
let kubectl: Kubectl;

before(async () => {
  t = await startTestServer();
  workDir = await mkdtemp(join(tmpdir(), 'certkit-discovery-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
});
after(async () => {
  await t?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface DiscoveryResource {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: string;
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: {
    subresource: string;
    responseKind: { group: string; version: string; kind: string };
    verbs: string[];
  }[];
}

function findResource(doc: any, group: string, resource: string): DiscoveryResource | undefined {
  const item = doc.items.find((i: { metadata: { name?: string } }) => (i.metadata.name ?? '') === group);
  return item?.versions[0].resources.find((r: DiscoveryResource) => r.resource === resource);
}

describe('aggregated discovery', () => {
  it('answers /api and /apis with APIGroupDiscoveryList when the Accept header asks for it', async () => {
    const core = await t.fetch('GET', '/api', { headers: { Accept: CLIENT_GO_ACCEPT } });
    assert.equal(core.status, 200);
    assert.equal(core.headers['content-type'], AGGREGATED);
    assert.equal(core.headers.vary, 'Accept');
    assert.equal(core.json.kind, 'APIGroupDiscoveryList');
    assert.equal(core.json.apiVersion, 'apidiscovery.k8s.io/v2');
    assert.equal(core.json.items.length, 1);
    assert.equal(core.json.items[0].versions[0].version, 'v1');
    assert.equal(core.json.items[0].versions[0].freshness, 'Current');
    assert.deepEqual(findResource(core.json, '', 'services'), {
      resource: 'services',
      responseKind: { group: '', version: 'v1', kind: 'Service' },
      scope: 'Namespaced',
      singularResource: 'service',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['svc'],
      categories: ['all'],
      subresources: [
        {
          subresource: 'status',
          responseKind: { group: '', version: 'v1', kind: 'Service' },
          verbs: ['get', 'patch', 'update'],
        },
      ],
    });

    const apis = await t.fetch('GET', '/apis', { headers: { Accept: CLIENT_GO_ACCEPT } });
    assert.equal(apis.headers['content-type'], AGGREGATED);
    const deployments = findResource(apis.json, 'apps', 'deployments')!;
    assert.deepEqual(
      deployments.subresources!.map((s) => [s.subresource, s.responseKind]),
      [
        ['scale', { group: 'autoscaling', version: 'v1', kind: 'Scale' }],
        ['status', { group: 'apps', version: 'v1', kind: 'Deployment' }],
      ],
    );
    const csrs = findResource(apis.json, 'certificates.k8s.io', 'certificatesigningrequests')!;
    assert.equal(csrs.scope, 'Cluster');
    assert.deepEqual(
      csrs.subresources!.map((s) => s.subresource),
      ['approval', 'status'],
    );

    // The ETag names the document: sent back, the answer is 304 with no body.
    const again = await t.fetch('GET', '/apis', {
      headers: { Accept: CLIENT_GO_ACCEPT, 'If-None-Match': String(apis.headers.etag) },
    });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');

    // v2beta1 for clients that ask for it alone; legacy for those that ask for plain JSON.
    const beta = await t.fetch('GET', '/apis', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' },
    });
    assert.equal(beta.json.apiVersion, 'apidiscovery.k8s.io/v2beta1');
    const legacy = await t.fetch('GET', '/apis', { headers: { Accept: 'application/json' } });
    assert.equal(legacy.headers['content-type'], 'application/json');
    assert.equal(legacy.json.kind, 'APIGroupList');
    const legacyCore = await t.fetch('GET', '/api/v1');
    assert.ok(
      legacyCore.json.resources.some(
        (r: { name: string; kind: string }) => r.name === 'services/status' && r.kind === 'Service',
      ),
    );
  });

  it('follows the CRDs served: a new CRD changes the ETag and appears in /apis', async () => {
    const before = await t.fetch('GET', '/apis', { headers: { Accept: CLIENT_GO_ACCEPT } });
    await kubectl.ok(
      'apply',
      '-f',
      await kubectl.manifest(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    subresources: {status: {}}
`),
    );
    const after = await eventually(async () => {
      const r = await t.fetch('GET', '/apis', { headers: { Accept: CLIENT_GO_ACCEPT } });
      return findResource(r.json, 'example.com', 'widgets') ? r : undefined;
    }, 'the CRD in aggregated discovery');
    assert.notEqual(after.headers.etag, before.headers.etag);
    assert.deepEqual(findResource(after.json, 'example.com', 'widgets')!.shortNames, ['wd']);
  });

  it('is what kubectl reads: api-resources fetches /api and /apis and no group version', async () => {
    const r = await kubectl.run('api-resources', '-v=6');
    assert.equal(r.code, 0, r.stderr);
    const urls = [...r.stderr.matchAll(/"GET (https:\/\/[^"\s]+)/g)].map((m) => new URL(m[1]).pathname);
    const fallback = [...r.stderr.matchAll(/GET https:\/\/\S+?(\/\S*) 200/g)].map((m) => m[1].split('?')[0]);
    const fetched = urls.length > 0 ? urls : fallback;
    assert.ok(fetched.includes('/api') && fetched.includes('/apis'), r.stderr);
    assert.deepEqual(
      fetched.filter((p) => p.startsWith('/api/') || p.startsWith('/apis/')),
      [],
      `kubectl fell back to legacy discovery: ${fetched.join(' ')}`,
    );
  });
});

describe('kubectl api-resources, get all and cluster-info', { skip: kubectlSkip }, () => {
  it('lists the built-in kinds with their names, short names, versions, scope and kinds', async () => {
    const rows = tableRecords(await kubectl.ok('api-resources'));
    const byName = new Map(rows.map((r) => [`${r.NAME}.${r.APIVERSION}`, r]));
    const expected: [string, string, string, string, string][] = [
      ['pods', 'po', 'v1', 'true', 'Pod'],
      ['services', 'svc', 'v1', 'true', 'Service'],
      ['endpoints', 'ep', 'v1', 'true', 'Endpoints'],
      ['endpointslices', '', 'discovery.k8s.io/v1', 'true', 'EndpointSlice'],
      ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment'],
      ['ingresses', 'ing', 'networking.k8s.io/v1', 'true', 'Ingress'],
      ['ingressclasses', '', 'networking.k8s.io/v1', 'false', 'IngressClass'],
      ['certificatesigningrequests', 'csr', 'certificates.k8s.io/v1', 'false', 'CertificateSigningRequest'],
      ['apiservices', '', 'apiregistration.k8s.io/v1', 'false', 'APIService'],
    ];
    for (const [name, short, version, namespaced, kind] of expected) {
      const row = byName.get(`${name}.${version}`);
      assert.ok(row, `api-resources lacks ${name}`);
      assert.deepEqual([row.SHORTNAMES, row.NAMESPACED, row.KIND], [short, namespaced, kind], name);
    }
    const all = (await kubectl.ok('api-resources', '--categories=all', '-o', 'name')).trim().split('\n');
    assert.deepEqual(all.sort(), ['deployments.apps', 'pods', 'services', 'widgets.example.com']);
  });

  it('kubectl get all shows the kubernetes Service, and a namespace’s Pods, Services and Deployments', async () => {
    const defaults = tableRecords(await kubectl.ok('get', 'all', '-n', 'default'));
    const kubernetes = defaults.find((r) => r.NAME === 'service/kubernetes');
    assert.ok(kubernetes, JSON.stringify(defaults));
    assert.deepEqual(
      [kubernetes.TYPE, kubernetes['CLUSTER-IP'], kubernetes['PORT(S)']],
      ['ClusterIP', '10.0.0.1', '443/TCP'],
    );
    const endpoints = JSON.parse(
      await kubectl.ok('get', 'endpoints', 'kubernetes', '-n', 'default', '-o', 'json'),
    );
    assert.deepEqual(endpoints.subsets, [
      { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: t.server.port, protocol: 'TCP' }] },
    ]);

    await kubectl.ok('create', 'namespace', 'shop');
    await kubectl.ok('run', 'web-0', '-n', 'shop', '--image=nginx:1.27');
    await kubectl.ok('create', 'service', 'clusterip', 'web', '-n', 'shop', '--tcp=80:8080');
    await kubectl.ok(
      'apply',
      '-f',
      await kubectl.manifest(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27"}]}
`),
    );
    const out = await kubectl.ok('get', 'all', '-n', 'shop');
    const names = out
      .split('\n')
      .filter((l) => /^\S+\/\S+\s/.test(l))
      .map((l) => l.split(/\s+/)[0]);
    assert.deepEqual(names, ['pod/web-0', 'service/web', 'deployment.apps/web']);
  });

  it('kubectl cluster-info names the control plane', async () => {
    const out = await kubectl.ok('cluster-info');
    assert.match(
      out,
      new RegExp(`Kubernetes control plane.* is running at .*${t.url.replace(/[.]/g, '\\.')}`),
    );
  });
});
