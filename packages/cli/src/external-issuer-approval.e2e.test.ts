import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@certkit/apimachinery';
import type { CertificateRequest } from '@certkit/certificates/api/types';
import { certificateRequestsRef } from '@certkit/certificates/controllers/refs';
import { buildCertificateRequest, generatePrivateKey } from '@certkit/certificates/pki/index';
import { builtins, KubeClient, loadKubeconfig, type ResourceClient } from '@certkit/runtime';
import { type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * The built-in approver and an external issuer's requests under `certkit up`, whose controller runs as the
 * ServiceAccount of deploy/rbac.yaml: as with cert-manager's chart, which grants approval for cert-manager.io's
 * issuers only, a request for another group's issuer waits until RBAC lets the controller `approve` that
 * signer, and is approved once it does.
 */

const rbac = (resource: string, kind: string) => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  kind,
  namespaced: false,
});

describe('certkit up: approving requests for an external issuer', () => {
  let dir: string;
  let cli: RunningCli;
  let admin: KubeClient;
  let requests: ResourceClient<CertificateRequest>;

  const approved = async () =>
    (await requests.get('default', 'external')).status?.conditions?.find((c) => c.type === 'Approved');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-approval-'));
    cli = await startCli(['up', '--data-dir', dir, '--port', '0']);
    admin = new KubeClient({ ...(await loadKubeconfig({ path: join(dir, 'kubeconfig') })), qps: -1 });
    requests = admin.resource<CertificateRequest>(certificateRequestsRef);
    await admin.resource(builtins.customResourceDefinitions).create(undefined, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'vaultissuers.example.com' },
      spec: {
        group: 'example.com',
        names: {
          kind: 'VaultIssuer',
          plural: 'vaultissuers',
          singular: 'vaultissuer',
          listKind: 'VaultIssuerList',
        },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    } as unknown as KubeObject);
    for (let i = 0; ; i++) {
      try {
        await requests.list('default', { limit: 1 });
        break;
      } catch (err) {
        if (i > 300) throw err;
        await sleep(100);
      }
    }
  });

  after(async () => {
    admin?.close();
    await cli?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('waits without a grant, and approves once the ServiceAccount may approve for that signer', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csr = await buildCertificateRequest({ commonName: 'external.example.com' }, key);
    await requests.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'external', namespace: 'default' },
      spec: {
        request: Buffer.from(csr).toString('base64'),
        issuerRef: { name: 'vault', kind: 'VaultIssuer', group: 'example.com' },
      },
    } as CertificateRequest);
    await sleep(2000);
    assert.equal(await approved(), undefined, 'approved without a grant');

    // What cert-manager's chart does for its approveSignerNames, for this signer.
    await admin.resource(rbac('clusterroles', 'ClusterRole')).create(undefined, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'certkit-approve-vaultissuers' },
      rules: [
        {
          apiGroups: ['cert-manager.io'],
          resources: ['signers'],
          verbs: ['approve'],
          resourceNames: ['vaultissuers.example.com/*'],
        },
      ],
    } as unknown as KubeObject);
    await admin.resource(rbac('clusterrolebindings', 'ClusterRoleBinding')).create(undefined, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'certkit-approve-vaultissuers' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'certkit-approve-vaultissuers',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'certkit', namespace: 'certkit' }],
    } as unknown as KubeObject);
    // Looked at again at once (an edit requeues it) rather than at the approver's next recheck; the answer it
    // had is kept for 10 s, so this waits that long at most.
    const deadline = Date.now() + 30_000;
    for (;;) {
      await requests.patch('default', 'external', 'merge', {
        metadata: { annotations: { poke: String(Date.now()) } },
      });
      const condition = await approved();
      if (condition) {
        assert.equal(condition.reason, 'cert-manager.io');
        break;
      }
      assert.ok(Date.now() < deadline, 'not approved within 30 s of the grant');
      await sleep(500);
    }
  });
});
