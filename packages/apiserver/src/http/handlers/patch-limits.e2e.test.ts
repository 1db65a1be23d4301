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

describe('strategic merge patch of long lists', () => {
  // Quadratic merging took over 10 s for 20000 owner references, the event loop held all along (every
  // request of the server waited); merged through Maps it takes a fraction of a second. A ServiceAccount's
  // secrets merge by name like owner references by uid, without the collector acting on them.
  const N = 30_000;
  const LINEAR_MS = 8_000;
  const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };
  const serviceAccounts = `/api/v1/namespaces/${NS}/serviceaccounts`;
  const secrets = Array.from({ length: N }, (_, i) => ({ name: `secret-${i}` }));

  async function timedPatch(path: string, body: unknown) {
    const started = performance.now();
    const res = await t.fetch('PATCH', path, { headers: SMP, body });
    return { res, ms: performance.now() - started };
  }

  it(`merges ${N} list items into ${N} by their merge key, in the patch's order, in linear time`, async () => {
    const created = await t.fetch('POST', serviceAccounts, { body: { metadata: { name: 'many' } } });
    assert.equal(created.status, 201, created.text);
    const path = `${serviceAccounts}/many`;
    const first = await timedPatch(path, { secrets });
    assert.equal(first.res.status, 200, first.res.text.slice(0, 300));
    const reversed = [...secrets].reverse().map((s) => ({ ...s, namespace: NS }));
    const second = await timedPatch(path, { secrets: reversed });
    assert.equal(second.res.status, 200, second.res.text.slice(0, 300));
    assert.ok(second.ms < LINEAR_MS, `took ${second.ms} ms`);
    const merged = second.res.json.secrets as { name: string; namespace: string }[];
    assert.equal(merged.length, N);
    assert.equal(merged[0]!.name, `secret-${N - 1}`);
    assert.equal(merged[N - 1]!.name, 'secret-0');
    assert.ok(merged.every((s) => s.namespace === NS));

    const deleteHalf = secrets.filter((_, i) => i % 2 === 0).map((s) => ({ $patch: 'delete', name: s.name }));
    const third = await timedPatch(path, { secrets: deleteHalf });
    assert.equal(third.res.status, 200, third.res.text.slice(0, 300));
    assert.ok(third.ms < LINEAR_MS, `took ${third.ms} ms`);
    assert.equal(third.res.json.secrets.length, N / 2);
    assert.equal(third.res.json.secrets[0].name, `secret-${N - 1}`);
  });

  it(`unions and deletes ${N} finalizers in linear time`, async () => {
    await createConfigMap('many-finalizers');
    const finalizers = Array.from({ length: N }, (_, i) => `example.com/f${i}`);
    const path = `${configMaps}/many-finalizers`;
    const union = await timedPatch(path, { metadata: { finalizers } });
    assert.equal(union.res.status, 200, union.res.text.slice(0, 300));
    const again = await timedPatch(path, {
      metadata: { finalizers: [...finalizers].reverse() },
    });
    assert.equal(again.res.status, 200, again.res.text.slice(0, 300));
    assert.ok(again.ms < LINEAR_MS, `took ${again.ms} ms`);
    assert.equal(again.res.json.metadata.finalizers.length, N);
    const removed = await timedPatch(path, {
      metadata: { '$deleteFromPrimitiveList/finalizers': finalizers.slice(0, N - 1) },
    });
    assert.equal(removed.res.status, 200, removed.res.text.slice(0, 300));
    assert.ok(removed.ms < LINEAR_MS, `took ${removed.ms} ms`);
    assert.deepEqual(removed.res.json.metadata.finalizers, [`example.com/f${N - 1}`]);
    // Let the object go: its finalizers would hold it past the test server's close otherwise.
    await t.fetch('PATCH', `${configMaps}/many-finalizers`, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: { metadata: { finalizers: null } },
    });
  });
});
