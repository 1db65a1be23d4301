import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound, isTimeout, type KubeObject } from '@certkit/apimachinery';
import type { ReadMode, ResourceClient, WatchOptions } from '../client/types.ts';
import { isDeletedFinalStateUnknown } from '../informers/handlers.ts';
import { type Cluster, startCluster, until } from '@certkit/testenv/apiserver/cluster';
import { silentLogger } from '../log.ts';
import { Cache, type CacheOptions, type KindResolver } from './cache.ts';
import { ErrResourceNotCached } from './errors.ts';
import type { CacheConfigOptions } from './options.ts';

/**
 * controller-runtime's cache behaviour checklist (pkg/cache/cache_test.go) against the real embedded API server. The
 * fixture maps upstream's onto the kinds this server has: Pods are Secrets (restartPolicy becomes the
 * Secret `type`, a selectable field), Services are ConfigMaps, Nodes are Namespaces.
 */

const NS1 = 'test-namespace-1';
const NS2 = 'test-namespace-2';
const NS3 = 'test-namespace-3';
const NEVER = 'test/never';
const ALWAYS = 'test/always';
const ON_FAILURE = 'test/on-failure';

const pods: { name: string; namespace: string; type: string; common?: boolean }[] = [
  { name: 'test-pod-1', namespace: NS1, type: NEVER },
  { name: 'test-pod-2', namespace: NS2, type: ALWAYS },
  { name: 'test-pod-3', namespace: NS2, type: ON_FAILURE, common: true },
  { name: 'test-pod-4', namespace: NS3, type: NEVER, common: true },
  { name: 'test-pod-5', namespace: NS1, type: NEVER },
  { name: 'test-pod-6', namespace: NS2, type: ALWAYS },
];
const ALL_PODS = pods.map((p) => p.name);

function podSecret(name: string, namespace: string, type: string, common = false): KubeObject {
  const labels: Record<string, string> = { 'test-label': name };
  if (common) labels['common-label'] = 'common';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name, labels },
    type,
    data: { k: 'dg==' },
  };
}

let cluster: Cluster;
const controllers: AbortController[] = [];

/** Records the watch and list requests informers make, to prove which scopes they watch. */
interface Observed {
  resolver: KindResolver;
  requests: { kind: string; namespace: string | undefined; options: WatchOptions }[];
}

function observed(): Observed {
  const requests: Observed['requests'] = [];
  const resolver: KindResolver = {
    async forKind(apiVersion: string, kind: string, mode?: ReadMode): Promise<ResourceClient> {
      const inner = await cluster.client.forKind(apiVersion, kind, mode);
      return new Proxy(inner, {
        get(target, prop, receiver) {
          if (prop === 'watch' || prop === 'listEach') {
            return (namespace: string | undefined, options: WatchOptions, ...rest: unknown[]) => {
              requests.push({ kind, namespace, options });
              return (target[prop] as (...a: unknown[]) => unknown).call(target, namespace, options, ...rest);
            };
          }
          return Reflect.get(target, prop, receiver);
        },
      });
    },
  };
  return { resolver, requests };
}

async function newCache(options: Partial<CacheOptions> = {}, start = true): Promise<Cache> {
  const cache = await Cache.create({ client: cluster.client, log: silentLogger, ...options });
  if (start) {
    const controller = new AbortController();
    controllers.push(controller);
    void cache.start(controller.signal);
  }
  return cache;
}

const names = (items: KubeObject[]) => items.map((o) => o.metadata?.name ?? '').sort();

before(async () => {
  cluster = await startCluster();
  for (const name of [NS1, NS2, NS3]) {
    await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  await cluster.create(
    ...pods.map((p) => podSecret(p.name, p.namespace, p.type, p.common)),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'kubernetes' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: NS1, name: 'test-service' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: NS2, name: 'test-service' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: NS1, name: 'test-serviceaccount' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: NS2, name: 'test-serviceaccount' } },
  );
});

after(async () => {
  for (const c of controllers) c.abort();
  await cluster?.close();
});

// -------------------------------------------------------------------------------------------------------
// §3.1 / §3.2 / §3.3: the reader, under upstream's three CacheTest configurations, for full and metadata reads

const readerConfigs: { name: string; options: CacheConfigOptions; cachedPods: string[] }[] = [
  { name: 'Options{}', options: {}, cachedPods: ALL_PODS },
  {
    name: 'DefaultNamespaces{"": ns1 by field selector, ns2, default}',
    options: {
      defaultNamespaces: { '': { fieldSelector: `metadata.namespace=${NS1}` }, [NS2]: {}, default: {} },
    },
    cachedPods: ALL_PODS.filter((p) => p !== 'test-pod-4'),
  },
  {
    name: 'DefaultUnsafeDisableDeepCopy',
    options: { defaultUnsafeDisableDeepCopy: true },
    cachedPods: ALL_PODS,
  },
];

for (const config of readerConfigs) {
  for (const mode of ['full', 'metadata'] as const) {
    const unsafe = config.options.defaultUnsafeDisableDeepCopy === true;
    describe(`Cache as a Reader [${config.name}] with ${mode} objects`, () => {
      let cache: Cache;
      before(async () => {
        cache = await newCache(config.options);
      });

      it("should be able to list objects that haven't been watched previously", async () => {
        const list = await cache.list('v1', 'ConfigMap', { mode });
        assert.ok(
          list.items.some((o) => o.metadata?.namespace === 'default' && o.metadata.name === 'kubernetes'),
        );
      });

      it("should be able to get objects that haven't been watched previously", async () => {
        const cm = await cache.get('v1', 'ConfigMap', { namespace: 'default', name: 'kubernetes' }, { mode });
        assert.equal(cm.metadata?.name, 'kubernetes');
      });

      it('should support filtering by labels in a single namespace', async () => {
        const list = await cache.list('v1', 'Secret', {
          mode,
          namespace: NS2,
          labelSelector: 'test-label=test-pod-2',
        });
        assert.deepEqual(names(list.items), ['test-pod-2']);
      });

      it('should support filtering by labels from multiple namespaces', async () => {
        await cluster.create(podSecret('test-pod-2', NS1, ALWAYS));
        try {
          await until(
            async () =>
              (await cache.list('v1', 'Secret', { mode, labelSelector: 'test-label=test-pod-2' })).items
                .length === 2,
            'the second test-pod-2',
          );
        } finally {
          await cluster.remove('v1', 'Secret', NS1, 'test-pod-2');
          await until(
            async () =>
              (await cache.list('v1', 'Secret', { mode, labelSelector: 'test-label=test-pod-2' })).items
                .length === 1,
            'its deletion',
          );
        }
      });

      it('should be able to list objects with GVK populated', async () => {
        const list = await cache.list('v1', 'Secret', { mode });
        assert.deepEqual(names(list.items), [...config.cachedPods].sort());
        assert.equal(list.apiVersion, 'v1');
        assert.equal(list.kind, 'SecretList');
        for (const item of list.items) {
          assert.equal(item.apiVersion, 'v1');
          assert.equal(item.kind, 'Secret');
          if (mode === 'metadata') assert.equal(item.data, undefined, 'metadata only');
          else assert.equal(item.type !== undefined, true);
        }
      });

      it('should be able to list objects by namespace', async () => {
        const list = await cache.list('v1', 'Secret', { mode, namespace: NS1 });
        assert.deepEqual(names(list.items), ['test-pod-1', 'test-pod-5']);
      });

      if (!unsafe) {
        it('should deep copy the object unless told otherwise', async () => {
          const key = { namespace: NS1, name: 'test-pod-1' };
          const first = await cache.get('v1', 'Secret', key, { mode });
          first.metadata!.labels!['test-label'] = 'changed';
          const second = await cache.get('v1', 'Secret', key, { mode });
          assert.equal(second.metadata?.labels?.['test-label'], 'test-pod-1');
          assert.notEqual(first, second);
        });
      } else {
        it('should not deep copy the object if UnsafeDisableDeepCopy is enabled (and the shared object is frozen)', async () => {
          const key = { namespace: NS1, name: 'test-pod-1' };
          const first = await cache.get('v1', 'Secret', key, { mode });
          const second = await cache.get('v1', 'Secret', key, { mode });
          assert.equal(first, second, 'the same cached object');
          const listed = (await cache.list('v1', 'Secret', { mode, namespace: NS1 })).items;
          assert.ok(listed.includes(first));
          assert.throws(() => {
            first.metadata!.labels!['test-label'] = 'changed';
          }, TypeError);
        });
      }

      it('should return an error if the object is not found', async () => {
        await assert.rejects(
          cache.get('v1', 'Secret', { namespace: NS1, name: 'unknown' }, { mode }),
          (err) => {
            assert.ok(isNotFound(err));
            assert.equal((err as Error).message, 'Secret "unknown" not found');
            return true;
          },
        );
      });

      it('should return an error if getting object in unwatched namespace', async () => {
        await assert.rejects(
          cache.get('v1', 'Secret', { namespace: 'unknown', name: 'test-pod-2' }, { mode }),
        );
      });

      it('should return an error when context is cancelled', async () => {
        // A kind with no informer yet: its informer cannot sync before the (already aborted) signal.
        await assert.rejects(cache.list('v1', 'Event', { mode, signal: AbortSignal.abort() }), isTimeout);
      });

      it('should set the Limit option and limit number of objects to Limit when List is called', async () => {
        assert.equal((await cache.list('v1', 'Secret', { mode, limit: 3 })).items.length, 3);
      });

      it('should return a limited result set matching the correct label', async () => {
        const list = await cache.list('v1', 'Secret', {
          mode,
          labelSelector: 'common-label=common',
          limit: 1,
        });
        assert.equal(list.items.length, 1);
      });

      it('should return an error if pagination is used', async () => {
        const list = await cache.list('v1', 'Secret', { mode });
        assert.equal(list.metadata.continue, 'continue-not-supported');
        await assert.rejects(cache.list('v1', 'Secret', { mode, continue: list.metadata.continue }), {
          message: 'continue list option is not supported by the cache',
        });
      });

      it('should return an error if the continue list options is set', async () => {
        await assert.rejects(cache.list('v1', 'Secret', { mode, continue: 'xyz' }), {
          message: 'continue list option is not supported by the cache',
        });
      });
    });
  }
}

for (const mode of ['full', 'metadata'] as const) {
  describe(`Cache restricted to namespaces, with ${mode} objects`, () => {
    for (const variant of [
      {
        by: 'by using the per-gvk setting',
        options: { byObject: { 'v1/Secret': { namespaces: { [NS1]: {} } } } },
      },
      { by: 'by using the global DefaultNamespaces setting', options: { defaultNamespaces: { [NS1]: {} } } },
    ]) {
      it(`should be able to restrict cache to a namespace ${variant.by}`, async () => {
        const { resolver, requests } = observed();
        const cache = await newCache({ ...variant.options, client: resolver });
        const informer = await cache.getInformer('v1', 'Secret', { mode });
        assert.equal(informer.hasSynced(), true);
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(names((await cache.list('v1', 'Secret', { mode })).items), [
            'test-pod-1',
            'test-pod-5',
          ]);
        }
        // Cluster-scoped kinds are still listable, and their Get ignores the namespace.
        const namespaces = names((await cache.list('v1', 'Namespace', { mode })).items);
        assert.ok([NS1, NS2, NS3].every((n) => namespaces.includes(n)));
        for (const namespace of ['', 'random']) {
          const ns = await cache.get('v1', 'Namespace', { namespace, name: NS1 }, { mode });
          assert.equal(ns.metadata?.name, NS1);
        }
        // And nothing watched Secrets beyond the one namespace.
        assert.deepEqual(
          [...new Set(requests.filter((r) => r.kind === 'Secret').map((r) => r.namespace))],
          [NS1],
        );
      });
    }

    it('should be able to restrict cache to a namespace for namespaced object and to given selectors for non namespaced object', async () => {
      const cache = await newCache({
        defaultNamespaces: { [NS1]: {} },
        byObject: { 'v1/Namespace': { label: `kubernetes.io/metadata.name=${NS2}` } },
      });
      assert.deepEqual(names((await cache.list('v1', 'Secret', { mode })).items), [
        'test-pod-1',
        'test-pod-5',
      ]);
      await assert.rejects(cache.get('v1', 'Namespace', NS1, { mode }), isNotFound);
      assert.equal((await cache.get('v1', 'Namespace', NS2, { mode })).metadata?.name, NS2);
    });

    it('test multinamespaced cache for cluster scoped resources', async () => {
      const cache = await newCache({ defaultNamespaces: { default: {}, [NS1]: {} } });
      assert.equal(
        (await cache.get('v1', 'Namespace', { namespace: 'default', name: NS3 }, { mode })).metadata?.name,
        NS3,
      );
      const listed = (await cache.list('v1', 'Namespace', { mode })).items;
      const server = await cluster.contents('v1', 'Namespace');
      assert.equal(listed.length, server.size, 'not duplicated per namespace');
    });

    it('reads in namespaces nobody configured fail, and start no cluster-wide watch', async () => {
      const { resolver, requests } = observed();
      const cache = await newCache({ defaultNamespaces: { [NS1]: {}, [NS2]: {} }, client: resolver });
      await assert.rejects(cache.get('v1', 'Secret', { namespace: NS3, name: 'test-pod-4' }, { mode }), {
        message: `unable to get: ${NS3}/test-pod-4 because of unknown namespace for the cache`,
      });
      await assert.rejects(cache.list('v1', 'Secret', { mode, namespace: NS3 }), {
        message: `unable to list: ${NS3} because of unknown namespace for the cache`,
      });
      assert.deepEqual(names((await cache.list('v1', 'Secret', { mode })).items), [
        'test-pod-1',
        'test-pod-2',
        'test-pod-3',
        'test-pod-5',
        'test-pod-6',
      ]);
      const scopes = new Set(requests.filter((r) => r.kind === 'Secret').map((r) => r.namespace ?? ''));
      assert.deepEqual([...scopes].sort(), [NS1, NS2]);
    });

    it('spends a list limit across namespaces', async () => {
      const cache = await newCache({ defaultNamespaces: { [NS1]: {}, [NS2]: {} } });
      const list = await cache.list('v1', 'Secret', { mode, limit: 3 });
      assert.equal(list.items.length, 3);
      assert.equal(list.metadata.continue, 'continue-not-supported');
    });
  });
}

// -------------------------------------------------------------------------------------------------------
// §3.4: the selector table

const selectorCases: { name: string; options: CacheConfigOptions; expected: string[] }[] = [
  { name: 'when selectors are empty it has to inform about all the pods', options: {}, expected: ALL_PODS },
  {
    name: 'type-level field selector matches one pod',
    options: { byObject: { 'v1/Secret': { field: 'metadata.name=test-pod-2' } } },
    expected: ['test-pod-2'],
  },
  {
    name: 'global field selector matches one pod',
    options: { defaultFieldSelector: 'metadata.name=test-pod-2' },
    expected: ['test-pod-2'],
  },
  {
    name: 'type-level field selectors matches multiple pods',
    options: { byObject: { 'v1/Secret': { field: `metadata.namespace=${NS2}` } } },
    expected: ['test-pod-2', 'test-pod-3', 'test-pod-6'],
  },
  {
    name: 'global field selectors matches multiple pods',
    options: { defaultFieldSelector: `metadata.namespace=${NS2}` },
    expected: ['test-pod-2', 'test-pod-3', 'test-pod-6'],
  },
  {
    name: 'type-level label selector matches one pod',
    options: { byObject: { 'v1/Secret': { label: 'test-label=test-pod-4' } } },
    expected: ['test-pod-4'],
  },
  {
    name: 'namespaces configured, type-level label selector matches everything, overrides global selector',
    options: {
      defaultNamespaces: { [NS1]: {} },
      byObject: { 'v1/Secret': { label: '' } },
      defaultLabelSelector: 'does-not=match-anything',
    },
    expected: ['test-pod-1', 'test-pod-5'],
  },
  {
    name: 'namespaces configured, global selector is used',
    options: {
      defaultNamespaces: { [NS2]: {} },
      byObject: { 'v1/Secret': {} },
      defaultLabelSelector: 'common-label=common',
    },
    expected: ['test-pod-3'],
  },
  {
    name: 'global label selector matches one pod',
    options: { defaultLabelSelector: 'test-label=test-pod-4' },
    expected: ['test-pod-4'],
  },
  {
    name: 'type-level label selector matches multiple pods',
    options: { byObject: { 'v1/Secret': { label: 'common-label=common' } } },
    expected: ['test-pod-3', 'test-pod-4'],
  },
  {
    name: 'global label selector matches multiple pods',
    options: { defaultLabelSelector: 'common-label=common' },
    expected: ['test-pod-3', 'test-pod-4'],
  },
  {
    name: 'type-level label and field selector, matches one pod',
    options: {
      byObject: { 'v1/Secret': { label: 'common-label=common', field: `metadata.namespace=${NS2}` } },
    },
    expected: ['test-pod-3'],
  },
  {
    name: 'global label and field selector, matches one pod',
    options: {
      defaultLabelSelector: 'common-label=common',
      defaultFieldSelector: `metadata.namespace=${NS2}`,
    },
    expected: ['test-pod-3'],
  },
  {
    name: 'type-level label selector does not match, no results',
    options: { byObject: { 'v1/Secret': { label: 'new-label=new' } } },
    expected: [],
  },
  {
    name: 'global label selector does not match, no results',
    options: { defaultLabelSelector: 'new-label=new' },
    expected: [],
  },
  {
    name: 'type-level field selector does not match, no results',
    options: { byObject: { 'v1/Secret': { field: 'metadata.namespace=new' } } },
    expected: [],
  },
  {
    name: 'global field selector does not match, no results',
    options: { defaultFieldSelector: 'metadata.namespace=new' },
    expected: [],
  },
  {
    name: 'type-level field selector on namespace matches one pod',
    options: {
      byObject: { 'v1/Secret': { namespaces: { [NS2]: { fieldSelector: 'metadata.name=test-pod-2' } } } },
    },
    expected: ['test-pod-2'],
  },
  {
    name: "type-level field selector on namespace doesn't match",
    options: {
      byObject: {
        'v1/Secret': { namespaces: { [NS2]: { fieldSelector: 'metadata.name=test-pod-doesn-exist' } } },
      },
    },
    expected: [],
  },
  {
    name: 'global field selector on namespace matches one pod',
    options: { defaultNamespaces: { [NS2]: { fieldSelector: 'metadata.name=test-pod-2' } } },
    expected: ['test-pod-2'],
  },
  {
    name: "global field selector on namespace doesn't match",
    options: { defaultNamespaces: { [NS2]: { fieldSelector: 'metadata.name=test-pod-doesn-exist' } } },
    expected: [],
  },
  {
    name: 'type-level label selector on namespace matches one pod',
    options: {
      byObject: { 'v1/Secret': { namespaces: { [NS2]: { labelSelector: 'test-label=test-pod-2' } } } },
    },
    expected: ['test-pod-2'],
  },
  {
    name: "type-level label selector on namespace doesn't match",
    options: {
      byObject: {
        'v1/Secret': { namespaces: { [NS2]: { labelSelector: 'test-label=test-pod-doesn-exist' } } },
      },
    },
    expected: [],
  },
  {
    name: 'global label selector on namespace matches one pod',
    options: { defaultNamespaces: { [NS2]: { labelSelector: 'test-label=test-pod-2' } } },
    expected: ['test-pod-2'],
  },
  {
    name: "global label selector on namespace doesn't match",
    options: { defaultNamespaces: { [NS2]: { labelSelector: 'test-label=test-pod-doesn-exist' } } },
    expected: [],
  },
  {
    name: 'Only NamespaceAll in DefaultNamespaces returns all pods',
    options: { defaultNamespaces: { '': {} } },
    expected: ALL_PODS,
  },
  {
    name: 'Only NamespaceAll in ByObject.Namespaces returns all pods',
    options: { byObject: { 'v1/Secret': { namespaces: { '': {} } } } },
    expected: ALL_PODS,
  },
  {
    name: 'NamespaceAll in DefaultNamespaces creates a cache for all Namespaces that are not in DefaultNamespaces',
    options: { defaultNamespaces: { '': {}, [NS1]: { labelSelector: 'no-present=not-present' } } },
    expected: ['test-pod-2', 'test-pod-3', 'test-pod-4', 'test-pod-6'],
  },
  {
    name: 'NamespaceAll in ByObject.Namespaces creates a cache for all Namespaces that are not in ByObject.Namespaces',
    options: {
      byObject: {
        'v1/Secret': { namespaces: { '': {}, [NS1]: { labelSelector: 'no-present=not-present' } } },
      },
    },
    expected: ['test-pod-2', 'test-pod-3', 'test-pod-4', 'test-pod-6'],
  },
];

describe('Cache with selectors (the selector table)', () => {
  for (const c of selectorCases) {
    it(c.name, async () => {
      const cache = await newCache(c.options);
      for (const mode of ['full', 'metadata'] as const) {
        const list = await cache.list('v1', 'Secret', { mode });
        assert.deepEqual(names(list.items), [...c.expected].sort(), `${mode} list`);
        // Every listed item can also be read with Get.
        for (const item of list.items) {
          const got = await cache.get(
            'v1',
            'Secret',
            { namespace: item.metadata?.namespace, name: item.metadata!.name! },
            { mode },
          );
          assert.equal(got.metadata?.resourceVersion, item.metadata?.resourceVersion);
        }
      }
    });
  }
});

describe('Cache with selectors (per-kind field selector over a global one)', () => {
  it(`Should list serviceaccounts and find exactly one in namespace ${NS1}, and configmaps (services) exactly one in ${NS2}`, async () => {
    const cache = await newCache({
      defaultFieldSelector: `metadata.namespace=${NS2}`,
      byObject: { 'v1/ServiceAccount': { field: `metadata.namespace=${NS1}` } },
    });
    const sas = (await cache.list('v1', 'ServiceAccount')).items;
    // Every namespace also has its `default` ServiceAccount, made by the API server as kube-controller-manager
    // makes it, maybe not yet (envtest, where this case comes from, runs no such controller): that one is left out.
    assert.deepEqual(
      sas
        .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
        .filter((name) => name !== `${NS1}/default`),
      [`${NS1}/test-serviceaccount`],
    );
    const services = (await cache.list('v1', 'ConfigMap')).items;
    assert.deepEqual(
      services.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
      [`${NS2}/test-service`],
    );
  });
});

// -------------------------------------------------------------------------------------------------------
// §3.5: as an Informer

describe('Cache as an Informer', () => {
  it('should error when starting the cache a second time', async () => {
    const cache = await newCache({}, false);
    const controller = new AbortController();
    controllers.push(controller);
    void cache.start(controller.signal);
    await assert.rejects(cache.start(controller.signal), { message: 'informer already started' });
  });

  for (const mode of ['full', 'metadata'] as const) {
    describe(`with ${mode} objects`, () => {
      it('should be able to get informer for the object', async () => {
        const cache = await newCache();
        const informer = await cache.getInformer('v1', 'Secret', { mode });
        assert.equal(informer.hasSynced(), true);
        const added: KubeObject[] = [];
        const registration = informer.addEventHandler({ onAdd: (o) => added.push(o) });
        await registration.synced;
        assert.equal(added.length, ALL_PODS.length);
        const [created] = await cluster.create(podSecret('test-pod-7', NS1, NEVER));
        try {
          await until(() => added.some((o) => o.metadata?.name === 'test-pod-7'), 'the add event');
          const event = added.find((o) => o.metadata?.name === 'test-pod-7')!;
          assert.equal(event.metadata?.resourceVersion, created.metadata?.resourceVersion);
          assert.equal(event.metadata?.uid, created.metadata?.uid);
          assert.deepEqual(event.metadata?.labels, created.metadata?.labels);
          assert.equal(event.kind, 'Secret');
          if (mode === 'full') assert.deepEqual(event.data, created.data);
          else assert.equal(event.data, undefined, 'events carry metadata only');
        } finally {
          await cluster.remove('v1', 'Secret', NS1, 'test-pod-7');
        }
      });

      it('should be able to stop and restart informers', async () => {
        const cache = await newCache();
        const old = await cache.getInformer('v1', 'Secret', { mode });
        await cache.removeInformer('v1', 'Secret', { mode });
        await until(() => old.isStopped(), 'the old informer to stop');
        const fresh = await cache.getInformer('v1', 'Secret', { mode });
        assert.notEqual(fresh, old);
        assert.equal(fresh.hasSynced(), true);
        assert.equal(fresh.isStopped(), false);
      });

      it('should be able to index an object field then retrieve objects by that field', async () => {
        const cache = await newCache({}, false);
        // Metadata-only objects have no `type`; index a label there instead.
        const field = mode === 'full' ? 'type' : 'metadata.labels.test-label';
        await cache.indexField(
          'v1',
          'Secret',
          field,
          (o) => [mode === 'full' ? String(o.type) : (o.metadata?.labels?.['test-label'] ?? '')],
          { mode },
        );
        const controller = new AbortController();
        controllers.push(controller);
        void cache.start(controller.signal);
        assert.equal(await cache.waitForCacheSync(), true);
        const value = mode === 'full' ? ON_FAILURE : 'test-pod-3';
        const list = await cache.list('v1', 'Secret', { mode, fieldSelector: `${field}=${value}` });
        assert.deepEqual(names(list.items), ['test-pod-3']);
        assert.equal(list.kind, 'SecretList');
        assert.equal(list.items[0].apiVersion, 'v1');
        assert.equal(list.items[0].kind, 'Secret');
        const inNamespace = await cache.list('v1', 'Secret', {
          mode,
          namespace: NS1,
          fieldSelector: `${field}=${value}`,
        });
        assert.deepEqual(inNamespace.items, []);
      });

      it('should allow for get informer to be cancelled', async () => {
        const cache = await newCache();
        await assert.rejects(
          cache.getInformer('v1', 'Event', { mode, signal: AbortSignal.abort() }),
          isTimeout,
        );
      });
    });
  }

  it('should be able not to change indexer values after indexing cluster-scope objects', async () => {
    const cache = await newCache({}, false);
    const values = ['a', 'b', 'c'];
    await cache.indexField('v1', 'Namespace', 'fixedValues', () => values);
    const controller = new AbortController();
    controllers.push(controller);
    void cache.start(controller.signal);
    await cache.waitForCacheSync();
    const list = await cache.list('v1', 'Namespace', { fieldSelector: 'fixedValues=a' });
    assert.ok(list.items.length > 0);
    assert.deepEqual(values, ['a', 'b', 'c']);
  });

  it('should be able to matching fields with multiple indexes', async () => {
    const cache = await newCache({}, false);
    await cache.indexField('v1', 'Secret', 'indexByLabel', (o) => [
      o.metadata?.labels?.['common-label'] ?? '',
    ]);
    await cache.indexField('v1', 'Secret', 'indexByPolicy', (o) => [String(o.type)]);
    const controller = new AbortController();
    controllers.push(controller);
    void cache.start(controller.signal);
    await cache.waitForCacheSync();
    assert.equal(
      (await cache.list('v1', 'Secret', { fieldSelector: 'indexByLabel=common' })).items.length,
      2,
    );
    assert.equal(
      (await cache.list('v1', 'Secret', { fieldSelector: `indexByPolicy=${NEVER}` })).items.length,
      3,
    );
    const both = await cache.list('v1', 'Secret', {
      fieldSelector: `indexByLabel=common,indexByPolicy=${NEVER}`,
    });
    assert.deepEqual(names(both.items), ['test-pod-4']);
  });

  it('field selectors need an index and exact matches', async () => {
    const cache = await newCache();
    await assert.rejects(cache.list('v1', 'Secret', { fieldSelector: 'metadata.name=test-pod-1' }), {
      message: 'Index with name field:metadata.name does not exist',
    });
    await assert.rejects(cache.list('v1', 'Secret', { fieldSelector: 'type!=x' }), {
      message: 'non-exact field matches are not supported by the cache',
    });
    await cache.indexField('v1', 'Secret', 'type', (o) => [String(o.type)]);
    await assert.rejects(cache.list('v1', 'Secret', { fieldSelector: `type=${NEVER},unindexed=x` }), {
      message: 'index with name field:unindexed does not exist',
    });
  });

  for (const via of ['ListOptions', 'GetOptions'] as const) {
    it(`UnsafeDisableDeepCopy with ${via} returns the cached object, frozen so it cannot be changed`, async () => {
      const cache = await newCache();
      const read = async () =>
        via === 'GetOptions'
          ? cache.get('v1', 'Secret', { namespace: NS1, name: 'test-pod-1' }, { unsafeDisableDeepCopy: true })
          : (
              await cache.list('v1', 'Secret', {
                namespace: NS1,
                labelSelector: 'test-label=test-pod-1',
                unsafeDisableDeepCopy: true,
              })
            ).items[0];
      const first = await read();
      assert.equal(await read(), first);
      assert.throws(() => {
        first.metadata!.labels!['test-label'] = 'changed';
      }, TypeError);
      const copy = await cache.get('v1', 'Secret', { namespace: NS1, name: 'test-pod-1' });
      assert.equal(copy.metadata?.labels?.['test-label'], 'test-pod-1');
    });
  }

  it('hands relist deletions to handlers as DeletedFinalStateUnknown tombstones', async () => {
    // Covered with exact control in shared-informer.test.ts; here only the exported predicate's shape.
    assert.equal(isDeletedFinalStateUnknown({ key: 'ns/x', obj: undefined }), true);
  });
});

// -------------------------------------------------------------------------------------------------------
// §3.6: other suites

describe('Cache with ReaderFailOnMissingInformer', () => {
  it("should not be able to list or get objects that haven't been watched previously", async () => {
    const cache = await newCache({ readerFailOnMissingInformer: true });
    await assert.rejects(cache.list('v1', 'ConfigMap'), ErrResourceNotCached);
    await assert.rejects(
      cache.get('v1', 'ConfigMap', { namespace: 'default', name: 'kubernetes' }),
      (err) => {
        assert.ok(err instanceof ErrResourceNotCached);
        assert.equal((err as Error).message, '/v1, Kind=ConfigMap is not cached');
        return true;
      },
    );
  });

  it('should be able to list and get objects that are configured to be watched', async () => {
    const cache = await newCache({ readerFailOnMissingInformer: true });
    await cache.getInformer('v1', 'ConfigMap');
    const list = await cache.list('v1', 'ConfigMap');
    assert.ok(list.items.some((o) => o.metadata?.name === 'kubernetes'));
    assert.equal(
      (await cache.get('v1', 'ConfigMap', { namespace: 'default', name: 'kubernetes' })).metadata?.name,
      'kubernetes',
    );
  });
});

describe('Cache with transformers', () => {
  const annotate = (value: string) => (obj: KubeObject) => {
    const metadata = obj.metadata ?? (obj.metadata = {});
    metadata.annotations = { ...metadata.annotations, transformed: value };
    return obj;
  };

  for (const mode of ['full', 'metadata'] as const) {
    it(`applies explicit ByObject transformers and the default one otherwise (${mode})`, async () => {
      const cache = await newCache({
        defaultTransform: annotate('default'),
        byObject: { 'v1/Secret': { transform: annotate('explicit') } },
      });
      const secrets = (await cache.list('v1', 'Secret', { mode })).items;
      assert.ok(
        secrets.length > 0 && secrets.every((o) => o.metadata?.annotations?.transformed === 'explicit'),
      );
      const cm = await cache.get('v1', 'ConfigMap', { namespace: 'default', name: 'kubernetes' }, { mode });
      assert.equal(cm.metadata?.annotations?.transformed, 'default');
    });
  }

  it('strips managedFields when no transform is configured', async () => {
    const cache = await newCache();
    const secret = await cache.get('v1', 'Secret', { namespace: NS1, name: 'test-pod-1' });
    assert.equal(secret.metadata?.managedFields, undefined);
  });
});

describe('Cache informers deliver deletes', () => {
  it('delivers the final state of deleted objects', async () => {
    const cache = await newCache();
    const informer = await cache.getInformer('v1', 'Secret');
    const deleted: string[] = [];
    informer.addEventHandler({
      onDelete: (o) =>
        deleted.push(
          isDeletedFinalStateUnknown(o)
            ? `tombstone:${o.key}`
            : `${o.metadata?.namespace}/${o.metadata?.name}`,
        ),
    });
    await cluster.create(podSecret('short-lived', NS3, NEVER));
    await cluster.remove('v1', 'Secret', NS3, 'short-lived');
    await until(() => deleted.includes(`${NS3}/short-lived`), 'the delete event');
  });
});
