import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseListOptions, type StoredObject } from '@certkit/apimachinery';
import type { ObjectStore } from '../registry/generic/store.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { objectJson } from '../watchcache/frames.ts';
import { type RenderOptions, renderList } from './render.ts';

/**
 * LIST bodies written as they are encoded, with back-pressure: the bytes are those of the list encoded
 * whole (renderList over the store's objects, or the watch cache entries' shared JSON), for lists of many
 * chunks, from storage and from the cache, whole, by selector, paged with limit/continue, as Tables and
 * as metadata; and a client that stops reading holds up the list rather than making the server buffer it.
 */

let t: TestServer;
let store: ObjectStore;
const NS = 'lists';
const COUNT = 240;

/** Text with what JSON escapes, multi-byte characters, and for some objects more than a write's worth. */
function payload(i: number): string {
  const unit = `${i} "q" \\ \n\t é ✓ 漢 \u2028 \u0001 `;
  const size = i % 10 === 0 ? 70_000 : i % 3 === 0 ? 9_000 : 300;
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

before(async () => {
  t = await startTestServer({ listStallTimeoutMs: 1500 });
  store = t.server.registry.byResource('', 'configmaps')!;
  assert.equal(
    (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status,
    201,
  );
  for (let i = 0; i < COUNT; i++) {
    const res = await t.fetch('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      body: {
        metadata: {
          name: `cm-${String(i).padStart(4, '0')}`,
          labels: { parity: i % 2 ? 'odd' : 'even' },
          annotations: i % 7 === 0 ? { note: '{"nested": ["brackets", "}"]}' } : undefined,
        },
        data: { payload: payload(i) },
      },
    });
    assert.equal(res.status, 201, res.text);
  }
});
after(async () => {
  await t.close();
});

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const METADATA = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';

function render(accept: string): RenderOptions {
  const rendering = accept === TABLE ? 'table' : accept === METADATA ? 'metadata' : 'object';
  return { rendering, apiVersion: 'v1', includeObject: 'Metadata' };
}

/** The list from storage encoded whole, as before streaming: renderList over store.list, serialised at once. */
async function storedBody(query: string, accept = 'application/json'): Promise<string> {
  const options = parseListOptions(new URLSearchParams(query), 'list');
  return JSON.stringify(renderList(store.def, await store.list(NS, options), render(accept)));
}

/** A Table's cells hold ages, which move with the clock: blanked in both bodies compared. */
function withoutAges(body: string): unknown {
  const table = JSON.parse(body);
  const age = table.columnDefinitions.findIndex((c: { name: string }) => c.name === 'Age');
  for (const row of table.rows) if (age >= 0) row.cells[age] = '';
  return table;
}

describe('LIST bodies written as encoded', () => {
  it('from storage: the same bytes as the list encoded whole, in several chunks', async () => {
    const res = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], undefined, 'a large list is sent chunked');
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.ok(res.text.length > 3_000_000, `${res.text.length}`);
    assert.equal(res.json.items.length, COUNT);
    const rv = res.json.metadata.resourceVersion;
    assert.equal(res.text, await storedBody(`resourceVersion=${rv}&resourceVersionMatch=Exact`));
  });

  it('from storage by label selector, by name, as metadata and as a Table: the same bytes', async () => {
    for (const query of ['labelSelector=parity%3Dodd', 'fieldSelector=metadata.name%3Dcm-0010']) {
      const res = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps?${query}`);
      assert.equal(res.status, 200);
      const rv = res.json.metadata.resourceVersion;
      assert.equal(res.text, await storedBody(`${query}&resourceVersion=${rv}&resourceVersionMatch=Exact`));
      assert.ok(res.json.items.length > 0);
    }
    const metadata = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps`, {
      headers: { Accept: METADATA },
    });
    assert.equal(metadata.json.kind, 'PartialObjectMetadataList');
    const rv = metadata.json.metadata.resourceVersion;
    assert.equal(
      metadata.text,
      await storedBody(`resourceVersion=${rv}&resourceVersionMatch=Exact`, METADATA),
    );
    const table = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps`, { headers: { Accept: TABLE } });
    assert.equal(table.json.rows.length, COUNT);
    const expected = await storedBody(
      `resourceVersion=${table.json.metadata.resourceVersion}&resourceVersionMatch=Exact`,
      TABLE,
    );
    assert.deepEqual(withoutAges(table.text), withoutAges(expected));
  });

  it('with limit and continue: every page the same bytes as encoded whole, together the whole list', async () => {
    const names: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const query = `limit=70${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
      const res = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps?${query}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, await storedBody(query));
      names.push(...res.json.items.map((i: StoredObject) => i.metadata.name));
      token = res.json.metadata.continue ?? '';
      pages++;
    } while (token);
    assert.equal(pages, 4);
    assert.deepEqual(
      names,
      Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(4, '0')}`),
    );
  });

  it('from the watch cache: the same bytes as its entries joined at once', async () => {
    const res = await t.fetch('GET', `/api/v1/namespaces/${NS}/configmaps?resourceVersion=0`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    const cache = t.server.caches.cacheFor(store)!;
    const items = cache.list(NS).map((e) => objectJson(e, { kind: 'object', apiVersion: 'v1' }));
    const expected = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"${cache.revision}"},"items":[${items.join(',')}]}`;
    assert.equal(res.text, expected);
    assert.equal(res.json.items.length, COUNT);
  });

  it('a small list is one write with a Content-Length, as before', async () => {
    const res = await t.fetch(
      'GET',
      `/api/v1/namespaces/${NS}/configmaps?fieldSelector=metadata.name%3Dcm-0001`,
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
    assert.equal(res.json.items.length, 1);
  });
});

describe('a client that stops reading a list', () => {
  /** Opens the list and stops reading after its first bytes. */
  async function pausedList(path: string): Promise<{ res: IncomingMessage; agent: Agent }> {
    const agent = new Agent({ ca: t.caCertPem });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        `${t.url}${path}`,
        { agent, headers: { Authorization: `Bearer ${t.token}` } },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    res.pause();
    return { res, agent };
  }

  /** Memory the process holds after a full collection: what is live, not garbage waiting for one. */
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const live = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };

  const inflightReads = () =>
    Number(
      /apiserver_current_inflight_requests\{request_kind="readOnly"\} (\d+)/.exec(
        t.server.metrics.render(),
      )?.[1],
    );

  it('holds the list up (bounded buffers, slot kept) and is cut off after the stall timeout', async () => {
    // About 30 MB: several times what the kernel's socket buffers take on both ends.
    const big = 'big';
    assert.equal(
      (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: big } } })).status,
      201,
    );
    for (let i = 0; i < 300; i++) {
      const res = await t.fetch('POST', `/api/v1/namespaces/${big}/configmaps`, {
        body: { metadata: { name: `big-${i}` }, data: { payload: 'x'.repeat(100_000) } },
      });
      assert.equal(res.status, 201);
    }
    // The watch cache takes the new objects in after the creates answered: measure once it holds them.
    const cache = t.server.caches.cacheFor(store)!;
    while (cache.list(big).length < 300) await new Promise((r) => setTimeout(r, 10));
    for (const query of ['', '?resourceVersion=0']) {
      const before = live();
      const { res, agent } = await pausedList(`/api/v1/namespaces/${big}/configmaps${query}`);
      try {
        assert.equal(res.statusCode, 200);
        await new Promise((r) => setTimeout(r, 700));
        // The server waits for the connection: the request is still in flight, not written out into memory.
        assert.equal(inflightReads(), 1, query);
        // What the paused list holds: a page, a chunk and the connection's buffers, not the 30 MB list.
        const held = live() - before;
        assert.ok(held < 8_000_000, `${query}: ${held} bytes held while the client is paused`);
        // No byte read for the stall timeout: the server closes the connection and gives the slot back.
        const cutOff = Date.now();
        while (inflightReads() !== 0) {
          assert.ok(Date.now() - cutOff < 10_000, `${query}: still in flight 10 s after the client stopped`);
          await new Promise((r) => setTimeout(r, 20));
        }
        // The client, reading again, finds the body cut short.
        const ended = new Promise<void>((resolve) => res.once('close', () => resolve()));
        res.on('error', () => {});
        res.resume();
        await ended;
        assert.equal(res.complete, false);
      } finally {
        res.destroy();
        agent.destroy();
      }
    }
  });

  it('a client that leaves mid-list ends the list and frees its slot', async () => {
    const { res, agent } = await pausedList(`/api/v1/namespaces/big/configmaps`);
    try {
      assert.equal(inflightReads(), 1);
    } finally {
      res.destroy();
      agent.destroy();
    }
    const deadline = Date.now() + 5000;
    while (inflightReads() !== 0) {
      assert.ok(Date.now() < deadline, 'the slot was not given back');
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/big/configmaps?limit=1')).status, 200);
  });
});
