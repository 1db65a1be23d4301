import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/** The controllers beside the API server: garbage collection, namespace lifecycle, CRD serving and cleanup. */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t.close();
});

const gone = (path: string) => async () => (await t.fetch('GET', path)).status === 404;

async function ownerAndDependent(ns: string, suffix: string, block = false) {
  await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  const owner = (
    await t.fetch('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: `owner-${suffix}` } },
    })
  ).json;
  const ref = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    blockOwnerDeletion: block,
  };
  const dep = await t.fetch('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name: `dep-${suffix}`, ownerReferences: [ref] }, stringData: { a: 'b' } },
  });
  assert.equal(dep.status, 201, dep.text);
  return {
    owner,
    ownerPath: `/api/v1/namespaces/${ns}/configmaps/owner-${suffix}`,
    depPath: `/api/v1/namespaces/${ns}/secrets/dep-${suffix}`,
  };
}

describe('garbage collector', () => {
  it('deletes a dependent in the background once its owner is gone', async () => {
    const { ownerPath, depPath } = await ownerAndDependent('gc-bg', 'bg');
    await t.fetch('DELETE', ownerPath);
    await eventually(gone(depPath), 'the dependent to be collected');
  });

  it('deletes dependents first under foreground deletion, then the owner', async () => {
    const { ownerPath, depPath } = await ownerAndDependent('gc-fg', 'fg', true);
    const res = await t.fetch('DELETE', ownerPath, { body: { propagationPolicy: 'Foreground' } });
    assert.equal(res.status, 200);
    assert.ok(res.json.metadata.finalizers.includes('foregroundDeletion'));
    assert.ok(res.json.metadata.deletionTimestamp);
    await eventually(gone(depPath), 'the dependent to be deleted');
    await eventually(gone(ownerPath), 'the owner to go after its dependents');
  });

  it('foreground deletion through an owner reference cycle, or of an object owning itself, completes', async () => {
    const ns = 'gc-cycle';
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
    const path = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const create = async (name: string) =>
      (await t.fetch('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name } } })).json;
    const ownedBy = async (name: string, owner: { metadata: { name: string; uid: string } }) => {
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid };
      const res = await t.fetch('PATCH', path(name), {
        headers: { 'Content-Type': 'application/merge-patch+json' },
        body: { metadata: { ownerReferences: [{ ...ref, blockOwnerDeletion: true }] } },
      });
      assert.equal(res.status, 200, res.text);
    };
    const [a, b, self] = [await create('a'), await create('b'), await create('self')];
    await ownedBy('a', b);
    await ownedBy('b', a);
    await ownedBy('self', self);
    for (const name of ['a', 'self']) {
      const res = await t.fetch('DELETE', path(name), { body: { propagationPolicy: 'Foreground' } });
      assert.equal(res.status, 200, res.text);
    }
    // Each waited for the other (or for itself) for ever: the cycle is broken as kube's collector breaks it.
    for (const name of ['a', 'b', 'self']) await eventually(gone(path(name)), `${name} to be deleted`);
  });

  it('orphans dependents: removes the owner reference and keeps them', async () => {
    const { ownerPath, depPath } = await ownerAndDependent('gc-orphan', 'or');
    await t.fetch('DELETE', ownerPath, { body: { propagationPolicy: 'Orphan' } });
    await eventually(gone(ownerPath), 'the owner to be deleted');
    const dep = await t.fetch('GET', depPath);
    assert.equal(dep.status, 200);
    assert.equal(dep.json.metadata.ownerReferences, undefined);
  });

  it('collects a dependent whose owner never existed', async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'gc-dangling' } } });
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'ghost',
      uid: '00000000-0000-0000-0000-000000000000',
    };
    await t.fetch('POST', '/api/v1/namespaces/gc-dangling/secrets', {
      body: { metadata: { name: 'orphaned', ownerReferences: [ref] } },
    });
    await eventually(
      gone('/api/v1/namespaces/gc-dangling/secrets/orphaned'),
      'the dangling dependent to be collected',
    );
  });

  it('keeps a dependent through updates while its owner lives', async () => {
    const { depPath } = await ownerAndDependent('gc-live', 'live');
    const dep = (await t.fetch('GET', depPath)).json;
    const updated = await t.fetch('PUT', depPath, { body: { ...dep, data: { a: 'Yw==' } } });
    assert.equal(updated.status, 200, updated.text);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await t.fetch('GET', depPath)).status, 200);
  });

  it('collects a dependent whose owner of that name has another uid', async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'gc-uid' } } });
    await t.fetch('POST', '/api/v1/namespaces/gc-uid/configmaps', { body: { metadata: { name: 'other' } } });
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'other',
      uid: '00000000-0000-0000-0000-000000000001',
    };
    await t.fetch('POST', '/api/v1/namespaces/gc-uid/secrets', {
      body: { metadata: { name: 'mistaken', ownerReferences: [ref] } },
    });
    await eventually(gone('/api/v1/namespaces/gc-uid/secrets/mistaken'), 'the dependent to be collected');
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/gc-uid/configmaps/other')).status, 200);
  });

  it('collects dependents whose owner was deleted while the server was down', async () => {
    const { owner, depPath } = await ownerAndDependent('gc-restart', 'rs');
    // Delete the owner straight from storage, as if another server deleted it while this one was down.
    await t.server.storage.delete(`/registry/core/configmaps/gc-restart/${owner.metadata.name}`);
    await t.restart();
    await eventually(gone(depPath), 'the dependent to be collected after restart');
  });
});

describe('namespaces', () => {
  it('terminates a namespace by deleting its contents first', async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } });
    await t.fetch('POST', '/api/v1/namespaces/doomed/secrets', { body: { metadata: { name: 's' } } });
    const res = await t.fetch('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(res.json.status.phase, 'Terminating');
    const blocked = await t.fetch('POST', '/api/v1/namespaces/doomed/configmaps', {
      body: { metadata: { name: 'late' } },
    });
    if (blocked.status !== 404) assert.equal(blocked.status, 403);
    await eventually(gone('/api/v1/namespaces/doomed/secrets/s'), 'the namespace contents to be deleted');
    await eventually(gone('/api/v1/namespaces/doomed'), 'the namespace to be deleted');
  });

  it('has the default namespaces', async () => {
    const res = await t.fetch('GET', '/api/v1/namespaces');
    const names = res.json.items.map((n: { metadata: { name: string } }) => n.metadata.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      assert.ok(names.includes(n), n);
  });
});

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['color'],
                properties: {
                  color: { type: 'string', enum: ['red', 'blue'] },
                  size: { type: 'integer', default: 3, maximum: 10 },
                },
              },
              status: {
                type: 'object',
                properties: {
                  conditions: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: { type: { type: 'string' }, status: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe('custom resources', () => {
  before(async () => {
    const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: widgetCrd,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(
      res.json.status.conditions.find((c: { type: string }) => c.type === 'Established').status,
      'True',
    );
  });

  it('serves a CRD at once, with discovery', async () => {
    const res = await t.fetch('POST', '/apis/example.com/v1/namespaces/default/widgets', {
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { color: 'red', extra: 'pruned' },
      },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.spec.size, 3, 'schema default applied');
    assert.equal(res.json.spec.extra, undefined, 'unknown field pruned');
    assert.equal(res.json.metadata.generation, 1);
    const discovery = await t.fetch('GET', '/apis/example.com/v1');
    assert.deepEqual(
      discovery.json.resources.map((r: { name: string }) => r.name),
      ['widgets', 'widgets/status'],
    );
    assert.deepEqual(discovery.json.resources[0].shortNames, ['wd']);
  });

  it('refuses fields the schema does not know under fieldValidation=Strict, and warns by default', async () => {
    const body = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'strict' },
      spec: { color: 'red', extra: 1 },
    };
    const strict = await t.fetch(
      'POST',
      '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict',
      { body },
    );
    assert.equal(strict.status, 400);
    assert.match(strict.json.message, /unknown field "spec.extra"/);
    const warned = await t.fetch('POST', '/apis/example.com/v1/namespaces/default/widgets', { body });
    assert.equal(warned.status, 201);
    assert.match(String(warned.headers.warning), /unknown field \\"spec.extra\\"/);
  });

  it('refuses objects that violate the schema with 422 and the field path', async () => {
    const res = await t.fetch('POST', '/apis/example.com/v1/namespaces/default/widgets', {
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'bad' },
        spec: { color: 'green', size: 11 },
      },
    });
    assert.equal(res.status, 422);
    const fields = res.json.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('spec.color'), res.text);
    assert.ok(fields.includes('spec.size'), res.text);
  });

  it('requires a resourceVersion to update a custom resource, and separates status from spec', async () => {
    const w = (await t.fetch('GET', '/apis/example.com/v1/namespaces/default/widgets/w1')).json;
    const noRv = await t.fetch('PUT', '/apis/example.com/v1/namespaces/default/widgets/w1', {
      body: { ...w, metadata: { ...w.metadata, resourceVersion: undefined } },
    });
    assert.equal(noRv.status, 422);
    const status = await t.fetch('PUT', '/apis/example.com/v1/namespaces/default/widgets/w1/status', {
      body: { ...w, spec: { color: 'blue' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.json.spec.color, 'red', 'the status subresource does not change spec');
    assert.equal(status.json.metadata.generation, 1);
    const spec = await t.fetch('PUT', '/apis/example.com/v1/namespaces/default/widgets/w1', {
      body: { ...status.json, spec: { color: 'blue' }, status: {} },
    });
    assert.equal(spec.json.spec.color, 'blue');
    assert.equal(spec.json.status.conditions[0].status, 'True', 'the main resource does not change status');
    assert.equal(spec.json.metadata.generation, 2);
  });

  it("prints the CRD's columns in Tables", async () => {
    const res = await t.fetch('GET', '/apis/example.com/v1/namespaces/default/widgets', {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    assert.deepEqual(
      res.json.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Color', 'Ready'],
    );
    const row = res.json.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'w1');
    assert.deepEqual(row.cells, ['w1', 'blue', 'True']);
  });

  it('validates the status alone on a status update, as kube-apiserver does', async () => {
    const path = '/apis/example.com/v1/namespaces/default/widgets/w-status';
    const created = await t.fetch('POST', '/apis/example.com/v1/namespaces/default/widgets', {
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w-status' },
        spec: { color: 'red' },
      },
    });
    assert.equal(created.status, 201, created.text);
    // The schema comes to refuse the widget's spec.
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';
    const crd = (await t.fetch('GET', crdPath)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.color.enum = ['blue'];
    const put = await t.fetch('PUT', crdPath, { body: crd });
    assert.equal(put.status, 200, put.text);
    await eventually(async () => {
      const w = (await t.fetch('GET', path)).json;
      return (await t.fetch('PUT', path, { body: w })).status === 422;
    }, 'the stricter schema to apply');

    const w = (await t.fetch('GET', path)).json;
    const ready = { conditions: [{ type: 'Ready', status: 'False' }] };
    const status = await t.fetch('PUT', `${path}/status`, { body: { ...w, status: ready } });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.json.status, ready);
    assert.equal(status.json.spec.color, 'red', 'the spec is left as it was');

    const invalid = await t.fetch('PUT', `${path}/status`, {
      body: { ...status.json, status: { conditions: [{ type: 7 }] } },
    });
    assert.equal(invalid.status, 422, invalid.text);
    assert.deepEqual(
      invalid.json.details.causes.map((c: { field: string }) => c.field),
      ['status.conditions[0].type'],
    );
  });

  it('stops serving a deleted CRD and deletes its objects', async () => {
    await t.fetch('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
    await eventually(
      gone('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'),
      'the CRD to go',
    );
    const list = await t.fetch('GET', '/apis/example.com/v1/namespaces/default/widgets');
    assert.equal(list.status, 404);
    const { kvs } = await t.server.storage.range('/registry/example.com/widgets/', {});
    assert.equal(kvs.length, 0);
    // Re-creating the CRD serves an empty collection.
    await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: widgetCrd });
    const again = await t.fetch('GET', '/apis/example.com/v1/namespaces/default/widgets');
    assert.equal(again.status, 200);
    assert.equal(again.json.items.length, 0);
  });

  it('refuses an invalid CRD with field paths', async () => {
    const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        ...widgetCrd,
        metadata: { name: 'wrong.example.com' },
        spec: { ...widgetCrd.spec, scope: 'Galactic' },
      },
    });
    assert.equal(res.status, 422);
    const fields = res.json.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('metadata.name'), res.text);
    assert.ok(fields.includes('spec.scope'), res.text);
  });
});
