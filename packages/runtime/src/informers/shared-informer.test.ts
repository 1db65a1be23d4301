import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { type KubeObject, newExpired } from '@certkit/apimachinery';
import {
  type DeletedFinalStateUnknown,
  deletionHandlingKey,
  isDeletedFinalStateUnknown,
  type ResourceEventHandler,
} from './handlers.ts';
import { silentLogger } from '../log.ts';
import { SharedInformer, type SharedInformerOptions } from './shared-informer.ts';
import { eventually } from '@certkit/testenv/eventually';
import { FakeResourceClient } from '@certkit/testenv/fake/resource-client';

const cm = (name: string, data: Record<string, string> = {}, namespace = 'ns'): KubeObject => ({
  metadata: { namespace, name },
  data,
});

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function informerFor(client: FakeResourceClient, extra: Partial<SharedInformerOptions> = {}) {
  const informer = new SharedInformer({
    client,
    backoff: { initialMs: 5, capMs: 20, jitter: 0 },
    log: silentLogger,
    ...extra,
  });
  const controller = new AbortController();
  controllers.push(controller);
  return { informer, controller, run: () => informer.run(controller.signal) };
}

/** Records every notification as a string, for order-sensitive assertions. */
function recorder(): { events: string[]; handler: ResourceEventHandler } {
  const events: string[] = [];
  const name = (o: KubeObject | DeletedFinalStateUnknown) =>
    isDeletedFinalStateUnknown(o) ? `tombstone(${o.key})` : deletionHandlingKey(o);
  return {
    events,
    handler: {
      onAdd: (o, initial) => events.push(`add ${name(o)}${initial ? ' initial' : ''}`),
      onUpdate: (old, o) =>
        events.push(
          old === o
            ? `resync ${name(o)}`
            : `update ${name(o)} ${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`,
        ),
      onDelete: (o) => events.push(`delete ${name(o)}`),
    },
  };
}

describe('SharedInformer', () => {
  it('delivers the initial list as adds and is synced for a handler once they are delivered', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    client.put(cm('b'));
    const { informer, run } = informerFor(client);
    const { events, handler } = recorder();
    const registration = informer.addEventHandler(handler);
    void run();
    assert.equal(await informer.waitForSync(), true);
    await registration.synced;
    assert.equal(registration.hasSynced(), true);
    assert.deepEqual(events.sort(), ['add ns/a initial', 'add ns/b initial']);

    client.put(cm('c'));
    client.put(cm('a', { k: 'v' }));
    client.remove('ns', 'b');
    await eventually(() => events.length === 5, 'live events');
    assert.deepEqual(events.slice(2), ['add ns/c', 'update ns/a 1->4', 'delete ns/b']);
  });

  it('sets apiVersion and kind on stored objects, also for metadata-only reads', async () => {
    const client = new FakeResourceClient({
      mode: 'metadata',
      ref: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
    });
    client.put(cm('a'));
    const { informer, run } = informerFor(client);
    void run();
    await informer.waitForSync();
    const obj = informer.getStore().get('ns/a')!;
    assert.equal(obj.apiVersion, 'apps/v1');
    assert.equal(obj.kind, 'Deployment');
    assert.equal(obj.data, undefined);
  });

  it('gives a late handler the current contents as adds before any later event', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { informer, run } = informerFor(client);
    void run();
    await informer.waitForSync();
    const { events, handler } = recorder();
    const registration = informer.addEventHandler(handler);
    assert.equal(registration.hasSynced(), false, 'not before the adds were delivered');
    client.put(cm('b'));
    await eventually(() => events.length === 2, 'events');
    assert.deepEqual(events, ['add ns/a initial', 'add ns/b']);
    assert.equal(registration.hasSynced(), true);
  });

  it('turns a relist into tombstones, updates and adds (no events for unchanged objects)', async () => {
    const client = new FakeResourceClient();
    client.put(cm('keep'));
    client.put(cm('change'));
    client.put(cm('vanish'));
    const { informer, run } = informerFor(client, { useWatchList: false });
    const { events, handler } = recorder();
    informer.addEventHandler(handler);
    void run();
    await eventually(() => events.length === 3 && client.openWatches.length === 1, 'initial');
    events.length = 0;
    // Changes the watch never sees: the history is gone, so the watch gets a 410 and the informer relists.
    client.breakWatches(Object.assign(new Error('x'), { code: 'ECONNRESET' }));
    client.onWatch = () => newExpired('too old');
    client.put(cm('change', { v: '2' }));
    client.remove('ns', 'vanish');
    client.put(cm('new'));
    client.compact();
    setTimeout(() => (client.onWatch = undefined), 30);
    await eventually(() => events.length === 3, 'relist events');
    assert.deepEqual(events, ['delete tombstone(ns/vanish)', 'update ns/change 2->4', 'add ns/new']);
  });

  it('hands tombstones the last known object', async () => {
    const client = new FakeResourceClient();
    client.put(cm('gone'));
    const { informer, run } = informerFor(client, { useWatchList: false });
    const deleted: (KubeObject | DeletedFinalStateUnknown)[] = [];
    informer.addEventHandler({ onDelete: (o) => deleted.push(o) });
    void run();
    await eventually(() => client.openWatches.length === 1, 'watch');
    client.errorWatches(newExpired('gone').status);
    client.remove('ns', 'gone');
    client.compact();
    await eventually(() => deleted.length === 1, 'tombstone');
    const tombstone = deleted[0];
    assert.ok(isDeletedFinalStateUnknown(tombstone));
    assert.equal(tombstone.key, 'ns/gone');
    assert.equal(tombstone.obj?.metadata?.name, 'gone');
  });

  it('resyncs from the local store as onUpdate(obj, obj), without asking the server', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const { informer, run } = informerFor(client, { resyncPeriodMs: 1000 });
    const { events, handler } = recorder();
    informer.addEventHandler(handler);
    void run();
    await eventually(() => events.some((e) => e.startsWith('resync')), 'resync', 3000);
    assert.equal(client.listCalls.length, 0);
    assert.equal(client.watchCalls.length, 1);
    assert.deepEqual(events.slice(0, 2), ['add ns/a initial', 'resync ns/a']);
  });

  it('clamps handler resync periods as client-go does', () => {
    const client = new FakeResourceClient();
    const { informer } = informerFor(client, { resyncPeriodMs: 5000 });
    const short = informer.addEventHandler({}, 10) as unknown as { resyncPeriodMs: number };
    assert.equal(short.resyncPeriodMs, 1000, 'raised to the 1 s minimum');
    const none = informer.addEventHandler({}, 0) as unknown as { resyncPeriodMs: number };
    assert.equal(none.resyncPeriodMs, 0);
  });

  it('keeps going when a handler throws', async () => {
    const client = new FakeResourceClient();
    const { informer, run } = informerFor(client);
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const { events, handler } = recorder();
    informer.addEventHandler(handler);
    void run();
    await informer.waitForSync();
    client.put(cm('a'));
    client.put(cm('b'));
    await eventually(() => events.length === 2, 'the healthy handler');
    assert.equal(informer.getStore().size, 2);
  });

  it('logs handler failures as errors', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a'));
    const errors: unknown[] = [];
    const { informer, run } = informerFor(client, {
      log: (e) => {
        if (e.level === 'error') errors.push(e);
      },
    });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    void run();
    await eventually(() => errors.length === 1, 'log');
    assert.match(JSON.stringify(errors[0]), /handler bug/);
  });

  it('deep-freezes stored objects when asked, so shared references cannot be changed', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a', { k: 'v' }));
    const { informer, run } = informerFor(client, { freezeObjects: true });
    void run();
    await informer.waitForSync();
    const obj = informer.getStore().get('ns/a')!;
    assert.ok(Object.isFrozen(obj) && Object.isFrozen(obj.metadata) && Object.isFrozen(obj.data));
    assert.throws(() => {
      (obj.data as Record<string, string>).k = 'changed';
    }, TypeError);
  });

  it('adds indexers after start over the existing objects', async () => {
    const client = new FakeResourceClient();
    client.put(cm('a', { color: 'red' }));
    client.put(cm('b', { color: 'blue' }));
    const { informer, run } = informerFor(client);
    void run();
    await informer.waitForSync();
    informer.addIndexers({ color: (o) => [String((o.data as Record<string, string>).color)] });
    assert.deepEqual(
      informer
        .getStore()
        .byIndex('color', 'red')
        .map((o) => o.metadata?.name),
      ['a'],
    );
    assert.throws(() => informer.addIndexers({ color: () => [] }), { message: 'indexer conflict: color' });
  });

  it('stops, reports it, and refuses new handlers afterwards', async () => {
    const client = new FakeResourceClient();
    const { informer, run, controller } = informerFor(client);
    const running = run();
    await informer.waitForSync();
    controller.abort();
    await running;
    assert.equal(informer.isStopped(), true);
    assert.throws(() => informer.addEventHandler({}), /stopped already/);
  });

  it('waitForSync resolves false when its signal aborts first', async () => {
    const client = new FakeResourceClient();
    client.onWatch = () => Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    client.onList = () => Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const { informer, run } = informerFor(client);
    void run();
    assert.equal(await informer.waitForSync(AbortSignal.timeout(50)), false);
    assert.equal(informer.hasSynced(), false);
  });

  it('removed handlers get nothing more', async () => {
    const client = new FakeResourceClient();
    const { informer, run } = informerFor(client);
    const { events, handler } = recorder();
    const registration = informer.addEventHandler(handler);
    void run();
    await informer.waitForSync();
    informer.removeEventHandler(registration);
    informer.removeEventHandler(registration);
    client.put(cm('a'));
    await eventually(() => informer.getStore().size === 1, 'store');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, []);
  });
});
