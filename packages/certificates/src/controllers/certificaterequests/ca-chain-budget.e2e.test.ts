/**
 * A CA Secret built to make ordering its chain slow: 999 self-signed CA certificates that share one subject
 * (half a megabyte, within a Secret's 1 MiB). Each was a candidate parent of every other, a signature check
 * per pair: about a million, 76 s of the controller's event loop, during which `certkit up` answered nobody.
 * Now the request fails within the signature-check budget, and the API server answers throughout.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildCertificateRequest, generatePrivateKey } from '../../pki/index.ts';
import { issue } from '@certkit/testenv/pki/ca';
import {
  certificateRequest,
  condition,
  eventually,
  type Harness,
  issuers,
  requests,
  secrets,
  startHarness,
  tlsSecret,
} from '@certkit/testenv/controllers/certificaterequests-harness';

const ns = 'team';

describe('a CA Secret of 999 CA certificates sharing a subject', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ namespaces: [ns] });
  });
  after(async () => {
    await h?.close();
  });

  it('fails the request within the budget while the API server answers', async () => {
    const signer = await issue({ spec: { commonName: 'same name', isCA: true } });
    const others: string[] = [];
    for (let i = 0; i < 998; i++) {
      others.push((await issue({ spec: { commonName: 'same name', isCA: true } })).certPem);
    }
    const certPem = signer.certPem + others.join('');
    await secrets(h).create(ns, tlsSecret(ns, 'many', { certPem, key: signer.key }));
    await issuers(h).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'many', namespace: ns },
      spec: { ca: { secretName: 'many' } },
    });
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ dnsNames: ['a.example.com'] }, key);
    await requests(h).create(ns, certificateRequest(ns, 'many-1', csrPem, { name: 'many' }));

    let slowest = 0;
    const failed = await eventually(
      async () => {
        const started = performance.now();
        assert.equal((await h.server.fetch('GET', '/readyz')).status, 200);
        slowest = Math.max(slowest, performance.now() - started);
        const cr = await requests(h).get(ns, 'many-1');
        return condition(cr, 'Ready')?.reason === 'Failed' ? cr : undefined;
      },
      'the request failed',
      20_000,
      50,
    );
    assert.match(
      condition(failed, 'Ready')!.message!,
      /certificate chain is malformed or broken: ordering its 1000 certificates takes more than 2016 signature checks/,
    );
    assert.equal(failed.status?.certificate, undefined);
    assert.ok(slowest < 2_000, `/readyz took ${Math.round(slowest)} ms`);
  });
});
