/**
 * The split Secret cache against the real embedded API server: what is cached where, what each get() costs
 * in API requests, how relabelling moves Secrets between the caches, and that unlabelled Secrets are never
 * listed in full.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type ClientConfig,
  KubeClient,
  type LogEntry,
  loadKubeconfig,
  type ReadMode,
  type RequestInfo,
  type ResourceClient,
  type ResourceRef,
  SharedInformerFactory,
  silentLogger,
} from '@certkit/runtime';
// Tests may start the API server; the certificates package itself never imports it.
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import { isStrippedSecret } from '../controllers/secret-facts.ts';
import { encodePrivateKey } from '../pki/index.ts';
import type { CachedSecret } from '../controllers/context.ts';
import { isSecretStub, stubOf } from './metadata-stub.ts';
import { FAO_LABEL, LABELLED_SELECTOR, UNLABELLED_SELECTOR } from './selectors.ts';
import {
  createSecretCache,
  type FullSecret,
  type SecretCache,
  type SecretClientSource,
  type SecretSource,
} from './split-cache.ts';
import { eventually } from '@certkit/testenv/eventually';

// ---------------------------------------------------------------------------------------------------------
// Harness

/** A ResourceClient call as the informers and the getter made it (the request hook has no URL). */
interface Call {
  method: 'get' | 'list' | 'listEach' | 'watch';
  resource: string;
  mode: ReadMode;
  namespace: string | undefined;
  labelSelector: string | undefined;
}

/** Wraps KubeClient.resource so every read names its mode, namespace and label selector. */
function recordingSource(client: KubeClient, calls: Call[]): SecretClientSource {
  return {
    resource<T extends KubeObject = KubeObject>(
      ref: ResourceRef,
      mode: ReadMode = 'full',
    ): ResourceClient<T> {
      const inner = client.resource<T>(ref, mode);
      const note = (method: Call['method'], namespace: string | undefined, labelSelector?: string) =>
        calls.push({ method, resource: ref.resource, mode, namespace, labelSelector });
      return {
        ref: inner.ref,
        mode: inner.mode,
        get: (ns, name, o) => (note('get', ns), inner.get(ns, name, o)),
        list: (ns, o) => (note('list', ns, o?.labelSelector), inner.list(ns, o)),
        listEach: (ns, o, onItem) => (note('listEach', ns, o.labelSelector), inner.listEach(ns, o, onItem)),
        watch: (ns, o) => (note('watch', ns, o.labelSelector), inner.watch(ns, o)),
        create: (ns, obj, o) => inner.create(ns, obj, o),
        update: (obj, o) => inner.update(obj, o),
        patch: (ns, name, type, patch, o) => inner.patch(ns, name, type, patch, o),
        delete: (ns, name, o) => inner.delete(ns, name, o),
      };
    },
  };
}

class Tally {
  readonly counts: Record<SecretSource, number> = { cache: 0, live: 0, notfound: 0 };
  hit(source: SecretSource): void {
    this.counts[source]++;
  }
}

/** One cache with its own client, so its requests are the only ones counted. */
interface Harness {
  cache: SecretCache;
  factory: SharedInformerFactory;
  requests: RequestInfo[];
  calls: Call[];
  logs: LogEntry[];
  tally: Tally;
  stop(): Promise<void>;
}

async function startCache(config: ClientConfig, options: { filtered: boolean; namespace?: string }) {
  const requests: RequestInfo[] = [];
  const calls: Call[] = [];
  const logs: LogEntry[] = [];
  const tally = new Tally();
  const client = new KubeClient({ ...config, qps: -1, onRequest: (info) => requests.push(info) });
  const factory = new SharedInformerFactory({ client, log: silentLogger });
  const cache = createSecretCache(factory, recordingSource(client, calls), {
    ...options,
    metrics: tally,
    log: (entry) => logs.push(entry),
  });
  const controller = new AbortController();
  factory.start(controller.signal);
  assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(10_000)), true, 'caches synced');
  assert.equal(cache.hasSynced(), true);
  const harness: Harness = {
    cache,
    factory,
    requests,
    calls,
    logs,
    tally,
    async stop() {
      controller.abort();
      await factory.stopped();
      client.close();
    },
  };
  return harness;
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  await eventually(condition, what, timeoutMs);
}

/** Runs fn and returns the requests it made. */
async function requestsDuring<T>(
  h: Harness,
  fn: () => Promise<T>,
): Promise<{ result: T; made: RequestInfo[] }> {
  const before = h.requests.length;
  const result = await fn();
  return { result, made: h.requests.slice(before) };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(
  namespace: string,
  name: string,
  labels?: Record<string, string>,
  extra: object = {},
): FullSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    data: { 'tls.key': b64(`key of ${name}`) },
    ...extra,
  };
}

const inFull = (h: Harness, ns: string, name: string) => h.cache.full.getStore().has(`${ns}/${name}`);
const inMetadata = (h: Harness, ns: string, name: string) =>
  h.cache.metadata?.getStore().has(`${ns}/${name}`) ?? false;

// ---------------------------------------------------------------------------------------------------------

let t: TestServer;
let config: ClientConfig;
let admin: KubeClient;
let secretsApi: ResourceClient<FullSecret>;

before(async () => {
  t = await startTestServer();
  config = await loadKubeconfig({ path: t.kubeconfigPath });
  admin = new KubeClient({ ...config, qps: -1 });
  secretsApi = admin.resource<FullSecret>(builtins.secrets);
  for (const name of ['split', 'other', 'unfiltered']) {
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name } });
  }
});

after(async () => {
  admin?.close();
  await t?.close();
});

describe('split Secret cache (filtered)', () => {
  const ns = 'split';
  let h: Harness;

  before(async () => {
    h = await startCache(config, { filtered: true });
  });

  after(async () => {
    await h?.stop();
  });

  it('builds a full informer for labelled Secrets and a metadata informer for the rest', () => {
    assert.equal(h.cache.full.labelSelector, LABELLED_SELECTOR);
    assert.equal(h.cache.full.client.mode, 'full');
    assert.equal(h.cache.metadata?.labelSelector, UNLABELLED_SELECTOR);
    assert.equal(h.cache.metadata?.client.mode, 'metadata');
    assert.equal(h.factory.informers().length, 2);
  });

  it('serves a labelled Secret from the cache with zero requests, as the shared frozen object', async () => {
    await secretsApi.create(ns, secret(ns, 'web-tls', { [FAO_LABEL]: 'true' }));
    await waitFor('web-tls in the full cache', () => inFull(h, ns, 'web-tls'));
    assert.equal(inMetadata(h, ns, 'web-tls'), false);

    const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'web-tls'));
    assert.deepEqual(made, []);
    assert.equal(result?.data?.['tls.key'], b64('key of web-tls'));
    assert.equal(h.tally.counts.cache, 1);

    // No copy on read: the same object until the Secret changes (what per-object parse memos rely on), and
    // deep-frozen, so a caller that forgets to copy before changing it fails loudly instead of corrupting the cache.
    assert.equal(await h.cache.get(ns, 'web-tls'), result);
    assert.equal(Object.isFrozen(result!.data), true);
    assert.throws(() => {
      result!.data!['tls.key'] = 'changed';
    }, TypeError);
    assert.equal(h.cache.full.getStore().get(`${ns}/web-tls`)?.data?.['tls.key'], b64('key of web-tls'));
  });

  it('costs exactly one live GET per get of an unlabelled Secret', async () => {
    await secretsApi.create(ns, secret(ns, 'ca-key'));
    await waitFor('ca-key in the metadata cache', () => inMetadata(h, ns, 'ca-key'));
    assert.equal(inFull(h, ns, 'ca-key'), false);

    for (let i = 1; i <= 2; i++) {
      const live = h.tally.counts.live;
      const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'ca-key'));
      assert.deepEqual(
        made.map((r) => [r.verb, r.resource, r.code]),
        [['get', 'secrets', 200]],
        `get #${i}`,
      );
      assert.equal(result?.data?.['tls.key'], b64('key of ca-key'));
      assert.equal(h.tally.counts.live, live + 1);
    }
  });

  it('holds a labelled certificate Secret as facts, and reads its bytes live once per version', async () => {
    const ca = await rootCa();
    const leaf = await issue({
      spec: { dnsNames: ['facts.example'] },
      issuer: { certPem: ca.certPem, key: ca.key },
    });
    const data = { 'tls.crt': b64(leaf.certPem), 'tls.key': b64(encodePrivateKey(leaf.key, 'PKCS8')) };
    await secretsApi.create(ns, secret(ns, 'facts-tls', { [FAO_LABEL]: 'true' }, { data }));
    await waitFor('facts-tls in the full cache', () => inFull(h, ns, 'facts-tls'));

    const { result: cached, made: none } = await requestsDuring(h, () => h.cache.get(ns, 'facts-tls'));
    assert.deepEqual(none, []);
    assert.ok(isStrippedSecret(cached), 'tls.crt and tls.key held as facts (docs/adr/1140)');

    for (let i = 1; i <= 2; i++) {
      const { result, made } = await requestsDuring(h, () => h.cache.getWithData(ns, 'facts-tls'));
      assert.deepEqual(
        made.map((r) => [r.verb, r.resource, r.code]),
        i === 1 ? [['get', 'secrets', 200]] : [],
      );
      assert.deepEqual(result?.data, data, `getWithData #${i}`);
    }
    // A new version in the cache: read again.
    const current = await secretsApi.get(ns, 'facts-tls');
    await secretsApi.update({
      ...current,
      metadata: { ...current.metadata, annotations: { edited: 'yes' } },
    });
    await waitFor(
      'the edit in the cache',
      () => h.cache.full.getStore().get(`${ns}/facts-tls`)?.metadata?.annotations?.edited === 'yes',
    );
    const { result, made } = await requestsDuring(h, () => h.cache.getWithData(ns, 'facts-tls'));
    assert.deepEqual(
      made.map((r) => [r.verb, r.resource, r.code]),
      [['get', 'secrets', 200]],
    );
    assert.equal(result?.metadata?.annotations?.edited, 'yes');
    assert.deepEqual(result?.data, data);
    // A Secret the cache keeps whole is served from it, as by get.
    const { made: whole } = await requestsDuring(h, () => h.cache.getWithData(ns, 'web-tls'));
    assert.deepEqual(whole, []);
  });

  it('answers undefined without a request for a Secret in neither cache', async () => {
    const notfound = h.tally.counts.notfound;
    const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'never-created'));
    assert.equal(result, undefined);
    assert.deepEqual(made, []);
    assert.equal(h.tally.counts.notfound, notfound + 1);
  });

  it('caches a Secret labelled fao=false nowhere, and answers NotFound for it', async () => {
    await secretsApi.create(ns, secret(ns, 'fao-false', { [FAO_LABEL]: 'false' }));
    // Created after it: once both markers arrived, each watch has passed the fao=false Secret's event.
    await secretsApi.create(ns, secret(ns, 'marker-labelled', { [FAO_LABEL]: 'true' }));
    await secretsApi.create(ns, secret(ns, 'marker-unlabelled'));
    await waitFor(
      'markers',
      () => inFull(h, ns, 'marker-labelled') && inMetadata(h, ns, 'marker-unlabelled'),
    );

    assert.equal(inFull(h, ns, 'fao-false'), false);
    assert.equal(inMetadata(h, ns, 'fao-false'), false);
    const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'fao-false'));
    assert.equal(result, undefined);
    assert.deepEqual(made, []);
  });

  it('answers undefined once a Secret is deleted', async () => {
    await secretsApi.create(ns, secret(ns, 'gone-labelled', { [FAO_LABEL]: 'true' }));
    await secretsApi.create(ns, secret(ns, 'gone-unlabelled'));
    await waitFor('both', () => inFull(h, ns, 'gone-labelled') && inMetadata(h, ns, 'gone-unlabelled'));
    await secretsApi.delete(ns, 'gone-labelled');
    await secretsApi.delete(ns, 'gone-unlabelled');
    await waitFor(
      'both gone',
      () => !inFull(h, ns, 'gone-labelled') && !inMetadata(h, ns, 'gone-unlabelled'),
    );

    for (const name of ['gone-labelled', 'gone-unlabelled']) {
      const { result, made } = await requestsDuring(h, () => h.cache.get(ns, name));
      assert.equal(result, undefined, name);
      assert.deepEqual(made, [], name);
    }
  });

  it('answers undefined when the live GET finds the Secret deleted before the cache heard of it', async () => {
    // The window between a deletion and its watch event, made deterministic: a stub the server has no Secret for.
    const store = h.cache.metadata!.getStore();
    store.add(stubOf({ namespace: ns, name: 'deleted-meanwhile', uid: 'x', resourceVersion: '1' }));
    try {
      const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'deleted-meanwhile'));
      assert.equal(result, undefined);
      assert.deepEqual(
        made.map((r) => [r.verb, r.code]),
        [['get', 404]],
      );
    } finally {
      store.delete(`${ns}/deleted-meanwhile`);
    }
  });

  it('goes live and logs a stale cache when a Secret is in both caches', async () => {
    await waitFor('web-tls', () => inFull(h, ns, 'web-tls'));
    const store = h.cache.metadata!.getStore();
    store.add(stubOf({ namespace: ns, name: 'web-tls', uid: 'x', resourceVersion: '1' }));
    try {
      const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'web-tls'));
      assert.equal(result?.data?.['tls.key'], b64('key of web-tls'));
      assert.deepEqual(
        made.map((r) => [r.verb, r.code]),
        [['get', 200]],
      );
      assert.ok(h.logs.some((e) => e.msg === 'possible internal error: stale cache' && e.name === 'web-tls'));
    } finally {
      store.delete(`${ns}/web-tls`);
    }
  });

  it('moves a relabelled Secret between the caches, and the getter follows', async () => {
    const events: string[] = [];
    const recordOn = (label: string) => ({
      onAdd: (o: KubeObject) => o.metadata?.name === 'moving' && events.push(`${label} add`),
      onUpdate: (_: KubeObject, o: KubeObject) =>
        o.metadata?.name === 'moving' && events.push(`${label} update`),
      onDelete: (o: KubeObject | { key: string }) =>
        ('key' in o ? o.key : `${ns}/${o.metadata?.name}`) === `${ns}/moving` &&
        events.push(`${label} delete`),
    });
    const fullReg = h.cache.full.addEventHandler(recordOn('full'));
    const metaReg = h.cache.metadata!.addEventHandler(recordOn('metadata'));
    try {
      await secretsApi.create(ns, secret(ns, 'moving'));
      await waitFor('metadata add', () => events.includes('metadata add'));
      assert.deepEqual(events, ['metadata add']);

      await secretsApi.patch(ns, 'moving', 'merge', { metadata: { labels: { [FAO_LABEL]: 'true' } } });
      await waitFor('move to full', () => events.length === 3);
      assert.deepEqual(events.slice(1).sort(), ['full add', 'metadata delete']);
      assert.equal(inFull(h, ns, 'moving'), true);
      assert.equal(inMetadata(h, ns, 'moving'), false);
      const labelled = await requestsDuring(h, () => h.cache.get(ns, 'moving'));
      assert.deepEqual(labelled.made, []);
      assert.equal(labelled.result?.metadata?.labels?.[FAO_LABEL], 'true');

      await secretsApi.patch(ns, 'moving', 'merge', { metadata: { labels: { [FAO_LABEL]: null } } });
      await waitFor('move back to metadata', () => events.length === 5);
      assert.deepEqual(events.slice(3).sort(), ['full delete', 'metadata add']);
      assert.equal(inFull(h, ns, 'moving'), false);
      assert.equal(inMetadata(h, ns, 'moving'), true);
      const unlabelled = await requestsDuring(h, () => h.cache.get(ns, 'moving'));
      assert.deepEqual(
        unlabelled.made.map((r) => r.verb),
        ['get'],
      );
      assert.equal(unlabelled.result?.data?.['tls.key'], b64('key of moving'));
    } finally {
      h.cache.full.removeEventHandler(fullReg);
      h.cache.metadata!.removeEventHandler(metaReg);
    }
  });

  it('keeps no data, labels, annotations or managedFields in the metadata cache', async () => {
    await secretsApi.create(
      ns,
      secret(
        ns,
        'helm-release',
        { owner: 'helm', name: 'big' },
        {
          metadata: {
            name: 'helm-release',
            namespace: ns,
            labels: { owner: 'helm' },
            annotations: { 'meta.helm.sh/release-name': 'annotation-value' },
          },
          data: { release: b64('release-payload') },
          type: 'helm.sh/release.v1',
        },
      ),
    );
    await waitFor('helm-release', () => inMetadata(h, ns, 'helm-release'));

    const stub = h.cache.metadata!.getStore().get(`${ns}/helm-release`)!;
    assert.equal(isSecretStub(stub), true);
    assert.deepEqual(Object.keys(stub).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.equal(stub.metadata.name, 'helm-release');
    assert.equal(stub.metadata.namespace, ns);
    assert.ok(stub.metadata.uid);
    assert.ok(stub.metadata.resourceVersion);
    const text = JSON.stringify(stub);
    for (const leak of [
      'release-payload',
      b64('release-payload'),
      'annotation-value',
      'helm.sh/release.v1',
      'owner',
    ]) {
      assert.equal(text.includes(leak), false, `metadata cache holds ${leak}`);
    }
    for (const cached of h.cache.metadata!.getStore().list()) {
      assert.equal(isSecretStub(cached), true);
      for (const field of ['labels', 'annotations', 'managedFields'] as const) {
        assert.equal(cached.metadata[field], undefined, `${cached.metadata.name} ${field}`);
      }
      assert.equal('data' in cached, false);
    }
  });

  it('lists labelled Secrets from the full cache only, with zero requests', async () => {
    const next = 'cert-manager.io/next-private-key';
    await secretsApi.create(ns, secret(ns, 'next-key', { [FAO_LABEL]: 'true', [next]: 'true' }));
    await secretsApi.create(ns, secret(ns, 'next-key-unlabelled', { [next]: 'true' }));
    await secretsApi.create(
      'other',
      secret('other', 'next-key-elsewhere', { [FAO_LABEL]: 'true', [next]: 'true' }),
    );
    await waitFor('keys', () => inFull(h, ns, 'next-key') && inMetadata(h, ns, 'next-key-unlabelled'));
    await waitFor('elsewhere', () => inFull(h, 'other', 'next-key-elsewhere'));

    const before = h.requests.length;
    const listed = h.cache.listLabelled(ns, `${next}=true`);
    assert.deepEqual(
      listed.map((s) => s.metadata?.name),
      ['next-key'],
    );
    assert.equal(listed[0].data?.['tls.key'], b64('key of next-key'));
    assert.deepEqual(
      h.cache
        .listLabelled('', `${next}=true`)
        .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`)
        .sort(),
      ['other/next-key-elsewhere', 'split/next-key'],
    );
    assert.equal(h.requests.length, before);
  });

  it('lists the labelled Secrets an owner controls, through an index, with zero requests', async () => {
    const next = 'cert-manager.io/next-private-key';
    // Real owners: the API server's garbage collector deletes dependents whose owner does not exist.
    const configMaps = admin.resource(builtins.configMaps);
    const owner = await configMaps.create(ns, { metadata: { name: 'owner-a', namespace: ns } });
    const other = await configMaps.create(ns, { metadata: { name: 'owner-b', namespace: ns } });
    const create = (name: string, labels: Record<string, string>, by: KubeObject, controller = true) => {
      const base = secret(ns, name, labels);
      const ref = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: by.metadata!.name!,
        uid: by.metadata!.uid!,
        controller,
      };
      return secretsApi.create(ns, { ...base, metadata: { ...base.metadata, ownerReferences: [ref] } });
    };
    const labelled = { [FAO_LABEL]: 'true', [next]: 'true' };
    await create('owned-key', labelled, owner);
    await create('owned-unselected', { [FAO_LABEL]: 'true' }, owner);
    await create('owned-not-controller', labelled, owner, false);
    await create('owned-by-other', labelled, other);
    const names = ['owned-key', 'owned-unselected', 'owned-not-controller', 'owned-by-other'];
    await waitFor('owned', () => names.every((n) => inFull(h, ns, n)));

    const before = h.requests.length;
    assert.deepEqual(
      h.cache.listLabelledControlledBy(owner, `${next}=true`).map((s) => s.metadata?.name),
      ['owned-key'],
    );
    assert.deepEqual(
      h.cache.listLabelledControlledBy(other, '').map((s) => s.metadata?.name),
      ['owned-by-other'],
    );
    assert.equal(h.requests.length, before);
  });

  it('hands onChange handlers full Secrets and metadata stubs (what makes Issuers react to CA Secrets)', async () => {
    const seen: CachedSecret[] = [];
    h.cache.onChange((s) => {
      if (s.metadata?.name?.startsWith('watched-')) seen.push(s);
    });
    await secretsApi.create(ns, secret(ns, 'watched-ca'));
    await secretsApi.create(ns, secret(ns, 'watched-tls', { [FAO_LABEL]: 'true' }));
    await waitFor('both events', () => seen.length === 2);

    const stub = seen.find((s) => s.metadata?.name === 'watched-ca')!;
    assert.equal(isSecretStub(stub), true);
    assert.equal(stub.metadata?.namespace, ns);
    assert.equal('data' in stub, false);
    const full = seen.find((s) => s.metadata?.name === 'watched-tls')!;
    assert.equal(isSecretStub(full), false);
    assert.equal((full as FullSecret).data?.['tls.key'], b64('key of watched-tls'));

    await secretsApi.patch(ns, 'watched-ca', 'merge', { data: { 'tls.crt': b64('rotated') } });
    await secretsApi.delete(ns, 'watched-ca');
    await waitFor('update and delete', () => seen.length === 4);
    assert.ok(seen.slice(2).every((s) => isSecretStub(s) && s.metadata?.name === 'watched-ca'));
  });

  it('never lists or watches unlabelled Secrets in full', () => {
    const reads = h.calls.filter((c) => c.resource === 'secrets' && c.method !== 'get');
    assert.ok(reads.some((c) => c.mode === 'full'));
    assert.ok(reads.some((c) => c.mode === 'metadata'));
    for (const call of reads) {
      const expected = call.mode === 'full' ? LABELLED_SELECTOR : UNLABELLED_SELECTOR;
      assert.equal(call.labelSelector, expected, JSON.stringify(call));
    }
    // Every list and watch that reached the server went through the recorded clients.
    const sent = h.requests.filter(
      (r) => r.resource === 'secrets' && (r.verb === 'list' || r.verb === 'watch'),
    );
    assert.equal(sent.length, reads.length);
    // And the only GETs were the getter's, each of an unlabelled (or injected stale) Secret.
    assert.ok(h.calls.filter((c) => c.method === 'get').every((c) => c.mode === 'full'));
  });

  it('watches only its namespace when given one', async () => {
    const scoped = await startCache(config, { filtered: true, namespace: 'other' });
    try {
      assert.equal(inFull(scoped, 'other', 'next-key-elsewhere'), true);
      assert.equal(scoped.cache.full.getStore().list().length, 1);
      assert.equal(
        scoped.cache
          .metadata!.getStore()
          .list()
          .every((s) => s.metadata.namespace === 'other'),
        true,
      );
      const { result, made } = await requestsDuring(scoped, () => scoped.cache.get(ns, 'web-tls'));
      assert.equal(result, undefined);
      assert.deepEqual(made, []);
      assert.ok(scoped.calls.every((c) => c.namespace === 'other'));
    } finally {
      await scoped.stop();
    }
  });
});

describe('Secret cache with filtered caching off', () => {
  const ns = 'unfiltered';
  let h: Harness;

  before(async () => {
    await secretsApi.create(ns, secret(ns, 'plain'));
    await secretsApi.create(ns, secret(ns, 'labelled', { [FAO_LABEL]: 'true' }));
    h = await startCache(config, { filtered: false });
  });

  after(async () => {
    await h?.stop();
  });

  it('uses one full informer over all Secrets', () => {
    assert.equal(h.cache.metadata, undefined);
    assert.deepEqual(h.factory.informers(), [h.cache.full]);
    assert.equal(h.cache.full.labelSelector, '');
    assert.equal(h.cache.full.client.mode, 'full');
  });

  it('serves unlabelled Secrets in full from the cache and never goes live', async () => {
    const { result, made } = await requestsDuring(h, () => h.cache.get(ns, 'plain'));
    assert.deepEqual(made, []);
    assert.equal(result?.data?.['tls.key'], b64('key of plain'));
    assert.equal((await h.cache.get(ns, 'missing')) ?? 'none', 'none');

    await secretsApi.create(ns, secret(ns, 'late', { [FAO_LABEL]: 'false' }));
    await waitFor('late', () => inFull(h, ns, 'late'));
    assert.equal((await h.cache.get(ns, 'late'))?.metadata?.name, 'late');

    assert.deepEqual(h.tally.counts, { cache: 2, live: 0, notfound: 1 });
    assert.equal(h.requests.filter((r) => r.verb === 'get').length, 0);
  });

  it('still lists only labelled Secrets, as in filtered mode', () => {
    assert.deepEqual(
      h.cache.listLabelled(ns, '').map((s) => s.metadata?.name),
      ['labelled'],
    );
  });

  it('hands onChange handlers full Secrets for unlabelled Secrets', async () => {
    const seen: CachedSecret[] = [];
    h.cache.onChange((s) => s.metadata?.name === 'plain-2' && seen.push(s));
    await secretsApi.create(ns, secret(ns, 'plain-2'));
    await waitFor('event', () => seen.length === 1);
    assert.equal(isSecretStub(seen[0]), false);
    assert.equal((seen[0] as FullSecret).data?.['tls.key'], b64('key of plain-2'));
  });
});
