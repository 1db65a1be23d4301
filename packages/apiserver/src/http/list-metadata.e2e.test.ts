import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * LISTs as PartialObjectMetadataList, whose items are cut out of the stored values rather than decoded
 * (registry/metadata-text.ts, stored-json.ts): every item's metadata must be exactly, member for member and in
 * order, what the full object's metadata says, whether the list comes from the watch cache (resourceVersion=0,
 * and consistent reads, which the cache answers once it is current), or from storage (pages with a limit), and
 * after updates, deletes and a deletion held up by a finalizer. A consistent list reads its own writes.
 */

let t: TestServer;
const NS = 'meta-lists';
const METADATA = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;

interface Item {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown> & { name: string; resourceVersion: string };
}
interface List {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string };
  items: Item[];
}

async function list(path: string, accept: string): Promise<List> {
  const res = await t.fetch('GET', path, { headers: { Accept: accept } });
  assert.equal(res.status, 200, res.text);
  return res.json as List;
}

/** A metadata list read with a limit, page by page (from storage). */
async function pagedMetadata(path: string): Promise<Item[]> {
  const items: Item[] = [];
  let token = '';
  do {
    const page = await list(
      `${path}?limit=4${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      METADATA,
    );
    items.push(...page.items);
    token = page.metadata.continue ?? '';
  } while (token);
  return items;
}

/** Each metadata item is exactly its full object's metadata, as text (so member order counts too). */
function assertSameMetadata(metadataItems: Item[], fullItems: Item[], how: string): void {
  assert.deepEqual(
    metadataItems.map((i) => i.metadata.name),
    fullItems.map((i) => i.metadata.name),
    `${how}: the same objects`,
  );
  metadataItems.forEach((item, i) => {
    assert.equal(item.apiVersion, 'meta.k8s.io/v1', how);
    assert.equal(item.kind, 'PartialObjectMetadata', how);
    assert.deepEqual(Object.keys(item), ['apiVersion', 'kind', 'metadata'], how);
    assert.equal(
      JSON.stringify(item.metadata),
      JSON.stringify(fullItems[i].metadata),
      `${how}: ${item.metadata.name}`,
    );
  });
}

/** Every way of listing as metadata, each against the full list (read from storage). */
async function assertAllListsMatch(step: string): Promise<void> {
  for (const path of [SECRETS, '/api/v1/secrets']) {
    const full = (await list(path, 'application/json')).items;
    assertSameMetadata((await list(path, METADATA)).items, full, `${step}, consistent, ${path}`);
    assertSameMetadata(
      (await list(`${path}?resourceVersion=0`, METADATA)).items,
      full,
      `${step}, resourceVersion=0, ${path}`,
    );
    assertSameMetadata(await pagedMetadata(path), full, `${step}, paged, ${path}`);
  }
}

before(async () => {
  t = await startTestServer();
  const ns = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  for (let i = 0; i < 12; i++) {
    const res = await t.fetch('POST', SECRETS, {
      body: {
        metadata: {
          name: `s-${String(i).padStart(2, '0')}`,
          labels: { 'controller.cert-manager.io/fao': 'true', n: String(i) },
          annotations: {
            'cert-manager.io/alt-names': 'a.example,b.example',
            // What JSON escapes, brackets in strings, a would-be member name: none of it ends the metadata.
            note: i % 3 === 0 ? 'a "quoted" {"resourceVersion": ["}"]} \\ \n ü 漢 \u2028' : '',
          },
        },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.alloc(1500, i).toString('base64'),
          'tls.key': Buffer.alloc(300, i).toString('base64'),
          'ca.crt': Buffer.alloc(1000, i).toString('base64'),
        },
      },
    });
    assert.equal(res.status, 201, res.text);
  }
});
after(async () => {
  await t.close();
});

describe('LIST as PartialObjectMetadataList', () => {
  it("gives each object's metadata exactly as its full object has it, from the cache and from storage", async () => {
    await assertAllListsMatch('created');
  });

  it('still does after updates, deletes and a deletion held by a finalizer', async () => {
    const patch = (name: string, body: unknown) =>
      t.fetch('PATCH', `${SECRETS}/${name}`, {
        body,
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
    assert.equal((await patch('s-01', { metadata: { labels: { n: 'changed', added: 'yes' } } })).status, 200);
    assert.equal((await patch('s-02', { metadata: { annotations: { note: null } } })).status, 200);
    assert.equal((await patch('s-03', { data: { 'tls.key': 'AAAA' } })).status, 200);
    assert.equal((await patch('s-04', { metadata: { finalizers: ['example.com/hold'] } })).status, 200);
    assert.equal((await t.fetch('DELETE', `${SECRETS}/s-04`)).status, 200);
    assert.equal((await t.fetch('DELETE', `${SECRETS}/s-05`)).status, 200);
    assert.equal((await t.fetch('DELETE', `${SECRETS}/s-00`)).status, 200);
    await assertAllListsMatch('updated and deleted');
    const held = (await list(SECRETS, METADATA)).items.find((i) => i.metadata.name === 's-04');
    assert.ok(held?.metadata.deletionTimestamp, 'the held Secret is listed as being deleted');
    assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
    const names = (await list(SECRETS, METADATA)).items.map((i) => i.metadata.name);
    assert.ok(!names.includes('s-05') && !names.includes('s-00'), 'deleted Secrets are gone');
  });

  it('reads its own writes when consistent (no resourceVersion), at once', async () => {
    for (let i = 0; i < 5; i++) {
      const created = await t.fetch('POST', SECRETS, {
        body: { metadata: { name: `fresh-${i}`, labels: { round: String(i) } }, data: {} },
      });
      assert.equal(created.status, 201, created.text);
      const listed = await list(SECRETS, METADATA);
      const item = listed.items.find((it) => it.metadata.name === `fresh-${i}`);
      assert.ok(item, `fresh-${i} is in the list right after its create`);
      // A write's response carries its resourceVersion first (stored-json.ts), a list's last: same members.
      assert.deepEqual(item.metadata, created.json.metadata);
      assert.ok(Number(listed.metadata.resourceVersion) >= Number(created.json.metadata.resourceVersion));

      const updated = await t.fetch('PATCH', `${SECRETS}/fresh-${i}`, {
        body: { metadata: { labels: { round: `${i}-updated` } } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(updated.status, 200, updated.text);
      const after = (await list(SECRETS, METADATA)).items.find((it) => it.metadata.name === `fresh-${i}`);
      assert.deepEqual(after?.metadata, updated.json.metadata);

      assert.equal((await t.fetch('DELETE', `${SECRETS}/fresh-${i}`)).status, 200);
      const gone = (await list(SECRETS, METADATA)).items.some((it) => it.metadata.name === `fresh-${i}`);
      assert.equal(gone, false, `fresh-${i} is gone from the list right after its delete`);
    }
  });
});
