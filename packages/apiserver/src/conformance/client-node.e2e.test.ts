import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Lease,
  V1MicroTime,
  type V1Secret,
  Watch,
} from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/**
 * Conformance with `@kubernetes/client-node` 2.x, a client nobody here wrote: its generated typed APIs, its
 * Watch and its informer (ListWatch) against the real server over HTTPS with the kubeconfig the server writes.
 */

let t: TestServer;
let kc: KubeConfig;
let core: CoreV1Api;
let coordination: CoordinationV1Api;
let customObjects: CustomObjectsApi;
let apiextensions: ApiextensionsV1Api;

before(async () => {
  t = await startTestServer();
  kc = new KubeConfig();
  kc.loadFromFile(t.kubeconfigPath);
  core = kc.makeApiClient(CoreV1Api);
  coordination = kc.makeApiClient(CoordinationV1Api);
  customObjects = kc.makeApiClient(CustomObjectsApi);
  apiextensions = kc.makeApiClient(ApiextensionsV1Api);
});
after(async () => {
  await t.close();
});

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

async function namespace(name: string): Promise<string> {
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

/** Awaits a call that must fail with an ApiException of `code`; returns its body parsed as a Status. */
async function apiError(call: Promise<unknown>, code: number): Promise<StatusBody> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
    assert.equal(err.code, code, `HTTP code; body: ${String(err.body)}`);
    const body =
      typeof err.body === 'string' ? (JSON.parse(err.body) as StatusBody) : (err.body as StatusBody);
    assert.equal(body.kind, 'Status');
    assert.equal(body.apiVersion, 'v1');
    assert.equal(body.status, 'Failure');
    assert.equal(body.code, code);
    return body;
  }
  assert.fail(`expected HTTP ${code}, but the call succeeded`);
}

describe('Secrets and ConfigMaps through CoreV1Api', () => {
  it('creates, reads, replaces, merge-patches and deletes a Secret', async () => {
    const ns = await namespace('billing');
    const created = await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'stripe-api-key', labels: { app: 'billing' } },
        type: 'Opaque',
        data: { 'api-key': b64('sk_test_123'), 'webhook-secret': b64('whsec_abc') },
      },
    });
    assert.equal(created.metadata?.name, 'stripe-api-key');
    assert.equal(created.metadata?.namespace, ns);
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);

    const read = await core.readNamespacedSecret({ name: 'stripe-api-key', namespace: ns });
    assert.equal(unb64(read.data?.['api-key']), 'sk_test_123');
    assert.equal(read.type, 'Opaque');
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

    read.data = { ...read.data, 'api-key': b64('sk_test_456') };
    const replaced = await core.replaceNamespacedSecret({
      name: 'stripe-api-key',
      namespace: ns,
      body: read,
    });
    assert.equal(unb64(replaced.data?.['api-key']), 'sk_test_456');
    assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.equal(replaced.metadata?.uid, created.metadata?.uid);

    const patched = await core.patchNamespacedSecret(
      {
        name: 'stripe-api-key',
        namespace: ns,
        body: { metadata: { labels: { rotated: 'true' } }, data: { 'webhook-secret': null } },
      },
      mergePatch(),
    );
    assert.deepEqual(patched.metadata?.labels, { app: 'billing', rotated: 'true' });
    assert.deepEqual(Object.keys(patched.data ?? {}), ['api-key'], 'a null in a merge patch removes the key');
    assert.equal(unb64(patched.data?.['api-key']), 'sk_test_456');

    await core.deleteNamespacedSecret({ name: 'stripe-api-key', namespace: ns });
    const gone = await apiError(core.readNamespacedSecret({ name: 'stripe-api-key', namespace: ns }), 404);
    assert.equal(gone.reason, 'NotFound');
  });

  it('creates, reads, replaces, merge-patches and deletes a ConfigMap', async () => {
    const ns = await namespace('storefront');
    const body: V1ConfigMap = {
      metadata: { name: 'nginx-config', annotations: { 'owner.example.com/team': 'web' } },
      data: { 'nginx.conf': 'worker_processes 2;', 'mime.types': 'text/html html;' },
    };
    const created = await core.createNamespacedConfigMap({ namespace: ns, body });
    assert.equal(created.data?.['nginx.conf'], 'worker_processes 2;');

    const read = await core.readNamespacedConfigMap({ name: 'nginx-config', namespace: ns });
    read.data = { ...read.data, 'nginx.conf': 'worker_processes 4;' };
    const replaced = await core.replaceNamespacedConfigMap({
      name: 'nginx-config',
      namespace: ns,
      body: read,
    });
    assert.equal(replaced.data?.['nginx.conf'], 'worker_processes 4;');

    const patched = await core.patchNamespacedConfigMap(
      {
        name: 'nginx-config',
        namespace: ns,
        body: { data: { 'mime.types': null, 'gzip.conf': 'gzip on;' } },
      },
      mergePatch(),
    );
    assert.deepEqual(patched.data, { 'nginx.conf': 'worker_processes 4;', 'gzip.conf': 'gzip on;' });
    assert.equal(patched.metadata?.annotations?.['owner.example.com/team'], 'web');

    const fresh = await core.readNamespacedConfigMap({ name: 'nginx-config', namespace: ns });
    assert.deepEqual(fresh.data, patched.data);
    assert.equal(fresh.metadata?.resourceVersion, patched.metadata?.resourceVersion);

    await core.deleteNamespacedConfigMap({ name: 'nginx-config', namespace: ns });
    await apiError(core.readNamespacedConfigMap({ name: 'nginx-config', namespace: ns }), 404);
  });

  it('server-side applies a ConfigMap: creates, updates, and answers another manager with a 409 conflict', async () => {
    const ns = await namespace('applied');
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    const config = (data: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'feature-flags', namespace: ns },
      data,
    });
    const created = await core.patchNamespacedConfigMap(
      {
        name: 'feature-flags',
        namespace: ns,
        body: config({ search: 'on' }),
        fieldManager: 'flags-operator',
      },
      apply,
    );
    assert.deepEqual(created.data, { search: 'on' });
    assert.deepEqual(
      created.metadata?.managedFields?.map((e) => [e.manager, e.operation]),
      [['flags-operator', 'Apply']],
    );

    const updated = await core.patchNamespacedConfigMap(
      {
        name: 'feature-flags',
        namespace: ns,
        body: config({ search: 'off', beta: 'on' }),
        fieldManager: 'flags-operator',
      },
      apply,
    );
    assert.deepEqual(updated.data, { search: 'off', beta: 'on' });

    const conflict = await apiError(
      core.patchNamespacedConfigMap(
        { name: 'feature-flags', namespace: ns, body: config({ beta: 'off' }), fieldManager: 'someone-else' },
        apply,
      ),
      409,
    );
    assert.equal(conflict.reason, 'Conflict');
    assert.match(conflict.message, /conflict with "flags-operator"/);
    const forced = await core.patchNamespacedConfigMap(
      {
        name: 'feature-flags',
        namespace: ns,
        body: config({ beta: 'off' }),
        fieldManager: 'someone-else',
        force: true,
      },
      apply,
    );
    assert.deepEqual(forced.data, { search: 'off', beta: 'off' });
  });

  it('surfaces 404 NotFound as an ApiException with a Status body', async () => {
    const ns = await namespace('inventory');
    const status = await apiError(
      core.readNamespacedConfigMap({ name: 'warehouse-map', namespace: ns }),
      404,
    );
    assert.equal(status.reason, 'NotFound');
    assert.equal(status.message, 'configmaps "warehouse-map" not found');
    assert.equal(status.details?.name, 'warehouse-map');
    assert.equal(status.details?.kind, 'configmaps');

    const patchMissing = await apiError(
      core.patchNamespacedSecret({ name: 'no-such-secret', namespace: ns, body: { data: {} } }, mergePatch()),
      404,
    );
    assert.equal(patchMissing.message, 'secrets "no-such-secret" not found');
    await apiError(core.deleteNamespacedSecret({ name: 'no-such-secret', namespace: ns }), 404);
  });

  it('surfaces 409 AlreadyExists and Conflict as ApiExceptions with Status bodies', async () => {
    const ns = await namespace('payments');
    const body: V1Secret = { metadata: { name: 'db-credentials' }, stringData: { password: 'hunter2' } };
    const first = await core.createNamespacedSecret({ namespace: ns, body });
    assert.equal(unb64(first.data?.password), 'hunter2', 'stringData is merged into data');
    assert.equal(first.stringData, undefined);

    const exists = await apiError(core.createNamespacedSecret({ namespace: ns, body }), 409);
    assert.equal(exists.reason, 'AlreadyExists');
    assert.equal(exists.message, 'secrets "db-credentials" already exists');
    assert.equal(exists.details?.kind, 'secrets');

    await core.patchNamespacedSecret(
      { name: 'db-credentials', namespace: ns, body: { metadata: { labels: { rotated: 'yes' } } } },
      mergePatch(),
    );
    // `first` carries the old resourceVersion now.
    first.data = { password: b64('correct-horse') };
    const conflict = await apiError(
      core.replaceNamespacedSecret({ name: 'db-credentials', namespace: ns, body: first }),
      409,
    );
    assert.equal(conflict.reason, 'Conflict');
    assert.equal(
      conflict.message,
      'Operation cannot be fulfilled on secrets "db-credentials": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('pages a list with limit and _continue across 3 pages, seeing every object exactly once', async () => {
    const ns = await namespace('paging-orders');
    const names = Array.from({ length: 25 }, (_, i) => `order-${String(i).padStart(3, '0')}`);
    await Promise.all(
      names.map((name) =>
        core.createNamespacedSecret({
          namespace: ns,
          body: { metadata: { name }, stringData: { id: name } },
        }),
      ),
    );
    const seen: string[] = [];
    const pageSizes: number[] = [];
    const listRvs = new Set<string>();
    let cont: string | undefined;
    do {
      const page = await core.listNamespacedSecret({ namespace: ns, limit: 10, _continue: cont });
      pageSizes.push(page.items.length);
      listRvs.add(page.metadata?.resourceVersion ?? '');
      for (const item of page.items) seen.push(item.metadata?.name ?? '');
      cont = page.metadata?._continue || undefined;
      if (pageSizes.length === 1) assert.equal(page.metadata?.remainingItemCount, 15);
      assert.ok(pageSizes.length <= 3, 'more than 3 pages');
    } while (cont);
    assert.deepEqual(pageSizes, [10, 10, 5]);
    assert.deepEqual([...seen].sort(), names);
    assert.equal(new Set(seen).size, seen.length, 'no object twice');
    assert.equal(listRvs.size, 1, 'all pages are served at the first page resourceVersion');
  });

  it('serves later pages from the first page snapshot even when objects change in between', async () => {
    const ns = await namespace('paging-invoices');
    const names = Array.from({ length: 30 }, (_, i) => `invoice-${String(i).padStart(3, '0')}`);
    for (const name of names) {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name }, data: { total: '10' } },
      });
    }
    const first = await core.listNamespacedConfigMap({ namespace: ns, limit: 10 });
    assert.equal(first.items.length, 10);
    // Changes after the first page: a new object, a deleted one not yet returned.
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'invoice-999' } } });
    await core.deleteNamespacedConfigMap({ name: 'invoice-025', namespace: ns });
    const seen = first.items.map((i) => i.metadata?.name);
    let cont = first.metadata?._continue;
    while (cont) {
      const page = await core.listNamespacedConfigMap({ namespace: ns, limit: 10, _continue: cont });
      assert.equal(page.metadata?.resourceVersion, first.metadata?.resourceVersion);
      seen.push(...page.items.map((i) => i.metadata?.name));
      cont = page.metadata?._continue;
    }
    assert.deepEqual(seen, names, 'a paginated list is a consistent snapshot at the first page RV');
  });

  it('filters lists with label and field selectors', async () => {
    const ns = await namespace('checkout');
    const specs: [string, Record<string, string>, string][] = [
      ['frontend-tls', { tier: 'frontend', env: 'prod' }, 'kubernetes.io/tls'],
      ['frontend-session', { tier: 'frontend', env: 'staging' }, 'Opaque'],
      ['backend-db', { tier: 'backend', env: 'prod' }, 'Opaque'],
      ['unlabelled-token', {}, 'Opaque'],
    ];
    for (const [name, labels, type] of specs) {
      const data: Record<string, string> =
        type === 'kubernetes.io/tls'
          ? { 'tls.crt': b64('-----BEGIN CERTIFICATE-----'), 'tls.key': b64('-----BEGIN PRIVATE KEY-----') }
          : { token: b64(name) };
      await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name, labels }, type, data } });
    }
    const names = async (opts: { labelSelector?: string; fieldSelector?: string }) =>
      (await core.listNamespacedSecret({ namespace: ns, ...opts })).items.map((i) => i.metadata?.name).sort();

    assert.deepEqual(await names({ labelSelector: 'tier=frontend' }), ['frontend-session', 'frontend-tls']);
    assert.deepEqual(await names({ labelSelector: 'tier=frontend,env=prod' }), ['frontend-tls']);
    assert.deepEqual(await names({ labelSelector: 'tier!=frontend' }), ['backend-db', 'unlabelled-token']);
    assert.deepEqual(await names({ labelSelector: 'env in (prod,qa)' }), ['backend-db', 'frontend-tls']);
    assert.deepEqual(await names({ labelSelector: 'env notin (prod)' }), [
      'frontend-session',
      'unlabelled-token',
    ]);
    assert.deepEqual(await names({ labelSelector: 'tier' }), [
      'backend-db',
      'frontend-session',
      'frontend-tls',
    ]);
    assert.deepEqual(await names({ labelSelector: '!tier' }), ['unlabelled-token']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=backend-db' }), ['backend-db']);
    assert.deepEqual(
      await names({ fieldSelector: 'metadata.name!=backend-db,metadata.namespace=checkout' }),
      ['frontend-session', 'frontend-tls', 'unlabelled-token'],
    );
    assert.deepEqual(await names({ fieldSelector: 'type=kubernetes.io/tls' }), ['frontend-tls']);
    assert.deepEqual(await names({ labelSelector: 'env=prod', fieldSelector: 'type=Opaque' }), [
      'backend-db',
    ]);

    const bad = await apiError(
      core.listNamespacedSecret({ namespace: ns, fieldSelector: 'spec.color=red' }),
      400,
    );
    assert.equal(bad.reason, 'BadRequest');
  });
});

describe('Watch', () => {
  it('sees ADDED, MODIFIED and DELETED in order for changes made after it starts', async () => {
    const ns = await namespace('shipping');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'before-watch' } } });
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const events: { type: string; name: string; rv: string; zone?: string }[] = [];
    let doneErr: unknown = 'not done';
    const watch = new Watch(kc);
    const controller = await watch.watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion },
      (type, obj: V1ConfigMap) => {
        events.push({
          type,
          name: obj.metadata?.name ?? '',
          rv: obj.metadata?.resourceVersion ?? '',
          zone: obj.data?.zone,
        });
      },
      (err) => {
        doneErr = err;
      },
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'carrier-routes' }, data: { zone: 'eu' } },
      });
      await core.patchNamespacedConfigMap(
        { name: 'carrier-routes', namespace: ns, body: { data: { zone: 'us' } } },
        mergePatch(),
      );
      await core.deleteNamespacedConfigMap({ name: 'carrier-routes', namespace: ns });
      await eventually(() => events.length >= 3, 'three watch events');
      await sleep(200);
      assert.deepEqual(
        events.map((e) => [e.type, e.name, e.zone]),
        [
          ['ADDED', 'carrier-routes', 'eu'],
          ['MODIFIED', 'carrier-routes', 'us'],
          ['DELETED', 'carrier-routes', 'us'],
        ],
      );
      const rvs = events.map((e) => Number(e.rv));
      assert.ok(rvs[0] < rvs[1] && rvs[1] < rvs[2], `resourceVersions increase: ${rvs.join(',')}`);
      assert.equal(doneErr, 'not done', 'the watch is still open');
    } finally {
      controller.abort();
    }
  });
});

describe('Watch with selectors and initial events', () => {
  it('turns selector transitions into ADDED and DELETED events', async () => {
    const ns = await namespace('fulfilment');
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'courier-key', labels: { active: 'false' } }, stringData: { key: 'k' } },
    });
    const list = await core.listNamespacedSecret({ namespace: ns, labelSelector: 'active=true' });
    assert.equal(list.items.length, 0);
    const events: [string, string, string | undefined][] = [];
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/secrets`,
      { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'active=true' },
      (type, obj: V1Secret) => events.push([type, obj.metadata?.name ?? '', obj.metadata?.labels?.active]),
      () => {},
    );
    try {
      const setActive = (active: string) =>
        core.patchNamespacedSecret(
          { name: 'courier-key', namespace: ns, body: { metadata: { labels: { active } } } },
          mergePatch(),
        );
      await setActive('true');
      await core.patchNamespacedSecret(
        { name: 'courier-key', namespace: ns, body: { metadata: { annotations: { rotated: 'now' } } } },
        mergePatch(),
      );
      await setActive('false');
      await core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'ignored-key', labels: { active: 'false' } }, stringData: { key: 'k' } },
      });
      await eventually(() => events.length >= 3, 'three events');
      await sleep(200);
      // kube-apiserver: starts matching → ADDED; keeps matching → MODIFIED; stops matching → DELETED (last
      // matching state is not required; the object is the one that stopped matching or its predecessor).
      assert.deepEqual(
        events.map((e) => e.slice(0, 2)),
        [
          ['ADDED', 'courier-key'],
          ['MODIFIED', 'courier-key'],
          ['DELETED', 'courier-key'],
        ],
      );
    } finally {
      controller.abort();
    }
  });

  it('sends initial events and an initial-events-end bookmark with sendInitialEvents', async () => {
    const ns = await namespace('warehouse');
    for (const name of ['aisle-1', 'aisle-2', 'aisle-3']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name } } });
    }
    const events: { type: string; name?: string; rv?: string; annotations?: Record<string, string> }[] = [];
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true },
      (type, obj: V1ConfigMap) =>
        events.push({
          type,
          name: obj.metadata?.name,
          rv: obj.metadata?.resourceVersion,
          annotations: obj.metadata?.annotations,
        }),
      () => {},
    );
    try {
      await eventually(() => events.some((e) => e.type === 'BOOKMARK'), 'the initial-events-end bookmark');
      const bookmark = events.findIndex((e) => e.type === 'BOOKMARK');
      assert.deepEqual(
        events.slice(0, bookmark).map((e) => [e.type, e.name]),
        [
          ['ADDED', 'aisle-1'],
          ['ADDED', 'aisle-2'],
          ['ADDED', 'aisle-3'],
        ],
      );
      assert.equal(events[bookmark].annotations?.['k8s.io/initial-events-end'], 'true');
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'aisle-4' } } });
      await eventually(() => events.some((e) => e.name === 'aisle-4'), 'the later ADDED');
      const later = events.find((e) => e.name === 'aisle-4');
      assert.equal(later?.type, 'ADDED');
      assert.ok(Number(later?.rv) > Number(events[bookmark].rv));
    } finally {
      controller.abort();
    }
  });
});

describe('more CoreV1Api verbs', () => {
  it('generates names, honours dryRun, deletes collections by label and checks delete preconditions', async () => {
    const ns = await namespace('reports');
    const generated = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { generateName: 'report-', labels: { kind: 'report' } }, data: { month: '2024-05' } },
    });
    assert.match(generated.metadata?.name ?? '', /^report-[bcdfghjklmnpqrstvwxz2456789]{5}$/);

    const dry = await core.createNamespacedConfigMap({
      namespace: ns,
      dryRun: 'All',
      body: { metadata: { name: 'draft-report', labels: { kind: 'report' } } },
    });
    assert.equal(dry.metadata?.name, 'draft-report');
    await apiError(core.readNamespacedConfigMap({ name: 'draft-report', namespace: ns }), 404);

    for (const name of ['q1-report', 'q2-report']) {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name, labels: { kind: 'report' } } },
      });
    }
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'report-template' } } });

    const stale = await core.readNamespacedConfigMap({ name: 'q1-report', namespace: ns });
    await core.patchNamespacedConfigMap(
      { name: 'q1-report', namespace: ns, body: { data: { reviewed: 'yes' } } },
      mergePatch(),
    );
    const precondition = await apiError(
      core.deleteNamespacedConfigMap({
        name: 'q1-report',
        namespace: ns,
        body: { preconditions: { resourceVersion: stale.metadata?.resourceVersion } },
      }),
      409,
    );
    assert.equal(precondition.reason, 'Conflict');

    // kube-apiserver answers with the list of deleted objects (client-node types it as V1Status regardless).
    await core.deleteCollectionNamespacedConfigMap({ namespace: ns, labelSelector: 'kind=report' });
    const left = await core.listNamespacedConfigMap({ namespace: ns });
    assert.deepEqual(
      left.items.map((i) => i.metadata?.name),
      ['report-template'],
    );
  });

  it('lists Secrets across all namespaces with a field selector on the namespace', async () => {
    const east = await namespace('region-east');
    const west = await namespace('region-west');
    for (const ns of [east, west]) {
      await core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'replication-key', labels: { app: 'replicator' } }, stringData: { k: ns } },
      });
    }
    const all = await core.listSecretForAllNamespaces({ labelSelector: 'app=replicator' });
    assert.deepEqual(all.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`).sort(), [
      'region-east/replication-key',
      'region-west/replication-key',
    ]);
    const onlyWest = await core.listSecretForAllNamespaces({
      labelSelector: 'app=replicator',
      fieldSelector: `metadata.namespace=${west}`,
    });
    assert.deepEqual(
      onlyWest.items.map((i) => i.metadata?.namespace),
      [west],
    );
  });
});

describe('list edge cases', () => {
  it('fills each page with `limit` matching objects when a label selector is sparse', async () => {
    const ns = await namespace('paging-sparse');
    for (let i = 0; i < 30; i++) {
      await core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: {
            name: `ledger-${String(i).padStart(2, '0')}`,
            labels: i % 3 === 0 ? { audited: 'yes' } : {},
          },
          stringData: { entry: String(i) },
        },
      });
    }
    const pages: string[][] = [];
    let cont: string | undefined;
    do {
      const page = await core.listNamespacedSecret({
        namespace: ns,
        labelSelector: 'audited=yes',
        limit: 4,
        _continue: cont,
      });
      pages.push(page.items.map((i) => i.metadata?.name ?? ''));
      assert.equal(page.metadata?.remainingItemCount, undefined, 'no remainingItemCount with a selector');
      cont = page.metadata?._continue || undefined;
    } while (cont && pages.length < 10);
    assert.deepEqual(pages, [
      ['ledger-00', 'ledger-03', 'ledger-06', 'ledger-09'],
      ['ledger-12', 'ledger-15', 'ledger-18', 'ledger-21'],
      ['ledger-24', 'ledger-27'],
    ]);
  });

  it('rejects malformed continue tokens and selectors with 400 BadRequest', async () => {
    const ns = await namespace('paging-errors');
    const badToken = await apiError(
      core.listNamespacedSecret({ namespace: ns, limit: 1, _continue: 'not-a-token' }),
      400,
    );
    assert.equal(badToken.reason, 'BadRequest');
    assert.match(badToken.message, /^invalid continue token/);
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'a' } } });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'b' } } });
    const first = await core.listNamespacedSecret({ namespace: ns, limit: 1 });
    assert.ok(first.metadata?._continue);
    const withRv = await apiError(
      core.listNamespacedSecret({
        namespace: ns,
        limit: 1,
        _continue: first.metadata?._continue,
        resourceVersion: first.metadata?.resourceVersion,
      }),
      400,
    );
    assert.equal(withRv.message, 'specifying resource version is not allowed when using continue');
    const badSelector = await apiError(
      core.listNamespacedSecret({ namespace: ns, labelSelector: 'tier in (a' }),
      400,
    );
    assert.equal(badSelector.reason, 'BadRequest');
  });
});

describe('namespace and name rules', () => {
  it('refuses objects in a missing namespace (404) and in a terminating one (403)', async () => {
    const missing = await apiError(
      core.createNamespacedSecret({ namespace: 'no-such-tenant', body: { metadata: { name: 'token' } } }),
      404,
    );
    assert.equal(missing.message, 'namespaces "no-such-tenant" not found');

    const ns = await namespace('tenant-offboarding');
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'retention-hold', finalizers: ['example.com/retention'] } },
    });
    await core.deleteNamespace({ name: ns });
    await eventually(async () => {
      const n = await core.readNamespace({ name: ns });
      return n.status?.phase === 'Terminating';
    }, 'the namespace to be Terminating');
    const forbidden = await apiError(
      core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'late-token' } } }),
      403,
    );
    assert.equal(forbidden.reason, 'Forbidden');
    assert.equal(
      forbidden.message,
      `secrets "late-token" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
    );
    // Releasing the finalizer lets the namespace finish.
    await core.patchNamespacedConfigMap(
      { name: 'retention-hold', namespace: ns, body: { metadata: { finalizers: null } } },
      mergePatch(),
    );
    await eventually(async () => {
      try {
        await core.readNamespace({ name: ns });
        return false;
      } catch (err) {
        return err instanceof ApiException && err.code === 404;
      }
    }, 'the namespace to go');
  });

  it('rejects an invalid object name with 422 and the field path', async () => {
    const ns = await namespace('naming');
    const badName = await apiError(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'Bad_Name' } } }),
      422,
    );
    assert.equal(badName.reason, 'Invalid');
    assert.equal(badName.details?.kind, 'ConfigMap');
    assert.ok(
      badName.details?.causes?.some((c) => c.field === 'metadata.name' && c.reason === 'FieldValueInvalid'),
      JSON.stringify(badName.details?.causes),
    );
  });
});

describe('informer across a server restart', () => {
  it('resumes from its resourceVersion and converges after the server restarts', async () => {
    const ns = await namespace('restart-inventory');
    for (let i = 0; i < 10; i++) {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: `bin-${i}` }, data: { n: '0' } },
      });
    }
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const deleted: string[] = [];
    const errors: unknown[] = [];
    let stopped = false;
    informer.on('delete', (o) => deleted.push(o.metadata?.name ?? ''));
    // client-node's informer stops on a connection error; restarting it from the error handler is the
    // documented pattern. It re-watches from its last resourceVersion.
    informer.on('error', (err) => {
      errors.push(err);
      if (!stopped) setTimeout(() => void informer.start(), 200);
    });
    await informer.start();
    try {
      await eventually(() => informer.list(ns).length === 10, 'the initial list');
      await t.restart();
      // Changes right after the restart, possibly before the informer reconnects.
      await core.deleteNamespacedConfigMap({ name: 'bin-3', namespace: ns });
      await core.patchNamespacedConfigMap(
        { name: 'bin-4', namespace: ns, body: { data: { n: '1' } } },
        mergePatch(),
      );
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bin-10' } } });
      const expected = new Map(
        (await core.listNamespacedConfigMap({ namespace: ns })).items.map((i) => [
          i.metadata?.name ?? '',
          i.metadata?.resourceVersion ?? '',
        ]),
      );
      await eventually(
        () => {
          const cache = new Map(
            informer.list(ns).map((i) => [i.metadata?.name ?? '', i.metadata?.resourceVersion ?? '']),
          );
          return cache.size === expected.size && [...expected].every(([n, rv]) => cache.get(n) === rv);
        },
        'the cache to converge after the restart',
        20_000,
      );
      assert.ok(deleted.includes('bin-3'));
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});

describe('informer (makeInformer / ListWatch)', () => {
  it('receives add, update and delete and converges to the server state after a burst of 200 writes', async () => {
    const ns = await namespace('catalog');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    for (let i = 0; i < 5; i++) {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: `seed-${i}` }, data: { v: '0' } },
      });
    }
    const informer = makeInformer<V1ConfigMap>(kc, path, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name}:${o.data?.v}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name}`));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await eventually(() => informer.list().length === 5, 'the initial list');

      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'product-42' }, data: { v: '1' } },
      });
      await eventually(() => seen.includes('add:product-42'), 'add');
      await core.patchNamespacedConfigMap(
        { name: 'product-42', namespace: ns, body: { data: { v: '2' } } },
        mergePatch(),
      );
      await eventually(() => seen.includes('update:product-42:2'), 'update');
      assert.equal(informer.get('product-42', ns)?.data?.v, '2');
      await core.deleteNamespacedConfigMap({ name: 'product-42', namespace: ns });
      await eventually(() => seen.includes('delete:product-42'), 'delete');
      assert.equal(informer.get('product-42', ns), undefined);

      // A burst: 100 creates, 60 updates, 40 deletes, with some concurrency.
      const ops: (() => Promise<unknown>)[] = [];
      for (let i = 0; i < 100; i++) {
        ops.push(() =>
          core.createNamespacedConfigMap({
            namespace: ns,
            body: { metadata: { name: `sku-${i}` }, data: { v: '1' } },
          }),
        );
      }
      await runConcurrently(ops, 10);
      const later: (() => Promise<unknown>)[] = [];
      for (let i = 0; i < 60; i++) {
        later.push(() =>
          core.patchNamespacedConfigMap(
            { name: `sku-${i}`, namespace: ns, body: { data: { v: String(i + 2) } } },
            mergePatch(),
          ),
        );
      }
      for (let i = 60; i < 100; i++) {
        later.push(() => core.deleteNamespacedConfigMap({ name: `sku-${i}`, namespace: ns }));
      }
      await runConcurrently(later, 10);

      const serverState = async () => {
        const list = await core.listNamespacedConfigMap({ namespace: ns });
        return new Map(list.items.map((i) => [i.metadata?.name ?? '', i.metadata?.resourceVersion ?? '']));
      };
      const cacheState = () =>
        new Map(informer.list(ns).map((i) => [i.metadata?.name ?? '', i.metadata?.resourceVersion ?? '']));
      let expected = await serverState();
      assert.equal(expected.size, 5 + 60);
      await eventually(
        async () => {
          const cache = cacheState();
          if (cache.size !== expected.size) return false;
          for (const [name, rv] of expected) if (cache.get(name) !== rv) return false;
          return true;
        },
        'the informer cache to equal the server',
        15_000,
      ).catch(async (err) => {
        expected = await serverState();
        assert.deepEqual(cacheState(), expected);
        throw err;
      });
      assert.deepEqual(cacheState(), expected);
      assert.equal(informer.get('sku-7', ns)?.data?.v, '9');
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});

async function runConcurrently(ops: (() => Promise<unknown>)[], width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < ops.length) await ops[next++]();
    }),
  );
}

describe('Lease through CoordinationV1Api', () => {
  it('creates a Lease, renews it, and refuses a renewal from a stale copy', async () => {
    const ns = await namespace('leader-election');
    // MicroTime travels as RFC 3339 with exactly six fractional digits; client-node's V1MicroTime writes that,
    // and reads it back as the string the server sent.
    const acquired = new V1MicroTime(Date.now() - 5_000);
    const microTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
    const lease: V1Lease = {
      metadata: { name: 'certkit-controller' },
      spec: {
        holderIdentity: 'certkit-controller-7d9f_4b1e',
        leaseDurationSeconds: 15,
        acquireTime: acquired,
        renewTime: acquired,
        leaseTransitions: 0,
      },
    };
    const created = await coordination.createNamespacedLease({ namespace: ns, body: lease });
    assert.equal(created.spec?.holderIdentity, 'certkit-controller-7d9f_4b1e');
    assert.equal(created.spec?.leaseDurationSeconds, 15);
    assert.match(String(created.spec?.renewTime), microTime);
    assert.equal(new Date(String(created.spec?.renewTime)).getTime(), acquired.getTime());

    const current = await coordination.readNamespacedLease({ name: 'certkit-controller', namespace: ns });
    const renewedAt = new V1MicroTime();
    current.spec = { ...current.spec, renewTime: renewedAt };
    const renewed = await coordination.replaceNamespacedLease({
      name: 'certkit-controller',
      namespace: ns,
      body: current,
    });
    assert.match(String(renewed.spec?.renewTime), microTime);
    assert.equal(new Date(String(renewed.spec?.renewTime)).getTime(), renewedAt.getTime());
    assert.equal(new Date(String(renewed.spec?.acquireTime)).getTime(), acquired.getTime());
    assert.ok(Number(renewed.metadata?.resourceVersion) > Number(created.metadata?.resourceVersion));

    // Another candidate holding the old copy must lose the race.
    created.spec = { ...created.spec, holderIdentity: 'certkit-controller-5c2a_9e0f', leaseTransitions: 1 };
    const conflict = await apiError(
      coordination.replaceNamespacedLease({ name: 'certkit-controller', namespace: ns, body: created }),
      409,
    );
    assert.equal(conflict.reason, 'Conflict');
    const final = await coordination.readNamespacedLease({ name: 'certkit-controller', namespace: ns });
    assert.equal(final.spec?.holderIdentity, 'certkit-controller-7d9f_4b1e');
  });
});

describe('CustomResourceDefinitions and custom objects', () => {
  const group = 'stable.example.com';
  const version = 'v1';
  const plural = 'crontabs';

  before(async () => {
    await apiextensions.createCustomResourceDefinition({
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${plural}.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural, singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
          versions: [
            {
              name: version,
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      required: ['cronSpec'],
                      properties: {
                        cronSpec: { type: 'string', pattern: '^(\\S+ ){4}\\S+$' },
                        image: { type: 'string' },
                        replicas: { type: 'integer', minimum: 1, maximum: 10 },
                      },
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
  });

  it('reports the CRD as Established with accepted names', async () => {
    await eventually(async () => {
      const crd = await apiextensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    }, 'Established');
    const crd = await apiextensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
    assert.equal(crd.status?.acceptedNames?.kind, 'CronTab');
    assert.deepEqual(crd.status?.acceptedNames?.shortNames, ['ct']);
    const list = await apiextensions.listCustomResourceDefinition();
    assert.ok(list.items.some((c) => c.metadata?.name === `${plural}.${group}`));
  });

  it('creates, lists, merge-patches and deletes custom objects through CustomObjectsApi', async () => {
    const ns = await namespace('batch-jobs');
    const created = await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'CronTab',
        metadata: { name: 'nightly-report', labels: { team: 'finance' } },
        spec: { cronSpec: '0 2 * * *', image: 'registry.example.com/report:1.4', replicas: 1 },
      },
    });
    assert.equal(created.kind, 'CronTab');
    assert.equal(created.metadata.generation, 1);
    await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'CronTab',
        metadata: { name: 'hourly-cleanup' },
        spec: { cronSpec: '0 * * * *', image: 'registry.example.com/cleanup:2.0' },
      },
    });

    const list = await customObjects.listNamespacedCustomObject({ group, version, namespace: ns, plural });
    assert.equal(list.kind, 'CronTabList');
    assert.equal(list.apiVersion, `${group}/${version}`);
    assert.deepEqual(list.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), [
      'hourly-cleanup',
      'nightly-report',
    ]);
    const selected = await customObjects.listNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      labelSelector: 'team=finance',
    });
    assert.deepEqual(
      selected.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['nightly-report'],
    );

    const patched = await customObjects.patchNamespacedCustomObject(
      { group, version, namespace: ns, plural, name: 'nightly-report', body: { spec: { replicas: 3 } } },
      mergePatch(),
    );
    assert.equal(patched.spec.replicas, 3);
    assert.equal(patched.spec.cronSpec, '0 2 * * *');
    assert.equal(patched.metadata.generation, 2);

    const got = await customObjects.getNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'nightly-report',
    });
    assert.equal(got.spec.replicas, 3);

    await customObjects.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'hourly-cleanup',
    });
    const status = await apiError(
      customObjects.getNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural,
        name: 'hourly-cleanup',
      }),
      404,
    );
    assert.equal(status.message, 'crontabs.stable.example.com "hourly-cleanup" not found');
  });

  it('requires metadata.resourceVersion to replace a custom object (no unconditional update)', async () => {
    const ns = await namespace('batch-replace');
    const created = await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'CronTab',
        metadata: { name: 'log-rotation' },
        spec: { cronSpec: '0 0 * * *' },
      },
    });
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    const status = await apiError(
      customObjects.replaceNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural,
        name: 'log-rotation',
        body: { ...created, metadata, spec: { cronSpec: '30 0 * * *' } },
      }),
      422,
    );
    assert.equal(status.reason, 'Invalid');
    assert.ok(
      status.details?.causes?.some((c) => c.field === 'metadata.resourceVersion'),
      JSON.stringify(status.details?.causes),
    );
    const replaced = await customObjects.replaceNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'log-rotation',
      body: { ...created, spec: { cronSpec: '30 0 * * *' } },
    });
    assert.equal(replaced.spec.cronSpec, '30 0 * * *');
    assert.equal(replaced.metadata.generation, 2);
  });

  it('rejects schema violations with 422 Invalid and the field path in the Status causes', async () => {
    const ns = await namespace('batch-invalid');
    const tooMany = await apiError(
      customObjects.createNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural,
        body: {
          apiVersion: `${group}/${version}`,
          kind: 'CronTab',
          metadata: { name: 'overscaled' },
          spec: { cronSpec: '*/5 * * * *', replicas: 20 },
        },
      }),
      422,
    );
    assert.equal(tooMany.reason, 'Invalid');
    assert.equal(tooMany.details?.name, 'overscaled');
    assert.equal(tooMany.details?.group, group);
    assert.equal(tooMany.details?.kind, 'CronTab');
    assert.match(tooMany.message, /^CronTab\.stable\.example\.com "overscaled" is invalid: /);
    assert.ok(
      tooMany.details?.causes?.some((c) => c.field === 'spec.replicas' && c.reason === 'FieldValueInvalid'),
      JSON.stringify(tooMany.details?.causes),
    );

    const wrongType = await apiError(
      customObjects.createNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural,
        body: {
          apiVersion: `${group}/${version}`,
          kind: 'CronTab',
          metadata: { name: 'typo' },
          spec: { cronSpec: 5 },
        },
      }),
      422,
    );
    assert.ok(
      wrongType.details?.causes?.some(
        (c) => c.field === 'spec.cronSpec' && c.reason === 'FieldValueTypeInvalid',
      ),
      JSON.stringify(wrongType.details?.causes),
    );

    const missing = await apiError(
      customObjects.createNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural,
        body: { apiVersion: `${group}/${version}`, kind: 'CronTab', metadata: { name: 'empty' }, spec: {} },
      }),
      422,
    );
    assert.ok(
      missing.details?.causes?.some((c) => c.field === 'spec.cronSpec' && c.reason === 'FieldValueRequired'),
      JSON.stringify(missing.details?.causes),
    );

    await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'CronTab',
        metadata: { name: 'weekly-backup' },
        spec: { cronSpec: '0 3 * * 0', replicas: 2 },
      },
    });
    const badPatch = await apiError(
      customObjects.patchNamespacedCustomObject(
        { group, version, namespace: ns, plural, name: 'weekly-backup', body: { spec: { replicas: 0 } } },
        mergePatch(),
      ),
      422,
    );
    assert.ok(
      badPatch.details?.causes?.some((c) => c.field === 'spec.replicas'),
      JSON.stringify(badPatch.details),
    );
    const unchanged = await customObjects.getNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'weekly-backup',
    });
    assert.equal(unchanged.spec.replicas, 2);
  });
});
