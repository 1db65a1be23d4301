import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';

/**
 * Responses and watch events made from stored JSON (the stored value with the resourceVersion spliced in)
 * carry the same object as a read of it, whatever member order the client sent or an older version stored.
 */

// Written by an older version of the store, in the client's member order: another object's `metadata`
// comes before the object's own, where a splice must not go.
const LEGACY_VALUE = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  extra: { metadata: { name: 'nested' } },
  metadata: {
    name: 'legacy',
    namespace: 'default',
    uid: 'u-legacy',
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  data: { a: 'b' },
});

let t: TestServer;
let legacyRevision = 0;
before(async () => {
  t = await startTestServer({
    seed: async (storage) => {
      legacyRevision = await storage.create('/registry/core/configmaps/default/legacy', LEGACY_VALUE);
    },
  });
});
after(async () => {
  await t.close();
});

describe('objects answered from their stored JSON', () => {
  it('answers create, update, get and delete with the object as read, in any member order sent', async () => {
    // Spec before metadata, with a nested object named metadata, and no apiVersion or kind at all.
    const crd = {
      spec: {
        group: 'order.example.com',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { metadata: { type: 'object' }, spec: { type: 'object' } },
              },
            },
          },
        ],
      },
      metadata: { name: 'widgets.order.example.com' },
    };
    const created = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd,
    });
    assert.equal(created.status, 201, created.text);
    const read = await t.fetch(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.order.example.com',
    );
    assert.deepEqual(created.json, read.json);
    assert.match(created.json.metadata.resourceVersion, /^\d+$/);
    assert.equal(
      created.json.spec.versions[0].schema.openAPIV3Schema.properties.metadata.resourceVersion,
      undefined,
    );

    const cm = { data: { k: 'v' }, metadata: { name: 'ordered', labels: { a: 'b' } } };
    const made = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', { body: cm });
    assert.equal(made.status, 201);
    const update = { ...made.json, data: { k: 'w' } };
    const updated = await t.fetch('PUT', '/api/v1/namespaces/default/configmaps/ordered', { body: update });
    assert.equal(updated.status, 200);
    const got = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/ordered');
    assert.deepEqual(updated.json, got.json);
    assert.notEqual(updated.json.metadata.resourceVersion, made.json.metadata.resourceVersion);
    // An update that changes nothing answers the stored object as it is.
    const unchanged = await t.fetch('PUT', '/api/v1/namespaces/default/configmaps/ordered', {
      body: got.json,
    });
    assert.deepEqual(unchanged.json, got.json);
    const deleted = await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/ordered');
    assert.equal(deleted.status, 200);
    assert.deepEqual(
      { ...deleted.json, metadata: { ...deleted.json.metadata, resourceVersion: '' } },
      {
        ...got.json,
        metadata: { ...got.json.metadata, resourceVersion: '' },
      },
    );
    assert.ok(Number(deleted.json.metadata.resourceVersion) > Number(got.json.metadata.resourceVersion));
  });

  it('serves values stored in another member order with the resourceVersion in their own metadata', async () => {
    const expected = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      extra: { metadata: { name: 'nested' } },
      metadata: {
        name: 'legacy',
        namespace: 'default',
        uid: 'u-legacy',
        creationTimestamp: '2026-01-01T00:00:00Z',
        resourceVersion: String(legacyRevision),
      },
      data: { a: 'b' },
    };
    const got = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/legacy');
    assert.deepEqual(got.json, expected);
    const cached = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/legacy?resourceVersion=0');
    assert.deepEqual(cached.json, expected);
    const list = await t.fetch('GET', '/api/v1/namespaces/default/configmaps?resourceVersion=0');
    assert.deepEqual(
      list.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'legacy'),
      expected,
    );
    const w = await openWatch(
      t,
      '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dlegacy',
    );
    const [added] = await w.waitFor(1);
    w.close();
    assert.deepEqual(added, { type: 'ADDED', object: expected });
  });

  it('lists unknown fields in a Warning header under fieldValidation=Warn', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'warned', colour: 'red' }, data: {}, dat: {} },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(
      res.headers.warning,
      '299 - "unknown field \\"metadata.colour\\"", 299 - "unknown field \\"dat\\""',
    );
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text));
  });
});
