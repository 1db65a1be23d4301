import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import type { ReadMode, ResourceRef } from '../client/types.ts';
import { SharedInformerFactory, stripManagedFields } from './factory.ts';
import { silentLogger } from '../log.ts';
import { eventually } from '@certkit/testenv/eventually';
import { FakeResourceClient } from '@certkit/testenv/fake/resource-client';

const secrets: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  namespaced: true,
};

/** A client source that hands out one fake per (resource, mode), sharing the same data. */
function source() {
  const clients = new Map<string, FakeResourceClient>();
  return {
    clients,
    resource(ref: ResourceRef, mode: ReadMode) {
      const key = `${ref.resource}|${mode}`;
      let client = clients.get(key);
      if (!client) clients.set(key, (client = new FakeResourceClient({ ref, mode })));
      return client;
    },
  };
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function signal(): AbortSignal {
  const c = new AbortController();
  controllers.push(c);
  return c.signal;
}

describe('SharedInformerFactory', () => {
  it('returns the same informer for the same key and different ones otherwise', () => {
    const factory = new SharedInformerFactory({ client: source(), log: silentLogger });
    const a = factory.informerFor(secrets, { namespace: 'ns', labelSelector: 'x=y' });
    assert.equal(factory.informerFor(secrets, { namespace: 'ns', labelSelector: 'x=y' }), a);
    assert.equal(factory.informerFor(secrets, { namespace: 'ns', labelSelector: 'x=y', mode: 'full' }), a);
    assert.notEqual(
      factory.informerFor(secrets, { namespace: 'ns', labelSelector: 'x=y', mode: 'metadata' }),
      a,
    );
    assert.notEqual(factory.informerFor(secrets, { namespace: 'other', labelSelector: 'x=y' }), a);
    assert.notEqual(factory.informerFor(secrets, { namespace: 'ns' }), a);
    assert.notEqual(
      factory.informerFor(secrets, { namespace: 'ns', labelSelector: 'x=y', fieldSelector: 'type=a' }),
      a,
    );
    assert.equal(
      factory.metadataInformer(secrets, { namespace: 'ns', labelSelector: 'x=y' }).client.mode,
      'metadata',
    );
    assert.equal(factory.informers().length, 5);
  });

  it('starts all informers, and later ones at once', async () => {
    const src = source();
    const factory = new SharedInformerFactory({ client: src, log: silentLogger });
    const first = factory.informerFor(secrets);
    assert.equal(first.isStarted(), false);
    factory.start(signal());
    assert.equal(first.isStarted(), true);
    const later = factory.metadataInformer(secrets);
    assert.equal(later.isStarted(), true);
    assert.equal(await factory.waitForCacheSync(), true);
  });

  it('strips managedFields by default; a request can replace the transform', async () => {
    const src = source();
    const factory = new SharedInformerFactory({ client: src, log: silentLogger });
    factory.start(signal());
    const full = src.resource(secrets, 'full');
    full.put({ metadata: { namespace: 'ns', name: 'a', managedFields: [{ manager: 'kubectl' }] } });
    const stripped = factory.informerFor(secrets);
    const kept = factory.informerFor(secrets, { namespace: 'ns', transform: (o) => o });
    await factory.waitForCacheSync();
    assert.equal(stripped.getStore().get('ns/a')!.metadata?.managedFields, undefined);
    assert.equal(kept.getStore().get('ns/a')!.metadata?.managedFields?.length, 1);
  });

  it('remove() stops an informer and the next request gets a fresh one', async () => {
    const factory = new SharedInformerFactory({ client: source(), log: silentLogger });
    factory.start(signal());
    const old = factory.informerFor(secrets);
    await old.waitForSync();
    factory.remove(old);
    await eventually(() => old.isStopped(), 'stopped');
    const fresh = factory.informerFor(secrets);
    assert.notEqual(fresh, old);
    assert.equal(await fresh.waitForSync(), true);
    assert.equal(fresh.isStopped(), false);
  });

  it('stopped() resolves once every informer ended after the signal aborted', async () => {
    const factory = new SharedInformerFactory({ client: source(), log: silentLogger });
    const c = new AbortController();
    factory.start(c.signal);
    const a = factory.informerFor(secrets);
    const b = factory.metadataInformer(secrets);
    await factory.waitForCacheSync();
    c.abort();
    await factory.stopped();
    assert.ok(a.isStopped() && b.isStopped());
  });
});

describe('stripManagedFields', () => {
  it('strips managed fields and is idempotent', () => {
    const obj: KubeObject = { metadata: { name: 'a', managedFields: [{ manager: 'm' }] } };
    assert.equal(stripManagedFields(obj), obj);
    assert.equal(obj.metadata?.managedFields, undefined);
    assert.deepEqual(stripManagedFields(obj), { metadata: { name: 'a' } });
  });

  it('does not trip over an unexpected object', () => {
    const odd = { kind: 'NotAnObject' } as KubeObject;
    assert.equal(stripManagedFields(odd), odd);
    assert.equal(stripManagedFields(null as unknown as KubeObject), null);
  });
});
