import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { customResourceDefinitions, leases, namespaces, secrets } from './builtins.ts';
import { isNoKindMatch, NoKindMatchError } from './discovery.ts';
import { KubeClient } from './kube-client.ts';
import { loadKubeconfig } from './kubeconfig.ts';
import type { RequestInfo } from './transport.ts';

/** Kind → resource mapping from discovery, including CRDs that appear later. */

let t: TestServer;
let kube: KubeClient;
const requests: RequestInfo[] = [];

before(async () => {
  t = await startTestServer();
  kube = new KubeClient({
    ...(await loadKubeconfig({ path: t.kubeconfigPath })),
    qps: -1,
    onRequest: (info) => requests.push(info),
  });
});
after(async () => {
  kube.close();
  await t.close();
});

const gadgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('RestMapper', () => {
  it('maps built-in kinds to the same refs as builtins.ts', async () => {
    assert.deepEqual(await kube.mapper.map('v1', 'Secret'), secrets);
    assert.deepEqual(await kube.mapper.map('v1', 'Namespace'), namespaces);
    assert.deepEqual(await kube.mapper.map('coordination.k8s.io/v1', 'Lease'), leases);
    assert.deepEqual(
      await kube.mapper.map('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
      customResourceDefinitions,
    );
    assert.deepEqual(await kube.mapper.mapGroupKind('coordination.k8s.io', 'Lease'), leases);
  });

  it('answers from its cache', async () => {
    await kube.mapper.map('v1', 'ConfigMap');
    const before = requests.length;
    await kube.mapper.map('v1', 'ConfigMap');
    await kube.mapper.map('v1', 'Secret');
    assert.equal(requests.length, before);
  });

  it("says no matches for kind, like client-go's NoKindMatchError", async () => {
    const err = await kube.mapper.map('example.com/v1', 'Gadget').catch((e: unknown) => e);
    assert.ok(isNoKindMatch(err));
    assert.ok(err instanceof NoKindMatchError);
    assert.equal(err.message, 'no matches for kind "Gadget" in version "example.com/v1"');
    await assert.rejects(kube.mapper.map('v1', 'Gizmo'), {
      message: 'no matches for kind "Gizmo" in version "v1"',
    });
    await assert.rejects(kube.forKind('v1', 'Gizmo'), isNoKindMatch);
    await assert.rejects(kube.mapper.mapGroupKind('nowhere.io', 'Thing'), {
      message: 'no matches for kind "Thing" in group "nowhere.io"',
    });
    assert.equal(isNoKindMatch(new Error('no matches for kind')), false);
  });

  it('finds a CRD created after the first lookup, and serves it through forKind', async () => {
    await assert.rejects(kube.forKind('example.com/v1', 'Gadget'), isNoKindMatch);
    await kube.resource(customResourceDefinitions).create(undefined, gadgetCrd);
    const gadgets = await kube.forKind('example.com/v1', 'Gadget');
    assert.deepEqual(gadgets.ref, {
      group: 'example.com',
      version: 'v1',
      resource: 'gadgets',
      kind: 'Gadget',
      namespaced: true,
    });
    const created = await gadgets.create('default', {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g1' },
      spec: { size: 1 },
    });
    assert.equal(created.metadata?.namespace, 'default');
    const status = await gadgets.update({ ...created, status: { ready: true } }, { subresource: 'status' });
    assert.deepEqual(status.status, { ready: true });
    assert.deepEqual(await kube.mapper.mapGroupKind('example.com', 'Gadget'), gadgets.ref);
  });

  it('reports discovery requests to onRequest', () => {
    assert.ok(requests.some((r) => r.verb === 'get' && r.resource === '' && r.code === 200));
    assert.ok(requests.every((r) => r.code === 200 || r.code === 201));
  });
});
