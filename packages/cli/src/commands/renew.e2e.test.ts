/** `certkit renew` against the embedded API server with cert-manager's CRDs and admission. */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Certificate } from '@certkit/certificates/api/types';
import { startCertManagerServer } from '@certkit/testenv/apiserver/cert-manager-server';
import type { TestServer } from '@certkit/testenv/apiserver/test-server';
import { renew } from './renew.ts';

const PATH = '/apis/cert-manager.io/v1/namespaces/default/certificates';
const EARLIER = '2026-01-01T00:00:00Z';

describe('certkit renew', () => {
  let server: TestServer;
  before(async () => {
    server = await startCertManagerServer();
  });
  after(() => server?.close());

  async function certificate(name: string, conditions: NonNullable<Certificate['status']>['conditions']) {
    const created = await server.fetch('POST', PATH, {
      body: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name },
        spec: { secretName: name, dnsNames: ['example.com'], issuerRef: { name: 'ca' } },
      },
    });
    assert.equal(created.status, 201, created.text);
    const withStatus = await server.fetch('PUT', `${PATH}/${name}/status`, {
      body: { ...created.json, status: { conditions } },
    });
    assert.equal(withStatus.status, 200, withStatus.text);
  }

  it('sets Issuing=True ManuallyTriggered in place, keeping the other conditions', async () => {
    await certificate('web', [
      { type: 'Issuing', status: 'False', reason: 'Done', lastTransitionTime: EARLIER },
      { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: EARLIER },
    ]);
    const before = Date.now() - 1000;
    const out = await renew(['--kubeconfig', server.kubeconfigPath, '-n', 'default', 'web']);
    assert.equal(out, 'Manually triggered issuance of Certificate default/web\n');
    const conditions = (await server.fetch('GET', `${PATH}/web`)).json.status.conditions;
    assert.deepEqual(
      conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
      ['Issuing=True', 'Ready=True'],
    );
    assert.equal(conditions[0].reason, 'ManuallyTriggered');
    assert.equal(conditions[0].message, 'Certificate re-issuance manually triggered');
    assert.equal(conditions[0].observedGeneration, 1);
    assert.ok(Date.parse(conditions[0].lastTransitionTime) >= before, conditions[0].lastTransitionTime);
    assert.equal(conditions[1].lastTransitionTime, EARLIER);

    const again = await renew(['--kubeconfig', server.kubeconfigPath, '-n', 'default', 'web']);
    assert.equal(again, 'certificate default/web is already being issued\n');
  });
});
