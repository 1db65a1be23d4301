import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/** The API server over real HTTPS: status codes, Status bodies, metadata rules, lists, negotiation. */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t.close();
});

const secret = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, ...((extra.metadata as object) ?? {}) },
  data: { key: Buffer.from('value').toString('base64') },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata')),
});

describe('authentication and transport', () => {
  it('refuses requests without the token with a 401 Status', async () => {
    const res = await t.fetch('GET', '/api/v1/namespaces', { anonymous: true });
    assert.equal(res.status, 401);
    assert.equal(res.json.kind, 'Status');
    assert.equal(res.json.reason, 'Unauthorized');
  });
  it('serves /healthz, /livez, /readyz and /version without a token', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await t.fetch('GET', path, { anonymous: true });
      assert.equal(res.status, 200, path);
      assert.equal(res.text, 'ok');
    }
    assert.equal((await t.fetch('GET', '/readyz/ping', { anonymous: true })).text, 'ok');
    assert.equal((await t.fetch('GET', '/readyz/nonsense', { anonymous: true })).status, 404);
    const verbose = await t.fetch('GET', '/readyz?verbose', { anonymous: true });
    assert.match(verbose.text, /\[\+\]ping ok/);
    const version = await t.fetch('GET', '/version', { anonymous: true });
    assert.equal(version.json.major, '1');
  });
  it('answers unknown paths with 404, wrong methods with 405, large bodies with 413, bad JSON with 400', async () => {
    const unknown = await t.fetch('GET', '/api/v1/widgets');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.reason, 'NotFound');
    const method = await t.fetch('PUT', '/api/v1/namespaces/default/secrets', { body: {} });
    assert.equal(method.status, 405);
    assert.equal(method.json.reason, 'MethodNotAllowed');
    const big = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      rawBody: JSON.stringify({ metadata: { name: 'big' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 1) } }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(big.status, 413);
    assert.equal(big.json.reason, 'RequestEntityTooLarge');
    const bad = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      rawBody: '{"metadata": ',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.reason, 'BadRequest');
  });
  it('answers other methods than GET on /version, /api and /api/v1 with the 405 Status kube-apiserver writes', async () => {
    for (const [method, path] of [
      ['POST', '/version'],
      ['PUT', '/version'],
      ['DELETE', '/api'],
      ['POST', '/api'],
      ['PATCH', '/api/v1'],
    ] as const) {
      const res = await t.fetch(method, path, { body: {} });
      assert.equal(res.status, 405, `${method} ${path}: ${res.text}`);
      assert.deepEqual(res.json, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server does not allow this method on the requested resource',
        reason: 'MethodNotAllowed',
        details: {},
        code: 405,
      });
    }
  });
  it('answers any method on /apis, /openapi/v2 and /openapi/v3 as GET, as kube-apiserver’s plain handlers do', async () => {
    for (const path of ['/apis', '/openapi/v2', '/openapi/v3']) {
      const get = await t.fetch('GET', path);
      const post = await t.fetch('POST', path, { body: {} });
      assert.equal(post.status, 200, `POST ${path}: ${post.text.slice(0, 200)}`);
      assert.deepEqual(post.json, get.json, path);
    }
  });
  it('reads a large request that arrives while a large response is still being sent on its connection', async () => {
    // A list of about 8 MB, and right behind it on the same TLS connection a 1 MB create. The client reads
    // nothing for a moment, so the list is still in the server's socket buffer when the create arrives: Node's
    // HTTP server then stops reading until the buffer drains, and the create must be read after that, not
    // dropped with a reset connection (as it was while Node's native parser read TLS sockets itself).
    const big = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { drain: 'test' } },
      data: { big: 'x'.repeat(1_000_000) },
    });
    for (let i = 0; i < 8; i++) {
      assert.equal(
        (await t.fetch('POST', '/api/v1/namespaces/default/configmaps', { body: big(`listed-${i}`) })).status,
        201,
      );
    }
    const url = new URL(t.url);
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: t.caCertPem });
    const head = (method: string, path: string, body = '') =>
      `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${t.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {});
    const closed = once(socket, 'close');
    await once(socket, 'secureConnect');
    socket.pause();
    socket.write(head('GET', '/api/v1/namespaces/default/configmaps?labelSelector=drain%3Dtest'));
    await new Promise((r) => setTimeout(r, 300));
    socket.write(head('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify(big('behind-a-list'))));
    await new Promise((r) => setTimeout(r, 300));
    socket.resume();
    // Both answers, or the connection's end: whichever comes first.
    const statuses = () => [
      ...Buffer.concat(received)
        .toString('latin1')
        .matchAll(/HTTP\/1\.1 (\d+)/g),
    ];
    for (let waited = 0; statuses().length < 2 && !socket.destroyed && waited < 20_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    socket.destroy();
    await closed;
    assert.deepEqual(
      statuses().map((m) => m[1]),
      ['200', '201'],
    );
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/behind-a-list')).status, 200);
  });
});

describe('object lifecycle', () => {
  it('creates with server-set metadata and refuses duplicates', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: secret('life', { metadata: { uid: 'mine', creationTimestamp: '2000-01-01T00:00:00Z' } }),
    });
    assert.equal(res.status, 201);
    const meta = res.json.metadata;
    assert.match(meta.uid, /^[0-9a-f-]{36}$/);
    assert.notEqual(meta.creationTimestamp, '2000-01-01T00:00:00Z');
    assert.match(meta.resourceVersion, /^\d+$/);
    assert.equal(res.json.type, 'Opaque');
    const again = await t.fetch('POST', '/api/v1/namespaces/default/secrets', { body: secret('life') });
    assert.equal(again.status, 409);
    assert.equal(again.json.reason, 'AlreadyExists');
    assert.equal(again.json.message, 'secrets "life" already exists');
  });
  it('generates names from generateName', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { generateName: 'gen-' }, data: { a: 'b' } },
    });
    assert.equal(res.status, 201);
    assert.match(res.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
  it('validates generateName itself, before the name made from it', async () => {
    // The name keeps the first 58 characters: only the generateName check sees the other 242.
    const long = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { generateName: 'a'.repeat(300) } },
    });
    assert.equal(long.status, 422, long.text);
    assert.deepEqual(
      long.json.details.causes.map((c: { field: string }) => c.field),
      ['metadata.generateName'],
    );
    assert.match(long.json.details.causes[0].message, /must be no more than 253 characters$/);
    const bad = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { generateName: 'A_B' } },
    });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(
      bad.json.details.causes.map((c: { field: string }) => c.field),
      ['metadata.generateName', 'metadata.name'],
    );
    // A trailing dash ends a prefix well; '..' is a fine start for an RBAC name (a path segment).
    const dash = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { generateName: 'web-' } },
    });
    assert.equal(dash.status, 201, dash.text);
    const role = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      body: { metadata: { generateName: '..' } },
    });
    assert.equal(role.status, 201, role.text);
    const slash = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      body: { metadata: { generateName: 'a/' } },
    });
    assert.equal(slash.status, 422, slash.text);
    assert.equal(slash.json.details.causes[0].field, 'metadata.generateName');
    assert.equal(slash.json.details.causes[0].message, 'Invalid value: "a/": may not contain \'/\'');
  });
  it('rejects stale updates with 409 Conflict and accepts current ones', async () => {
    const created = (
      await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'occ' }, data: { a: '1' } },
      })
    ).json;
    const ok = await t.fetch('PUT', '/api/v1/namespaces/default/configmaps/occ', {
      body: { ...created, data: { a: '2' } },
    });
    assert.equal(ok.status, 200);
    assert.notEqual(ok.json.metadata.resourceVersion, created.metadata.resourceVersion);
    const stale = await t.fetch('PUT', '/api/v1/namespaces/default/configmaps/occ', {
      body: { ...created, data: { a: '3' } },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
  });
  it('does not write a no-op update', async () => {
    const created = (
      await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'noop' }, data: { a: '1' } },
      })
    ).json;
    const same = await t.fetch('PUT', '/api/v1/namespaces/default/configmaps/noop', { body: created });
    assert.equal(same.json.metadata.resourceVersion, created.metadata.resourceVersion);
  });
  it('refuses invalid objects with 422 and field paths', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: { metadata: { name: 'Bad_Name' }, data: { 'bad key!': 'eA==' } },
    });
    assert.equal(res.status, 422);
    assert.equal(res.json.reason, 'Invalid');
    const fields = res.json.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('metadata.name'), JSON.stringify(res.json));
    assert.ok(fields.includes('data'), JSON.stringify(res.json));
  });
  it('keeps immutable Secrets immutable', async () => {
    const created = (
      await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
        body: secret('frozen', { immutable: true }),
      })
    ).json;
    const res = await t.fetch('PUT', '/api/v1/namespaces/default/secrets/frozen', {
      body: { ...created, data: { key: Buffer.from('other').toString('base64') } },
    });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /immutable/);
  });
  it('refuses objects in a namespace that does not exist', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/nowhere/secrets', { body: secret('x') });
    assert.equal(res.status, 404);
    assert.equal(res.json.message, 'namespaces "nowhere" not found');
  });
  it('patches with merge, JSON and strategic merge patches', async () => {
    await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'patchme', labels: { a: '1' } }, data: { x: '1' } },
    });
    const merge = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/patchme', {
      body: { metadata: { labels: { b: '2' } }, data: { x: null, y: '2' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(merge.status, 200, merge.text);
    assert.deepEqual(merge.json.metadata.labels, { a: '1', b: '2' });
    assert.deepEqual(merge.json.data, { y: '2' });
    const json = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/patchme', {
      body: [{ op: 'add', path: '/data/z', value: '3' }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.json.data.z, '3');
    const smp = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/patchme', {
      body: { metadata: { finalizers: ['example.com/a'] } },
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    assert.equal(smp.status, 200, smp.text);
    assert.deepEqual(smp.json.metadata.finalizers, ['example.com/a']);
  });
  it('applies concurrent patches of one object one after the other, none refused with a conflict', async () => {
    await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'contended' }, data: {} },
    });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/contended', {
          body: { data: { [`k${i}`]: String(i) } },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 200),
    );
    const final = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/contended');
    assert.equal(Object.keys(final.json.data).length, 12);
    assert.deepEqual(new Set(results.map((r) => r.json.metadata.resourceVersion)).size, 12);
  });
  it('deletes a collection selected by label', async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'bulk' } } });
    for (const [name, group] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ]) {
      await t.fetch('POST', '/api/v1/namespaces/bulk/configmaps', {
        body: { metadata: { name, labels: { group } } },
      });
    }
    const res = await t.fetch('DELETE', '/api/v1/namespaces/bulk/configmaps?labelSelector=group%3Dx');
    assert.equal(res.status, 200);
    assert.equal(res.json.kind, 'ConfigMapList');
    assert.deepEqual(
      res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['a', 'b'],
    );
    const left = await t.fetch('GET', '/api/v1/namespaces/bulk/configmaps');
    assert.deepEqual(
      left.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['c'],
    );
  });

  it('deletes with preconditions', async () => {
    const created = (
      await t.fetch('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'pre' } } })
    ).json;
    const wrong = await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/pre', {
      body: { preconditions: { uid: 'not-the-uid' } },
    });
    assert.equal(wrong.status, 409, wrong.text);
    const ok = await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/pre', {
      body: { preconditions: { uid: created.metadata.uid } },
    });
    assert.equal(ok.status, 200);
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/pre')).status, 404);
  });
  it('holds objects with finalizers until the last finalizer is removed', async () => {
    await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } },
    });
    const deleting = await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/fin');
    assert.equal(deleting.status, 200);
    assert.ok(deleting.json.metadata.deletionTimestamp);
    const still = await t.fetch('GET', '/api/v1/namespaces/default/configmaps/fin');
    assert.equal(still.status, 200);
    const addFinalizer = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/fin', {
      body: { metadata: { finalizers: ['example.com/hold', 'example.com/new'] } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(addFinalizer.status, 422);
    const release = await t.fetch('PATCH', '/api/v1/namespaces/default/configmaps/fin', {
      body: { metadata: { finalizers: null } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(release.status, 200);
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/fin')).status, 404);
  });
  it('keeps every object across a restart', async () => {
    await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'durable' }, data: { a: '1' } },
    });
    const before = (await t.fetch('GET', '/api/v1/namespaces/default/configmaps/durable')).json;
    await t.restart();
    const afterRestart = (await t.fetch('GET', '/api/v1/namespaces/default/configmaps/durable')).json;
    assert.deepEqual(afterRestart, before);
  });
});

describe('lists', () => {
  before(async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'paging' } } });
    for (let i = 0; i < 25; i++) {
      const name = `item-${String(i).padStart(2, '0')}`;
      await t.fetch('POST', '/api/v1/namespaces/paging/secrets', {
        body: secret(name, {
          metadata: { labels: { parity: i % 2 ? 'odd' : 'even' } },
          type: i % 5 === 0 ? 'example.com/five' : 'Opaque',
        }),
      });
    }
  });
  it("pages with limit and continue, all pages at the first page's resourceVersion", async () => {
    const names: string[] = [];
    let token = '';
    let rv = '';
    let pages = 0;
    do {
      const res = await t.fetch(
        'GET',
        `/api/v1/namespaces/paging/secrets?limit=10${token ? `&continue=${token}` : ''}`,
      );
      assert.equal(res.status, 200);
      if (!rv) rv = res.json.metadata.resourceVersion;
      assert.equal(res.json.metadata.resourceVersion, rv);
      if (pages === 0) assert.equal(res.json.metadata.remainingItemCount, 15);
      names.push(...res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      token = res.json.metadata.continue ?? '';
      pages++;
    } while (token);
    assert.equal(pages, 3);
    assert.equal(names.length, 25);
    assert.deepEqual(names, [...names].sort());
  });
  it('filters by label and field selectors, and pages selective lists', async () => {
    const odd = await t.fetch('GET', '/api/v1/namespaces/paging/secrets?labelSelector=parity%3Dodd');
    assert.equal(odd.json.items.length, 12);
    const notOdd = await t.fetch('GET', '/api/v1/namespaces/paging/secrets?labelSelector=parity!%3Dodd');
    assert.equal(notOdd.json.items.length, 13);
    const five = await t.fetch('GET', '/api/v1/secrets?fieldSelector=type%3Dexample.com%2Ffive');
    assert.equal(five.json.items.length, 5);
    const byName = await t.fetch(
      'GET',
      '/api/v1/namespaces/paging/secrets?fieldSelector=metadata.name%3Ditem-03',
    );
    assert.deepEqual(
      byName.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['item-03'],
    );
    const page = await t.fetch(
      'GET',
      '/api/v1/namespaces/paging/secrets?labelSelector=parity%3Deven&limit=5',
    );
    assert.equal(page.json.items.length, 5);
    assert.ok(page.json.metadata.continue);
    const unsupported = await t.fetch('GET', '/api/v1/secrets?fieldSelector=data.key%3Dx');
    assert.equal(unsupported.status, 400);
  });
  it('answers a bad continue token with 400 and an invalid resourceVersionMatch with 422', async () => {
    const bad = await t.fetch('GET', '/api/v1/secrets?limit=1&continue=garbage');
    assert.equal(bad.status, 400);
    const invalid = await t.fetch('GET', '/api/v1/secrets?resourceVersionMatch=Exact');
    assert.equal(invalid.status, 422);
  });
  it('lists at an exact older resourceVersion', async () => {
    const first = await t.fetch('GET', '/api/v1/namespaces/paging/secrets');
    const rv = first.json.metadata.resourceVersion;
    await t.fetch('POST', '/api/v1/namespaces/paging/secrets', { body: secret('later') });
    const exact = await t.fetch(
      'GET',
      `/api/v1/namespaces/paging/secrets?resourceVersion=${rv}&resourceVersionMatch=Exact`,
    );
    assert.equal(exact.json.items.length, first.json.items.length);
    const now = await t.fetch('GET', '/api/v1/namespaces/paging/secrets');
    assert.equal(now.json.items.length, first.json.items.length + 1);
  });
  it('answers a future Exact resourceVersion with 504 ResourceVersionTooLarge, whole, paged and by name', async () => {
    // Issue 20 item 2: the whole list (written as it is read) answered 500 InternalError here.
    const future = 'resourceVersionMatch=Exact&resourceVersion=99999999999';
    for (const path of [
      `/api/v1/namespaces/paging/secrets?${future}`,
      `/api/v1/namespaces/paging/secrets?${future}&limit=2`,
      `/api/v1/namespaces/paging/secrets?${future}&fieldSelector=metadata.name%3Ditem-01`,
    ]) {
      const res = await t.fetch('GET', path);
      assert.equal(res.status, 504, `${path}: ${res.text}`);
      assert.equal(res.json.details.causes[0].reason, 'ResourceVersionTooLarge');
    }
  });
  it('answers 410 Expired for a continue token from before a compaction', async () => {
    const page = await t.fetch('GET', '/api/v1/namespaces/paging/secrets?limit=5');
    await t.fetch('POST', '/api/v1/namespaces/paging/secrets', { body: secret('after-page') });
    await t.server.storage.compact(await t.server.storage.currentRevision());
    const res = await t.fetch(
      'GET',
      `/api/v1/namespaces/paging/secrets?limit=5&continue=${page.json.metadata.continue}`,
    );
    assert.equal(res.status, 410);
    assert.equal(res.json.reason, 'Expired');
    assert.ok(res.json.metadata.continue, 'a fresh continue token to go on inconsistently');
  });
});

describe('content negotiation', () => {
  it('serves PartialObjectMetadata and PartialObjectMetadataList without data', async () => {
    const accept =
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
    const list = await t.fetch('GET', '/api/v1/namespaces/paging/secrets', { headers: { Accept: accept } });
    assert.equal(list.json.kind, 'PartialObjectMetadataList');
    assert.equal(list.json.items[0].kind, 'PartialObjectMetadata');
    assert.ok(!list.text.includes('"data"'));
    const one = await t.fetch('GET', '/api/v1/namespaces/paging/secrets/item-00', {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    assert.equal(one.json.kind, 'PartialObjectMetadata');
    assert.equal(one.json.metadata.name, 'item-00');
    const refused = await t.fetch('GET', '/api/v1/namespaces/paging/secrets', {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    assert.equal(refused.status, 406);
  });
  it("serves Tables with each kind's columns", async () => {
    const res = await t.fetch('GET', '/api/v1/namespaces/paging/secrets?limit=2', {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    assert.equal(res.json.kind, 'Table');
    assert.deepEqual(
      res.json.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Type', 'Data', 'Age'],
    );
    assert.equal(res.json.rows.length, 2);
    assert.equal(res.json.rows[0].cells[0], res.json.rows[0].object.metadata.name);
    assert.equal(res.json.rows[0].cells[1], 'Opaque');
    assert.equal(res.json.rows[0].object.kind, 'PartialObjectMetadata');
  });
});

describe('metrics', () => {
  it('counts requests by verb, resource and code, and reports the watch caches', async () => {
    await t.fetch('GET', '/api/v1/namespaces/default/secrets/does-not-exist');
    const res = await t.fetch('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.text, /# TYPE apiserver_request_total counter/);
    assert.match(res.text, /apiserver_request_total\{verb="get",resource="secrets",code="404"\} \d+/);
    assert.match(res.text, /apiserver_request_total\{verb="create",resource="secrets",code="201"\} \d+/);
    assert.match(res.text, /apiserver_watch_cache_ready\{resource="secrets",state="Ready"\} 1/);
    assert.match(
      res.text,
      /apiserver_watch_cache_initialization_duration_seconds\{resource="secrets"\} [\d.e-]+/,
    );
    assert.match(res.text, /apiserver_watch_cache_watchers\{resource="configmaps"\} \d+/);
    assert.match(res.text, /apiserver_watch_cache_events_dispatched_total\{resource="secrets"\} \d+/);
    const anonymous = await t.fetch('GET', '/metrics', { anonymous: true });
    assert.equal(anonymous.status, 401);
  });
});

describe('discovery and OpenAPI', () => {
  it('serves legacy discovery documents', async () => {
    const api = await t.fetch('GET', '/api');
    assert.deepEqual(api.json.versions, ['v1']);
    const v1 = await t.fetch('GET', '/api/v1');
    const names = v1.json.resources.map((r: { name: string }) => r.name);
    for (const r of ['namespaces', 'secrets', 'configmaps', 'events', 'serviceaccounts'])
      assert.ok(names.includes(r), r);
    const apis = await t.fetch('GET', '/apis');
    const groups = apis.json.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes('coordination.k8s.io'));
    assert.ok(groups.includes('apiextensions.k8s.io'));
  });
  it('serves OpenAPI v3 documents that declare fieldValidation on PATCH', async () => {
    const root = await t.fetch('GET', '/openapi/v3');
    const url = root.json.paths['api/v1'].serverRelativeURL;
    const doc = await t.fetch('GET', url);
    const patch = doc.json.paths['/api/v1/namespaces/{namespace}/secrets/{name}'].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'Secret' });
    assert.ok(patch.parameters.some((p: { name: string }) => p.name === 'fieldValidation'));
  });
  it('refuses unknown fields under fieldValidation=Strict', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', {
      body: { metadata: { name: 'strict' }, dat: { a: 'b' } },
    });
    assert.equal(res.status, 400);
    assert.match(res.json.message, /unknown field "dat"/);
  });
});
