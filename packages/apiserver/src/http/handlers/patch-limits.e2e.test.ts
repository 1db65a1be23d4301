import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * The bounds kube-apiserver puts on a JSON patch, over real HTTPS: at most 10000 operations (413), and copy
 * operations adding at most 3 MiB (422). Without the second, a patch of a few hundred bytes that copies a
 * member into itself again and again doubles the object at each step and takes the server's memory.
 */

let t: TestServer;
const NS = 'patch-limits';
const configMaps = `/api/v1/namespaces/${NS}/configmaps`;
const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };

before(async () => {
  t = await startTestServer();
  const ns = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
});
after(async () => {
  await t.close();
});

async function createConfigMap(name: string): Promise<string> {
  const res = await t.fetch('POST', configMaps, {
    body: { metadata: { name }, data: { a: 'x'.repeat(1000) } },
  });
  assert.equal(res.status, 201, res.text);
  return res.json.metadata.resourceVersion as string;
}

/** Copies `/data` into itself `times` times: the document doubles at each operation. */
function doublingPatch(times: number): unknown[] {
  const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: { seed: 'y'.repeat(1000) } }];
  for (let i = 0; i < times; i++) ops.push({ op: 'copy', from: '/data', path: `/data/k${i}` });
  return ops;
}

describe('JSON patch limits', () => {
  it('copies adding more than 3 MiB: 422 naming the accumulated size, nothing written', async () => {
    const rv = await createConfigMap('doubling');
    // ~1 KB doubled 30 times would be a terabyte; the twelfth copy already passes 3 MiB.
    const before = process.memoryUsage().rss;
    const res = await t.fetch('PATCH', `${configMaps}/doubling`, {
      headers: JSON_PATCH,
      body: doublingPatch(30),
    });
    assert.equal(res.status, 422, res.text.slice(0, 300));
    assert.equal(res.json.kind, 'Status');
    assert.equal(res.json.reason, 'Invalid');
    assert.match(
      res.json.message,
      /^JSON patch copy operation on "\/data\/k\d+" does not apply: the accumulated size increase of copy is \d+, exceeding the limit 3145728$/,
    );
    // The server runs in this process: refusing must not have built the doubled document first.
    assert.ok(process.memoryUsage().rss - before < 256 * 1024 * 1024, 'the refused patch grew the heap');
    const after = await t.fetch('GET', `${configMaps}/doubling`);
    assert.equal(after.json.metadata.resourceVersion, rv);
    assert.equal(after.json.metadata.annotations, undefined);
  });

  it('copies within the budget apply', async () => {
    await createConfigMap('copies');
    const res = await t.fetch('PATCH', `${configMaps}/copies`, {
      headers: JSON_PATCH,
      body: [
        { op: 'copy', from: '/data/a', path: '/data/b' },
        { op: 'copy', from: '/data/a', path: '/data/c' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json.data), ['a', 'b', 'c']);
    assert.equal(res.json.data.c, 'x'.repeat(1000));
  });

  it('10001 operations: 413 RequestEntityTooLarge before any applies; 10000 are served', async () => {
    const rv = await createConfigMap('many-ops');
    const test = { op: 'test', path: '/kind', value: 'ConfigMap' };
    const tooMany = [...Array.from({ length: 10_000 }, () => test), { op: 'remove', path: '/data' }];
    const res = await t.fetch('PATCH', `${configMaps}/many-ops`, { headers: JSON_PATCH, body: tooMany });
    assert.equal(res.status, 413, res.text);
    assert.equal(res.json.reason, 'RequestEntityTooLarge');
    assert.equal(res.json.message, 'The allowed maximum operations in a JSON patch is 10000, got 10001');
    const unchanged = await t.fetch('GET', `${configMaps}/many-ops`);
    assert.equal(unchanged.json.metadata.resourceVersion, rv);

    const allowed = [...Array.from({ length: 9_999 }, () => test), { op: 'remove', path: '/data' }];
    const ok = await t.fetch('PATCH', `${configMaps}/many-ops`, { headers: JSON_PATCH, body: allowed });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.equal(ok.json.data, undefined);
  });
});
