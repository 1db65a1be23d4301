import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Server-side apply of custom resources nested close to the 2000 levels a body may have (ADR 0401), over
 * real HTTPS, on a server that has not applied anything yet: its merge runs uncompiled then, with larger
 * stack frames, and went past the call stack's size at 1990 levels (a 500).
 */

let t: TestServer;
const GROUP = 'depth.certkit.test';
const blobs = `/apis/${GROUP}/v1/namespaces/default/blobs`;
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
const DEPTH = 1990;

/** A Blob whose spec.x is `{"a": … {"a": leaf} …}`, DEPTH objects deep. */
function blob(name: string, leaf: number, extra = ''): string {
  const x = `${'{"a":'.repeat(DEPTH)}${leaf}${'}'.repeat(DEPTH)}`;
  return `{"apiVersion":"${GROUP}/v1","kind":"Blob","metadata":{"name":"${name}"},"spec":{${extra}"x":${x}}}`;
}

before(async () => {
  t = await startTestServer();
  const crd = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `blobs.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'blobs', singular: 'blob', kind: 'Blob' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            },
          },
        ],
      },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  for (let i = 0; i < 100 && (await t.fetch('GET', blobs)).status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
});
after(async () => {
  await t.close();
});

describe(`server-side apply ${DEPTH} levels deep`, () => {
  it('applies over a created object, takes it over by force, and applies without it: never a 500', async () => {
    const created = await t.fetch('POST', blobs, { rawBody: blob('deep', 1) });
    assert.equal(created.status, 201, created.text.slice(0, 300));
    const first = await t.fetch('PATCH', `${blobs}/deep?fieldManager=first`, {
      headers: APPLY,
      rawBody: blob('deep', 1),
    });
    assert.equal(first.status, 200, first.text.slice(0, 300));
    const forced = await t.fetch('PATCH', `${blobs}/deep?fieldManager=second&force=true`, {
      headers: APPLY,
      rawBody: blob('deep', 2),
    });
    assert.equal(forced.status, 200, forced.text.slice(0, 300));
    let leaf: unknown = forced.json.spec.x;
    for (let i = 0; i < DEPTH; i++) leaf = (leaf as { a: unknown }).a;
    assert.equal(leaf, 2);
    // The second manager applies without x, which it owned: the removal walks the same depth.
    const removed = await t.fetch('PATCH', `${blobs}/deep?fieldManager=second`, {
      headers: APPLY,
      rawBody: `{"apiVersion":"${GROUP}/v1","kind":"Blob","metadata":{"name":"deep"},"spec":{"y":1}}`,
    });
    assert.equal(removed.status, 200, removed.text.slice(0, 300));
    assert.equal(removed.json.spec.y, 1);
  });
});
