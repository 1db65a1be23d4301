/**
 * createControllerContext and startContext against the real embedded API server with the cert-manager.io
 * CRDs installed: informers, indices, the split Secret cache, options and scoping.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type ClientConfig,
  KubeClient,
  loadKubeconfig,
  type RequestInfo,
  type ResourceRef,
  silentLogger,
} from '@certkit/runtime';
// Tests may start the API server; the certificates package itself never imports it.
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { certManagerCrds } from '../api/crds.ts';
import { example } from '@certkit/testenv/cert-manager/examples';
import type { Certificate, CertificateRequest, ClusterIssuer, Issuer } from '../api/types.ts';
import { LABELLED_SELECTOR, UNLABELLED_SELECTOR } from '../secrets/selectors.ts';
import type { SecretSource } from '../secrets/split-cache.ts';
import { type ControllerContext, DEFAULT_OPTIONS } from './context.ts';
import {
  CERTIFICATE_SECRET_INDEX,
  createControllerContext,
  ISSUER_CA_SECRET_INDEX,
  REQUEST_CERTIFICATE_INDEX,
  startContext,
} from './create-context.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  challengesRef,
  clusterIssuersRef,
  issuersRef,
  ordersRef,
} from './refs.ts';

let t: TestServer;
let config: ClientConfig;
let admin: KubeClient;

const ns = 'team';
const elsewhere = 'elsewhere';

async function create<T extends KubeObject>(ref: ResourceRef, obj: T): Promise<T> {
  return admin.resource<T>(ref).create(obj.metadata?.namespace, obj);
}

/** CRDs are served asynchronously after creation; informers started before would only back off. */
async function waitServed(ref: ResourceRef): Promise<void> {
  const path = `/apis/${ref.group}/${ref.version}/${ref.resource}`;
  const deadline = Date.now() + 10_000;
  while ((await t.fetch('GET', path)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${ref.resource} not served`);
    await sleep(20);
  }
}

before(async () => {
  t = await startTestServer();
  config = await loadKubeconfig({ path: t.kubeconfigPath });
  admin = new KubeClient({ ...config, qps: -1 });
  for (const crd of certManagerCrds())
    await create(builtins.customResourceDefinitions, crd as unknown as KubeObject);
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef])
    await waitServed(ref);
  for (const name of [ns, elsewhere, 'certs']) {
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name } });
  }

  const secrets = admin.resource(builtins.secrets);
  await secrets.create(ns, { metadata: { name: 'ca-key', namespace: ns }, data: { 'tls.key': 'a2V5' } });
  await secrets.create(ns, {
    metadata: { name: 'web-tls', namespace: ns, labels: { 'controller.cert-manager.io/fao': 'true' } },
    data: { 'tls.crt': 'Y2VydA==' },
  });

  await create<Issuer>(issuersRef, {
    metadata: { name: 'ca', namespace: ns },
    spec: { ca: { secretName: 'ca-key' } },
  });
  await create<Issuer>(issuersRef, {
    metadata: { name: 'ca', namespace: elsewhere },
    spec: { ca: { secretName: 'ca-key' } },
  });
  await create<Issuer>(issuersRef, { metadata: { name: 'self', namespace: ns }, spec: { selfSigned: {} } });
  await create<ClusterIssuer>(clusterIssuersRef, {
    metadata: { name: 'cluster-ca' },
    spec: { ca: { secretName: 'root-key' } },
  });
  const cert = await create<Certificate>(certificatesRef, {
    ...(example('Certificate', 'web') as Certificate),
    metadata: { name: 'web', namespace: ns },
  });
  const request = example('CertificateRequest', 'web-1') as CertificateRequest;
  await create<CertificateRequest>(certificateRequestsRef, {
    apiVersion: request.apiVersion,
    kind: request.kind,
    metadata: {
      name: 'web-1',
      namespace: ns,
      ownerReferences: [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          name: 'web',
          uid: cert.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { request: request.spec.request, issuerRef: request.spec.issuerRef },
  });
  // Owned by something else: not indexed under any Certificate.
  await create<CertificateRequest>(certificateRequestsRef, {
    apiVersion: request.apiVersion,
    kind: request.kind,
    metadata: { name: 'orphan', namespace: ns },
    spec: { request: request.spec.request, issuerRef: request.spec.issuerRef },
  });
});

after(async () => {
  admin?.close();
  await t?.close();
});

/** A context on its own client (so its requests can be counted), started and synced. */
async function startedContext(options: Parameters<typeof createControllerContext>[1] = {}) {
  const requests: RequestInfo[] = [];
  const hits: SecretSource[] = [];
  const client = new KubeClient({ ...config, qps: -1, onRequest: (info) => requests.push(info) });
  const ctx = createControllerContext(client, {
    log: silentLogger,
    secretMetrics: { hit: (source) => hits.push(source) },
    ...options,
  });
  const controller = new AbortController();
  await startContext(ctx, AbortSignal.any([controller.signal, AbortSignal.timeout(15_000)]));
  return {
    ctx,
    requests,
    hits,
    async stop() {
      controller.abort();
      await ctx.factory.stopped();
      client.close();
    },
  };
}

function names(objects: KubeObject[]): string[] {
  return objects.map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort();
}

function secretInformers(ctx: ControllerContext) {
  return ctx.factory.informers().filter((i) => i.client.ref.resource === 'secrets');
}

describe('createControllerContext', () => {
  let started: Awaited<ReturnType<typeof startedContext>>;

  before(async () => {
    started = await startedContext();
  });

  after(async () => {
    await started?.stop();
  });

  it('fills in the defaults, and only ControllerOptions fields', () => {
    assert.deepEqual(started.ctx.options, DEFAULT_OPTIONS);
    const ctx = createControllerContext(admin, {
      log: silentLogger,
      clusterResourceNamespace: undefined,
      maxConcurrentReconciles: 2,
      enableCertificateOwnerRef: false,
      ...({ leaderElection: { namespace: 'x' } } as object),
    });
    assert.deepEqual(ctx.options, {
      ...DEFAULT_OPTIONS,
      maxConcurrentReconciles: 2,
      enableCertificateOwnerRef: false,
    });
    assert.ok(started.ctx.now() instanceof Date);
    const fixed = new Date('2030-01-01T00:00:00Z');
    assert.equal(createControllerContext(admin, { log: silentLogger, now: () => fixed }).now(), fixed);
  });

  it('starts and syncs every informer, both Secret caches included', () => {
    const { ctx } = started;
    assert.equal(ctx.secrets.hasSynced(), true);
    for (const informer of ctx.factory.informers()) assert.equal(informer.hasSynced(), true, informer.name);
    assert.deepEqual(
      secretInformers(ctx)
        .map((i) => `${i.client.mode} ${i.labelSelector}`)
        .sort(),
      [`full ${LABELLED_SELECTOR}`, `metadata ${UNLABELLED_SELECTOR}`],
    );
    // The four cert-manager.io kinds, Orders and Challenges, and the two Secret caches.
    assert.equal(ctx.factory.informers().length, 8);
    assert.equal(ctx.secretClient.ref, builtins.secrets);
    assert.equal(ctx.orderClient.ref, ordersRef);
    assert.equal(ctx.challengeClient.ref, challengesRef);
    assert.equal(ctx.certificateClient.ref, certificatesRef);
    assert.equal(ctx.clusterIssuerClient.ref, clusterIssuersRef);
  });

  it('indexes Certificates by their Secret', () => {
    const store = started.ctx.certificates.getStore();
    assert.deepEqual(names(store.byIndex(CERTIFICATE_SECRET_INDEX, `${ns}/web-tls`)), [`${ns}/web`]);
    assert.deepEqual(store.byIndex(CERTIFICATE_SECRET_INDEX, 'default/web-tls'), []);
  });

  it('indexes CertificateRequests by their controlling Certificate', () => {
    const store = started.ctx.certificateRequests.getStore();
    assert.equal(store.size, 2);
    assert.deepEqual(names(store.byIndex(REQUEST_CERTIFICATE_INDEX, `${ns}/web`)), [`${ns}/web-1`]);
    assert.deepEqual(store.listIndexFuncValues(REQUEST_CERTIFICATE_INDEX), [`${ns}/web`]);
  });

  it('indexes Issuers and ClusterIssuers by their CA Secret', () => {
    const { ctx } = started;
    assert.deepEqual(names(ctx.issuers.getStore().byIndex(ISSUER_CA_SECRET_INDEX, `${ns}/ca-key`)), [
      `${ns}/ca`,
    ]);
    assert.deepEqual(
      names(ctx.clusterIssuers.getStore().byIndex(ISSUER_CA_SECRET_INDEX, 'kube-system/root-key')),
      ['/cluster-ca'],
    );
  });

  it('follows changes: a new Certificate is indexed under its Secret', async () => {
    const { ctx } = started;
    await create<Certificate>(certificatesRef, {
      ...(example('Certificate', 'web') as Certificate),
      metadata: { name: 'api', namespace: ns },
      spec: { ...(example('Certificate', 'web') as Certificate).spec, secretName: 'api-tls' },
    });
    const deadline = Date.now() + 5000;
    while (ctx.certificates.getStore().byIndex(CERTIFICATE_SECRET_INDEX, `${ns}/api-tls`).length === 0) {
      assert.ok(Date.now() < deadline, 'api indexed');
      await sleep(10);
    }
  });

  it('reads Secrets through the split cache: labelled from the cache, unlabelled with one GET', async () => {
    const { ctx, requests, hits } = started;
    const before = requests.length;
    assert.equal((await ctx.secrets.get(ns, 'web-tls'))?.data?.['tls.crt'], 'Y2VydA==');
    assert.equal(requests.length, before);
    assert.equal((await ctx.secrets.get(ns, 'ca-key'))?.data?.['tls.key'], 'a2V5');
    assert.deepEqual(
      requests.slice(before).map((r) => [r.verb, r.resource]),
      [['get', 'secrets']],
    );
    assert.deepEqual(hits, ['cache', 'live']);
  });
});

describe('createControllerContext scoped to a namespace', () => {
  let started: Awaited<ReturnType<typeof startedContext>>;

  before(async () => {
    started = await startedContext({ namespace: ns, clusterResourceNamespace: 'certs' });
  });

  after(async () => {
    await started?.stop();
  });

  it('watches namespaced kinds and Secrets in that namespace, ClusterIssuers cluster-wide', () => {
    const { ctx } = started;
    for (const informer of [
      ctx.certificates,
      ctx.certificateRequests,
      ctx.issuers,
      ...secretInformers(ctx),
    ]) {
      assert.equal(informer.namespace, ns, informer.name);
    }
    assert.equal(ctx.clusterIssuers.namespace, '');
    assert.deepEqual(names(ctx.issuers.getStore().list()), [`${ns}/ca`, `${ns}/self`]);
    assert.deepEqual(names(ctx.clusterIssuers.getStore().list()), ['/cluster-ca']);
  });

  it('indexes ClusterIssuers under the cluster resource namespace', () => {
    const store = started.ctx.clusterIssuers.getStore();
    assert.deepEqual(names(store.byIndex(ISSUER_CA_SECRET_INDEX, 'certs/root-key')), ['/cluster-ca']);
    assert.deepEqual(store.byIndex(ISSUER_CA_SECRET_INDEX, 'kube-system/root-key'), []);
  });
});

describe('createControllerContext without filtered Secret caching', () => {
  it('uses one full Secret informer, and gets unlabelled Secrets without a request', async () => {
    const started = await startedContext({ secretsFilteredCaching: false });
    try {
      const informers = secretInformers(started.ctx);
      assert.equal(informers.length, 1);
      assert.equal(informers[0].labelSelector, '');
      assert.equal(informers[0].client.mode, 'full');
      const before = started.requests.length;
      assert.equal((await started.ctx.secrets.get(ns, 'ca-key'))?.data?.['tls.key'], 'a2V5');
      assert.equal(started.requests.length, before);
    } finally {
      await started.stop();
    }
  });
});

describe('startContext', () => {
  it('resolves without syncing when the signal is already aborted', async () => {
    const client = new KubeClient({ ...config, qps: -1 });
    const ctx = createControllerContext(client, { log: silentLogger });
    try {
      await startContext(ctx, AbortSignal.abort());
      assert.equal(ctx.secrets.hasSynced(), false);
    } finally {
      await ctx.factory.stopped();
      client.close();
    }
  });
});
