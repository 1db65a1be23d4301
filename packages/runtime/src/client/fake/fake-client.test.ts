/**
 * The in-memory client's answers, each as the API server gives it: resourceVersions, conflicts, Status errors,
 * the status subresource, selectors, generateName, finalizers, patches and watches; and an informer running
 * on it unchanged.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  isResourceExpired,
  type KubeObject,
  newExpired,
  StatusError,
} from '@certkit/apimachinery';
import type { ResourceRef, WatchEvent } from '../types.ts';
import { SharedInformerFactory } from '../../informers/factory.ts';
import { FakeClient } from './index.ts';

const configMaps: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};
const widgets: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  namespaced: true,
};
const nodes: ResourceRef = { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false };

interface Widget extends KubeObject {
  spec?: { size?: number };
  status?: { phase?: string };
}

const NOW = new Date('2026-03-01T12:00:00Z');

function newClient() {
  return new FakeClient({ statusSubresources: [widgets], now: () => NOW });
}

function configMap(name: string, labels?: Record<string, string>, data?: Record<string, string>): KubeObject {
  return { metadata: { name, ...(labels ? { labels } : {}) }, data };
}

/** The StatusError a call rejected with (fails the test if it resolved). */
async function rejection(call: Promise<unknown>): Promise<StatusError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof StatusError, `a Status error, not ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}

describe('FakeClient', () => {
  it('create fills in the system metadata and answers AlreadyExists for a taken name', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const created = await cms.create('apps', configMap('a'));
    assert.equal(created.metadata?.namespace, 'apps');
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata?.creationTimestamp, '2026-03-01T12:00:00Z');
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.metadata?.resourceVersion, '1');
    assert.equal(created.apiVersion, 'v1');
    assert.equal(created.kind, 'ConfigMap');

    const err = await rejection(cms.create('apps', configMap('a')));
    assert.ok(isAlreadyExists(err));
    assert.equal(err.status.code, 409);
    assert.equal(err.status.message, 'configmaps "a" already exists');
    // The same name in another namespace is another object.
    await cms.create('other', configMap('a'));
  });

  it('create: generateName, a nameless object, a namespace mismatch, a resourceVersion', async () => {
    const cms = newClient().resource(configMaps);
    const generated = await cms.create('apps', { metadata: { generateName: 'web-' } });
    assert.match(generated.metadata?.name ?? '', /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);

    const nameless = await rejection(cms.create('apps', { metadata: {} }));
    assert.ok(isInvalid(nameless));
    assert.equal(nameless.status.details?.causes?.[0]?.field, 'metadata.name');

    const mismatch = await rejection(cms.create('apps', { metadata: { name: 'x', namespace: 'other' } }));
    assert.equal(mismatch.status.code, 400);

    const withVersion = await rejection(
      cms.create('apps', { metadata: { name: 'y', resourceVersion: '5' } }),
    );
    assert.equal(withVersion.status.code, 400);
  });

  it('get and delete of a missing object are NotFound with the resource and name', async () => {
    const widgetsClient = newClient().resource(widgets);
    const err = await rejection(widgetsClient.get('apps', 'gone'));
    assert.ok(isNotFound(err));
    assert.equal(err.status.message, 'widgets.example.com "gone" not found');
    assert.deepEqual(err.status.details, { name: 'gone', group: 'example.com', kind: 'widgets' });
    assert.ok(isNotFound(await rejection(widgetsClient.delete('apps', 'gone'))));
  });

  it('update bumps resourceVersion, and a stale one is a Conflict', async () => {
    const cms = newClient().resource(configMaps);
    const created = await cms.create('apps', configMap('a', undefined, { k: '1' }));
    const updated = await cms.update({ ...created, data: { k: '2' } });
    assert.equal(Number(updated.metadata?.resourceVersion), Number(created.metadata?.resourceVersion) + 1);

    const stale = await rejection(cms.update({ ...created, data: { k: '3' } }));
    assert.ok(isConflict(stale));
    assert.equal(
      stale.status.message,
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    // Without a resourceVersion an update is unconditional.
    const { resourceVersion: _rv, ...metadata } = updated.metadata!;
    assert.deepEqual((await cms.update({ ...updated, metadata, data: { k: '4' } })).data, { k: '4' });
  });

  it('an update that changes nothing writes nothing: same resourceVersion, no action, no event', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const created = await cms.create('apps', configMap('a', undefined, { k: '1' }));
    const writes = client.writes().length;
    const same = await cms.update(created);
    assert.equal(same.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.equal(client.writes().length, writes);
  });

  it('status subresource: status only through it, only status through it, dropped on create', async () => {
    const client = newClient();
    const ws = client.resource<Widget>(widgets);
    const created = await ws.create('apps', {
      metadata: { name: 'w' },
      spec: { size: 1 },
      status: { phase: 'ignored' },
    });
    assert.equal(created.status, undefined, 'status is not set by create');

    const viaMain = await ws.update({ ...created, spec: { size: 2 }, status: { phase: 'ignored' } });
    assert.equal(viaMain.status, undefined, 'the main resource does not write status');
    assert.equal(viaMain.spec?.size, 2);
    assert.equal(viaMain.metadata?.generation, 2, 'a spec change bumps generation');

    const viaStatus = await ws.update(
      { ...viaMain, spec: { size: 99 }, status: { phase: 'Ready' } },
      { subresource: 'status' },
    );
    assert.equal(viaStatus.status?.phase, 'Ready');
    assert.equal(viaStatus.spec?.size, 2, 'the status subresource does not write spec');
    assert.equal(viaStatus.metadata?.generation, 2, 'a status write does not bump generation');

    const last = client.writes().at(-1)!;
    assert.deepEqual(
      {
        verb: last.verb,
        resource: last.resource,
        namespace: last.namespace,
        name: last.name,
        sub: last.subresource,
      },
      { verb: 'update', resource: 'widgets.example.com', namespace: 'apps', name: 'w', sub: 'status' },
    );
    // A resource without a status subresource has none to write.
    const cm = await client.resource(configMaps).create('apps', configMap('c'));
    assert.ok(isNotFound(await rejection(client.resource(configMaps).update(cm, { subresource: 'status' }))));
  });

  it('seeded objects keep their status, and get a uid and resourceVersion', async () => {
    const client = newClient();
    const [seeded] = client.add<Widget>(widgets, {
      metadata: { name: 'w', namespace: 'apps' },
      status: { phase: 'Seeded' },
    });
    assert.equal(seeded.metadata?.resourceVersion, '1');
    assert.ok(seeded.metadata?.uid);
    const read = await client.resource<Widget>(widgets).get('apps', 'w');
    assert.equal(read.status?.phase, 'Seeded');
    assert.equal(read.apiVersion, 'example.com/v1');
    assert.equal(client.writes().length, 0, 'seeding is not an action');
  });

  it('lists by namespace, label and field selector, and pages with continue', async () => {
    const cms = newClient().resource(configMaps);
    await cms.create('a', configMap('one', { app: 'web', tier: 'front' }));
    await cms.create('a', configMap('two', { app: 'web' }));
    await cms.create('b', configMap('three', { app: 'db' }));
    const names = async (namespace: string | undefined, options = {}) =>
      (await cms.list(namespace, options)).items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`);

    assert.deepEqual(await names(undefined), ['a/one', 'a/two', 'b/three']);
    assert.deepEqual(await names('a'), ['a/one', 'a/two']);
    assert.deepEqual(await names(undefined, { labelSelector: 'app=web,tier notin (back)' }), [
      'a/one',
      'a/two',
    ]);
    assert.deepEqual(await names(undefined, { labelSelector: '!tier' }), ['a/two', 'b/three']);
    assert.deepEqual(await names(undefined, { fieldSelector: 'metadata.name=three' }), ['b/three']);

    const first = await cms.list(undefined, { limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.metadata.continue);
    const rest = await cms.list(undefined, { limit: 2, continue: first.metadata.continue });
    assert.deepEqual(
      rest.items.map((i) => i.metadata?.name),
      ['three'],
    );
    assert.equal(rest.metadata.continue, undefined);
    assert.equal(rest.metadata.resourceVersion, first.metadata.resourceVersion);
  });

  it('metadata mode answers PartialObjectMetadata', async () => {
    const client = newClient();
    await client.resource(configMaps).create('apps', configMap('a', { x: 'y' }, { secret: 'value' }));
    const list = await client.resource(configMaps, 'metadata').list('apps');
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.items[0].kind, 'PartialObjectMetadata');
    assert.equal((list.items[0] as { data?: unknown }).data, undefined);
    assert.deepEqual(list.items[0].metadata?.labels, { x: 'y' });
  });

  it('delete with finalizers sets deletionTimestamp; removing the last finalizer deletes', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const created = await cms.create('apps', { metadata: { name: 'f', finalizers: ['example.com/hold'] } });
    await cms.delete('apps', 'f');
    const marked = await cms.get('apps', 'f');
    assert.equal(marked.metadata?.deletionTimestamp, '2026-03-01T12:00:00Z');
    assert.notEqual(marked.metadata?.resourceVersion, created.metadata?.resourceVersion);
    // A second delete changes nothing; an update cannot clear the mark.
    await cms.delete('apps', 'f');
    assert.equal((await cms.get('apps', 'f')).metadata?.resourceVersion, marked.metadata?.resourceVersion);

    await cms.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    assert.ok(isNotFound(await rejection(cms.get('apps', 'f'))));
    assert.deepEqual(
      client.writes().map((a) => a.verb),
      ['create', 'delete', 'update'],
    );
  });

  it('delete preconditions on uid and resourceVersion are Conflicts', async () => {
    const cms = newClient().resource(configMaps);
    const created = await cms.create('apps', configMap('p'));
    assert.ok(isConflict(await rejection(cms.delete('apps', 'p', { preconditions: { uid: 'other' } }))));
    assert.ok(
      isConflict(await rejection(cms.delete('apps', 'p', { preconditions: { resourceVersion: '999' } }))),
    );
    await cms.delete('apps', 'p', { preconditions: { uid: created.metadata?.uid } });
    assert.ok(isNotFound(await rejection(cms.get('apps', 'p'))));
  });

  it('merge and JSON patches; a conditional patch conflicts; strategic merge is refused', async () => {
    const cms = newClient().resource(configMaps);
    const created = await cms.create('apps', configMap('m', { a: '1' }, { k: '1', drop: 'x' }));
    const merged = await cms.patch('apps', 'm', 'merge', { data: { k: '2', drop: null } });
    assert.deepEqual(merged.data, { k: '2' });
    assert.equal(merged.metadata?.uid, created.metadata?.uid);

    const patched = await cms.patch('apps', 'm', 'json', [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
    ]);
    assert.deepEqual(patched.metadata?.labels, { a: '1', b: '2' });

    const failedTest = await rejection(
      cms.patch('apps', 'm', 'json', [{ op: 'test', path: '/data/k', value: 'nope' }]),
    );
    assert.equal(failedTest.status.code, 422);

    const stale = await rejection(
      cms.patch('apps', 'm', 'merge', { metadata: { resourceVersion: created.metadata?.resourceVersion } }),
    );
    assert.ok(isConflict(stale));
    assert.equal((await rejection(cms.patch('apps', 'm', 'strategic', {}))).status.code, 415);
  });

  it('cluster-scoped resources ignore the namespace', async () => {
    const ns = newClient().resource(nodes);
    const created = await ns.create(undefined, { metadata: { name: 'n1' } });
    assert.equal(created.metadata?.namespace, undefined);
    assert.equal((await ns.get(undefined, 'n1')).metadata?.name, 'n1');
  });

  it('watches: from a resourceVersion, with initial events, filtered, ended by the signal', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const before = await cms.create('apps', configMap('before', { app: 'web' }));
    const abort = new AbortController();
    const fromNow = await cms.watch('apps', {
      resourceVersion: before.metadata?.resourceVersion,
      labelSelector: 'app=web',
      signal: abort.signal,
    });
    const initial = await cms.watch('apps', {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
      signal: abort.signal,
    });
    const after = await cms.create('apps', configMap('after', { app: 'web' }));
    await cms.create('apps', configMap('other', { app: 'db' }));
    await cms.delete('apps', 'after');
    abort.abort();

    const collect = async (events: AsyncIterable<WatchEvent>) => {
      const seen: string[] = [];
      for await (const e of events) seen.push(`${e.type} ${(e.object as KubeObject).metadata?.name ?? ''}`);
      return seen;
    };
    assert.deepEqual(await collect(fromNow), ['ADDED after', 'DELETED after']);
    const all = await collect(initial);
    assert.deepEqual(all.slice(0, 2), ['ADDED before', 'BOOKMARK ']);
    assert.deepEqual(all.slice(2), ['ADDED after', 'ADDED other', 'DELETED after']);
    assert.ok(Number(after.metadata?.resourceVersion) > Number(before.metadata?.resourceVersion));
  });

  it('after a compaction, lists, continues and watches from older resourceVersions are 410 Expired', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const first = await cms.create('apps', configMap('a'));
    await cms.create('apps', configMap('b'));
    const page = await cms.list('apps', { limit: 1 });
    assert.ok(page.metadata.continue);
    await cms.create('apps', configMap('c'));
    client.tracker.compact();
    const old = first.metadata?.resourceVersion;
    assert.ok(isResourceExpired(await rejection(cms.watch('apps', { resourceVersion: old }))));
    assert.ok(isResourceExpired(await rejection(cms.list('apps', { resourceVersion: old }))));
    const expired = await rejection(cms.list('apps', { limit: 1, continue: page.metadata.continue }));
    assert.ok(isResourceExpired(expired));
    assert.equal(expired.message, 'The provided continue parameter is too old');
    // The current revision, "0" and a fresh watch-list are still served.
    const current = String(client.tracker.revision);
    assert.equal((await cms.list('apps', { resourceVersion: current })).items.length, 3);
    assert.equal((await cms.list('apps', { resourceVersion: '0' })).items.length, 3);
    await cms.watch('apps', { resourceVersion: current, signal: AbortSignal.abort() });
  });

  it('a client without the WatchList feature answers a watch-list 422 and a plain watch as usual', async () => {
    const cms = new FakeClient({ watchList: false }).resource(configMaps);
    const refused = await rejection(cms.watch('apps', { sendInitialEvents: true, resourceVersion: '0' }));
    assert.ok(isInvalid(refused));
    assert.equal(refused.status.details?.causes?.[0]?.field, 'sendInitialEvents');
    await cms.watch('apps', { resourceVersion: '0', signal: AbortSignal.abort() });
  });

  it('the tracker sends bookmarks to the watches that asked, and ends, errors or breaks open watches', async () => {
    const client = newClient();
    const cms = client.resource(configMaps);
    const next = async (events: AsyncIterable<WatchEvent>) => {
      const iterator = events[Symbol.asyncIterator]();
      const { value, done } = await iterator.next();
      return done ? 'end' : `${value.type} ${(value.object as KubeObject).metadata?.resourceVersion ?? ''}`;
    };
    const from = String(client.tracker.revision);
    const withBookmarks = await cms.watch('apps', { resourceVersion: from, allowWatchBookmarks: true });
    const without = await cms.watch('apps', { resourceVersion: from });
    assert.equal(client.tracker.openWatches().length, 2);
    client.tracker.bookmarkWatches();
    await cms.create('apps', configMap('a'));
    const revision = String(client.tracker.revision);
    assert.equal(await next(withBookmarks), `BOOKMARK ${from}`);
    assert.equal(await next(without), `ADDED ${revision}`);
    // A progress bookmark does not claim to end initial events.
    client.tracker.bookmarkWatches();
    for await (const e of withBookmarks) {
      if (e.type === 'BOOKMARK') {
        assert.equal((e.object as KubeObject).metadata?.annotations, undefined);
        break;
      }
    }

    const ended = await cms.watch('apps', { resourceVersion: revision });
    const ends = ended[Symbol.asyncIterator]();
    client.tracker.endWatches();
    assert.deepEqual(await ends.next(), { value: undefined, done: true });
    assert.equal(client.tracker.openWatches().length, 0);

    const errors = await cms.watch('apps', { resourceVersion: revision });
    client.tracker.errorWatches(newExpired('too old resource version').status);
    const events: WatchEvent[] = [];
    for await (const e of errors) events.push(e);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ERROR'],
    );
    assert.equal((events[0].object as { code?: number }).code, 410);

    const breaks = await cms.watch('apps', { resourceVersion: revision });
    client.tracker.breakWatches(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await assert.rejects(next(breaks), /ECONNRESET/);
  });

  it('an informer runs on it unchanged: lists, watches and sees writes', async () => {
    const client = newClient();
    client.add(configMaps, { metadata: { name: 'seeded', namespace: 'apps' } });
    const factory = new SharedInformerFactory({ client });
    const informer = factory.informerFor<KubeObject>(configMaps, {});
    const abort = new AbortController();
    factory.start(abort.signal);
    assert.ok(await factory.waitForCacheSync(abort.signal));
    assert.deepEqual(
      informer
        .getStore()
        .list()
        .map((o) => o.metadata?.name),
      ['seeded'],
    );
    const added = new Promise<string | undefined>((resolve) =>
      informer.addEventHandler({ onAdd: (o) => o.metadata?.name === 'new' && resolve(o.metadata.name) }),
    );
    await client.resource(configMaps).create('apps', configMap('new'));
    assert.equal(await added, 'new');
    abort.abort();
    await factory.stopped();
  });
});
