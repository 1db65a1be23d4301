import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  type KubeObject,
  type PartialObjectMetadata as PartialObjectMetadataShape,
  type Status,
  StatusError,
} from '@certkit/apimachinery';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { configMaps, namespaces } from './builtins.ts';
import { KubeClient } from './kube-client.ts';
import { loadKubeconfig } from './kubeconfig.ts';
import type { ResourceClient, WatchEvent } from './types.ts';

/** CRUD, errors, patches, paging, streamed lists, metadata mode and watches against the real API server. */

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

let t: TestServer;
let kube: KubeClient;
let cms: ResourceClient<ConfigMap>;
const NS = 'rc';

before(async () => {
  t = await startTestServer({ maxHistory: 20 });
  kube = new KubeClient({ ...(await loadKubeconfig({ path: t.kubeconfigPath })), qps: -1 });
  cms = kube.resource<ConfigMap>(configMaps);
  await kube.resource(namespaces).create(undefined, { metadata: { name: NS } });
});
after(async () => {
  kube.close();
  await t.close();
});

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

async function errorOf(promise: Promise<unknown>): Promise<StatusError> {
  const err = await promise.then(
    () => assert.fail('expected a failure'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StatusError, `not a StatusError: ${String(err)}`);
  return err;
}

describe('CRUD', () => {
  it('creates, reads, updates, patches and deletes', async () => {
    const created = await cms.create(NS, cm('crud', { a: '1' }));
    assert.equal(created.metadata?.namespace, NS);
    assert.ok(created.metadata?.uid);
    const got = await cms.get(NS, 'crud');
    assert.deepEqual(got.data, { a: '1' });
    got.data = { a: '2' };
    const updated = await cms.update(got);
    assert.deepEqual(updated.data, { a: '2' });
    assert.notEqual(updated.metadata?.resourceVersion, got.metadata?.resourceVersion);
    await cms.delete(NS, 'crud');
    assert.ok(isNotFound(await errorOf(cms.get(NS, 'crud'))));
    assert.ok(isNotFound(await errorOf(cms.delete(NS, 'crud'))));
  });

  it('answers duplicates with AlreadyExists and stale updates with Conflict', async () => {
    const first = await cms.create(NS, cm('dup'));
    assert.ok(isAlreadyExists(await errorOf(cms.create(NS, cm('dup')))));
    await cms.update({ ...first, data: { b: '1' } });
    const stale = await errorOf(cms.update({ ...first, data: { b: '2' } }));
    assert.ok(isConflict(stale));
    assert.equal(stale.code, 409);
    assert.match(stale.message, /the object has been modified/);
  });

  it('answers invalid objects with 422 Invalid and its causes', async () => {
    const err = await errorOf(cms.create(NS, cm('Not_A_Valid_Name')));
    assert.ok(isInvalid(err));
    assert.equal(err.code, 422);
    assert.ok(err.status.details?.causes?.some((c) => c.field === 'metadata.name'));
  });

  it('honours dryRun and delete preconditions', async () => {
    await cms.create(NS, cm('dry'), { dryRun: true });
    assert.ok(isNotFound(await errorOf(cms.get(NS, 'dry'))));
    const obj = await cms.create(NS, cm('guarded'));
    const wrongUid = await errorOf(cms.delete(NS, 'guarded', { preconditions: { uid: 'not-the-uid' } }));
    assert.ok(isConflict(wrongUid));
    await cms.delete(NS, 'guarded', { preconditions: { uid: obj.metadata?.uid } });
    assert.ok(isNotFound(await errorOf(cms.get(NS, 'guarded'))));
  });

  it('requires a namespace for namespaced resources and ignores it for cluster-scoped ones', async () => {
    await assert.rejects(cms.get(undefined, 'x'), TypeError);
    const ns = await kube.resource(namespaces).get('ignored', NS);
    assert.equal(ns.metadata?.name, NS);
  });
});

describe('patch', () => {
  it('applies merge, JSON and strategic merge patches', async () => {
    await cms.create(NS, cm('patched', { a: '1' }));
    const merged = await cms.patch(NS, 'patched', 'merge', { data: { b: '2' } });
    assert.deepEqual(merged.data, { a: '1', b: '2' });
    const json = await cms.patch(NS, 'patched', 'json', [
      { op: 'remove', path: '/data/a' },
      { op: 'add', path: '/data/c', value: '3' },
    ]);
    assert.deepEqual(json.data, { b: '2', c: '3' });
    const strategic = await cms.patch(NS, 'patched', 'strategic', { metadata: { labels: { s: 'yes' } } });
    assert.equal(strategic.metadata?.labels?.s, 'yes');
  });

  it('applies server-side with a field manager, and takes another manager’s field only with force', async () => {
    const apply = (value: string, manager: string, force?: boolean) =>
      cms.patch(
        NS,
        'applied',
        'apply',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { k: value } },
        { fieldManager: manager, force },
      );
    const created = await apply('1', 'first');
    assert.equal(created.data?.k, '1');
    assert.ok(created.metadata?.managedFields?.some((f) => f.manager === 'first' && f.operation === 'Apply'));
    assert.ok(isConflict(await errorOf(apply('2', 'second'))));
    const forced = await apply('2', 'second', true);
    assert.equal(forced.data?.k, '2');
    assert.deepEqual(
      forced.metadata?.managedFields?.filter((f) => f.operation === 'Apply').map((f) => f.manager),
      ['second'],
    );
  });

  it('patches a subresource', async () => {
    const patched = await kube
      .resource(namespaces)
      .patch(undefined, NS, 'merge', { status: { phase: 'Active' } }, { subresource: 'status' });
    assert.equal((patched.status as { phase: string }).phase, 'Active');
  });

  it('fails with NotFound on a missing object', async () => {
    assert.ok(isNotFound(await errorOf(cms.patch(NS, 'nobody', 'merge', { data: {} }))));
  });
});

describe('list', () => {
  before(async () => {
    for (let i = 0; i < 25; i++)
      await cms.create(NS, cm(`page-${String(i).padStart(2, '0')}`, {}, { set: 'paged' }));
  });

  it('pages with limit and continue', async () => {
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await cms.list(NS, { labelSelector: 'set=paged', limit: 10, continue: cont });
      pages++;
      names.push(...page.items.map((i) => i.metadata!.name!));
      cont = page.metadata.continue;
      assert.ok(page.metadata.resourceVersion);
    } while (cont);
    assert.equal(pages, 3);
    assert.equal(names.length, 25);
    assert.deepEqual(names, [...names].sort());
  });

  it('fills in apiVersion and kind of list items, as watch events carry them', async () => {
    const page = await cms.list(NS, { labelSelector: 'set=paged', limit: 1 });
    assert.equal(page.items[0].apiVersion, 'v1');
    assert.equal(page.items[0].kind, 'ConfigMap');
  });

  it('selects by field', async () => {
    const page = await cms.list(NS, { fieldSelector: 'metadata.name=page-03' });
    assert.deepEqual(
      page.items.map((i) => i.metadata?.name),
      ['page-03'],
    );
  });
});

describe('listEach', () => {
  const BULK_NS = 'bulk';
  const COUNT = 2000;
  before(async () => {
    await kube.resource(namespaces).create(undefined, { metadata: { name: BULK_NS } });
    const names = Array.from({ length: COUNT }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
    const workers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = w; i < names.length; i += 16) await cms.create(BULK_NS, cm(names[i], { i: String(i) }));
    });
    await Promise.all(workers);
  });

  it('decodes 2,000 objects one by one, as list() would', async () => {
    const seen: ConfigMap[] = [];
    const meta = await cms.listEach(BULK_NS, {}, (item) => seen.push(item));
    assert.equal(seen.length, COUNT);
    assert.ok(meta.resourceVersion);
    const whole = await cms.list(BULK_NS, {
      resourceVersion: meta.resourceVersion,
      resourceVersionMatch: 'Exact',
    });
    assert.deepEqual(seen, whole.items);
    assert.equal(seen[1234].data?.i, '1234');
    assert.equal(seen[0].kind, 'ConfigMap');
  });

  it('returns the continue token of a page', async () => {
    let count = 0;
    const first = await cms.listEach(BULK_NS, { limit: 1500 }, () => count++);
    assert.equal(count, 1500);
    assert.ok(first.continue);
    const second = await cms.listEach(BULK_NS, { limit: 1500, continue: first.continue }, () => count++);
    assert.equal(count, COUNT);
    assert.equal(second.continue, undefined);
  });

  it('stops reading when onItem throws', async () => {
    let calls = 0;
    await assert.rejects(
      cms.listEach(BULK_NS, {}, () => {
        if (++calls === 10) throw new Error('enough');
      }),
      /enough/,
    );
    assert.equal(calls, 10);
    // The connection was dropped, not left half-read: the client still works.
    assert.equal((await cms.list(BULK_NS, { limit: 1 })).items.length, 1);
  });

  it('fails with a StatusError before any item', async () => {
    const err = await errorOf(cms.listEach(NS, { labelSelector: '!!bad' }, () => assert.fail('no items')));
    assert.equal(err.code, 400);
  });
});

/** PartialObjectMetadata as a KubeObject (the interface lacks the index signature ResourceClient asks for). */
type PartialObjectMetadata = PartialObjectMetadataShape & KubeObject;

describe('metadata mode', () => {
  it('gets, lists, streams and watches PartialObjectMetadata without data', async () => {
    await cms.create(NS, cm('secretive', { password: 'hunter2' }, { meta: 'yes' }));
    const meta = kube.resource<PartialObjectMetadata>(configMaps, 'metadata');
    assert.equal(meta.mode, 'metadata');
    const one = await meta.get(NS, 'secretive');
    assert.equal(one.kind, 'PartialObjectMetadata');
    assert.equal(one.apiVersion, 'meta.k8s.io/v1');
    assert.equal(one.metadata.labels?.meta, 'yes');
    assert.equal((one as unknown as ConfigMap).data, undefined);

    const list = await meta.list(NS, { labelSelector: 'meta=yes' });
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.deepEqual(
      list.items.map((i) => [i.kind, i.metadata.name, 'data' in i]),
      [['PartialObjectMetadata', 'secretive', false]],
    );

    const streamed: PartialObjectMetadata[] = [];
    await meta.listEach(NS, { labelSelector: 'meta=yes' }, (i) => streamed.push(i));
    assert.deepEqual(streamed, list.items);

    const watch = await meta.watch(NS, {
      labelSelector: 'meta=yes',
      resourceVersion: list.metadata.resourceVersion,
    });
    await cms.patch(NS, 'secretive', 'merge', { data: { password: 'hunter3' } });
    for await (const event of watch) {
      assert.equal(event.type, 'MODIFIED');
      assert.equal(event.object.kind, 'PartialObjectMetadata');
      assert.equal((event.object as unknown as ConfigMap).data, undefined);
      break;
    }
  });
});

describe('watch', () => {
  it('delivers ADDED, MODIFIED and DELETED in order', async () => {
    const rv = (await cms.list(NS, { limit: 1 })).metadata.resourceVersion;
    const controller = new AbortController();
    const watch = await cms.watch(NS, {
      resourceVersion: rv,
      fieldSelector: 'metadata.name=watched',
      signal: controller.signal,
    });
    await cms.create(NS, cm('watched'));
    await cms.patch(NS, 'watched', 'merge', { data: { x: '1' } });
    await cms.delete(NS, 'watched');
    const events: WatchEvent<ConfigMap>[] = [];
    for await (const event of watch) {
      events.push(event);
      if (events.length === 3) controller.abort();
    }
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    assert.equal((events[1].object as ConfigMap).data?.x, '1');
  });

  it('delivers a 410 as an ERROR event, then ends', async () => {
    const rv = (await cms.list(NS, { limit: 1 })).metadata.resourceVersion;
    // The watch cache keeps 20 events here; 25 writes push rv out of its history.
    for (let i = 0; i < 25; i++) await cms.create(NS, cm(`churn-${i}`));
    const events: WatchEvent<ConfigMap>[] = [];
    for await (const event of await cms.watch(NS, { resourceVersion: rv })) events.push(event);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'ERROR');
    const status = events[0].object as Status;
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
  });

  it('ends cleanly at timeoutSeconds, with the bookmark asked for', async () => {
    const rv = (await cms.list(NS, { limit: 1 })).metadata.resourceVersion;
    const started = performance.now();
    const events: string[] = [];
    for await (const e of await cms.watch(NS, {
      resourceVersion: rv,
      timeoutSeconds: 2,
      allowWatchBookmarks: true,
    })) {
      events.push(e.type);
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 1900 && elapsed < 5000, `ended after ${elapsed} ms`);
    assert.deepEqual(events, ['BOOKMARK']);
  });

  it('sends initial events and the initial-events-end bookmark', async () => {
    await cms.create(NS, cm('initial', {}, { initial: 'yes' }));
    const controller = new AbortController();
    const watch = await cms.watch(NS, {
      labelSelector: 'initial=yes',
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
      signal: controller.signal,
    });
    const events: WatchEvent<ConfigMap>[] = [];
    for await (const event of watch) {
      events.push(event);
      if (event.type === 'BOOKMARK') controller.abort();
    }
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
    assert.equal(
      (events[1].object as ConfigMap).metadata?.annotations?.['k8s.io/initial-events-end'],
      'true',
    );
  });

  it('ends without error when the consumer breaks out, closing the connection', async () => {
    const watch = await cms.watch(NS, { resourceVersion: '0' });
    let n = 0;
    for await (const _ of watch) {
      if (++n === 2) break;
    }
    assert.equal(n, 2);
    const again = await watch[Symbol.asyncIterator]().next();
    assert.equal(again.done, true);
  });
});
