/**
 * cert-manager's `--controllers`, as users carry it over: `*,-certificaterequests-approver` (the chart's
 * `disableAutoApproval`, when approver-policy or another controller approves). The whole controller runs against
 * the embedded API server with that set; requests wait, say why in cert-manager's words, and are signed once
 * something else approves them, as cmctl approve does.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig, silentLogger } from '@certkit/runtime';
import type { Event, Secret } from 'kubernetes-types/core/v1.d.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';
import { rootCa } from '@certkit/testenv/pki/ca';
import type { Certificate, CertificateRequest, Issuer } from '../api/types.ts';
import { installCrds, type RunningController, startCertificateController } from '../controller.ts';
import { encodePrivateKey } from '../pki/index.ts';
import { enabledControllers } from './enabled-controllers.ts';
import { certificateRequestsRef, certificatesRef, issuersRef } from './refs.ts';

const NS = 'no-auto-approval';

let server: TestServer;
let admin: KubeClient;
let controller: RunningController;

before(async () => {
  server = await startTestServer();
  admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  await installCrds(admin);
  await eventually(
    async () =>
      (await server.fetch('GET', '/apis/cert-manager.io/v1/certificates')).status === 200 ? true : undefined,
    'cert-manager.io served',
    15_000,
  );
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  controller = startCertificateController(admin, {
    metricsBindAddress: '0',
    controllers: enabledControllers(['*', '-certificaterequests-approver']),
    log: silentLogger,
  });
  controller.done.catch((err) => console.error('certificate controller stopped:', err));
});

after(async () => {
  await controller?.stop();
  await controller?.done.catch(() => {});
  admin?.close();
  await server?.close();
});

const condition = (
  obj: { status?: { conditions?: { type: string; status: string; reason?: string }[] } },
  type: string,
) => obj.status?.conditions?.find((c) => c.type === type);

describe('--controllers=*,-certificaterequests-approver', () => {
  it('leaves requests unapproved, says WaitingForApproval, and signs once approved elsewhere', async () => {
    const ca = await rootCa({ algorithm: 'ECDSA', size: 256 }, 365 * 24 * 3600_000);
    await admin.resource<Secret & KubeObject>(builtins.secrets).create(NS, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'ca-key-pair', namespace: NS },
      data: {
        'tls.crt': Buffer.from(ca.certPem).toString('base64'),
        'tls.key': Buffer.from(encodePrivateKey(ca.key, 'PKCS8')).toString('base64'),
      },
    });
    const issuers = admin.resource<Issuer>(issuersRef);
    await issuers.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'ca', namespace: NS },
      spec: { ca: { secretName: 'ca-key-pair' } },
    });
    await eventually(
      async () => (condition(await issuers.get(NS, 'ca'), 'Ready')?.status === 'True' ? true : undefined),
      'Issuer ca Ready',
      15_000,
    );
    const certificates = admin.resource<Certificate>(certificatesRef);
    await certificates.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace: NS },
      spec: { secretName: 'web-tls', dnsNames: ['web.example.com'], issuerRef: { name: 'ca' } },
    });

    const requests = admin.resource<CertificateRequest>(certificateRequestsRef);
    const waiting = await eventually(
      async () => {
        const list = await admin
          .resource(builtins.events)
          .list(NS, { fieldSelector: 'involvedObject.kind=CertificateRequest,involvedObject.name=web-1' });
        return (list.items as unknown as Event[]).find((e) => e.reason === 'WaitingForApproval');
      },
      'the WaitingForApproval Event of web-1',
      15_000,
    );
    assert.equal(waiting.type, 'Normal');
    assert.equal(waiting.message, 'Not signing CertificateRequest until it is Approved');
    assert.equal(waiting.source?.component, 'cert-manager-certificaterequests-issuer-ca');

    // Nothing approves it here: still no Approved condition and no certificate a moment later.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const pending = await requests.get(NS, 'web-1');
    assert.equal(condition(pending, 'Approved'), undefined);
    assert.equal(pending.status?.certificate, undefined);
    assert.notEqual(condition(await certificates.get(NS, 'web'), 'Ready')?.status, 'True');

    // Another approval controller (here as cmctl approve writes it) lets the signer proceed.
    await requests.update(
      {
        ...pending,
        status: {
          ...pending.status,
          conditions: [
            ...(pending.status?.conditions ?? []),
            {
              type: 'Approved',
              status: 'True',
              reason: 'policy.cert-manager.io',
              message: 'Approved by CertificateRequestPolicy: "web"',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      },
      { subresource: 'status' },
    );
    await eventually(
      async () =>
        condition(await certificates.get(NS, 'web'), 'Ready')?.status === 'True' ? true : undefined,
      'Certificate web Ready once approved',
      15_000,
    );
    const issued = await requests.get(NS, 'web-1');
    assert.equal(condition(issued, 'Approved')?.reason, 'policy.cert-manager.io');
    assert.equal(condition(issued, 'Ready')?.reason, 'Issued');
  });
});
