/**
 * requireCertManagerApi against the real embedded API server: a cluster without the acme.cert-manager.io
 * CRDs is refused with one line saying which resources are missing, since the Order and Challenge informers
 * could never sync there; with every CRD installed it passes.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { ACME_GROUP } from './api/acme-constants.ts';
import { certManagerCrds } from './api/crds.ts';
import { requireCertManagerApi } from './controller.ts';

describe('requireCertManagerApi', () => {
  let server: TestServer;
  let client: KubeClient;
  before(async () => {
    server = await startTestServer();
    client = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  });
  after(async () => {
    client?.close();
    await server?.close();
  });

  async function servedSoon(path: string): Promise<void> {
    for (let i = 0; i < 200 && (await server.fetch('GET', path)).status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('refuses a cluster that serves cert-manager.io but not the ACME kinds, then accepts it with them', async () => {
    const crds = client.resource(builtins.customResourceDefinitions);
    const [acme, certManager] = [
      certManagerCrds().filter((c) => c.spec.group === ACME_GROUP),
      certManagerCrds().filter((c) => c.spec.group !== ACME_GROUP),
    ];
    assert.equal(acme.length, 2);
    for (const crd of certManager) await crds.create(undefined, crd as unknown as KubeObject);
    await servedSoon('/apis/cert-manager.io/v1/clusterissuers');
    await assert.rejects(requireCertManagerApi(client), {
      message:
        'the cluster does not serve acme.cert-manager.io/v1 orders, challenges; install the CRDs first: kubectl apply -f deploy/crds.yaml',
    });

    for (const crd of acme) await crds.create(undefined, crd as unknown as KubeObject);
    await servedSoon('/apis/acme.cert-manager.io/v1/challenges');
    await requireCertManagerApi(client);
  });
});
