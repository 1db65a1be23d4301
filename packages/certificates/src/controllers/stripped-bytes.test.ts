import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import type { CertificateRequest } from '../api/types.ts';
import { leanCertificateRequest } from './cache-transforms.ts';
import { isStrippedRequest } from './request-facts.ts';
import { StrippedBytes, strippedBytes } from './stripped-bytes.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const ca = await rootCa();

async function issuedRequest(i: number, resourceVersion = '7'): Promise<CertificateRequest> {
  const leaf = await issue({
    spec: { dnsNames: [`r${i}.example`] },
    issuer: { certPem: ca.certPem, key: ca.key },
  });
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: `r${i}`, namespace: 'ns', uid: `stripped-u${i}`, resourceVersion },
    spec: { request: b64(leaf.csrPem), issuerRef: { name: 'ca' } },
    status: {
      certificate: b64(leaf.certPem),
      ca: b64(ca.certPem),
      conditions: [{ type: 'Ready', status: 'True', reason: 'Issued', message: 'issued' }],
    },
  } as CertificateRequest;
}

describe('StrippedBytes', () => {
  it('gives an issued request back as the API server stored it, once, after the cache transform stripped it', async () => {
    const original = await issuedRequest(1);
    const cached = leanCertificateRequest(structuredClone(original)) as CertificateRequest;
    assert.ok(isStrippedRequest(cached));
    assert.deepEqual(strippedBytes.restore(cached), original);
    assert.equal(strippedBytes.restore(cached), undefined, 'handed out once');
    // Transformed again (informers may), a stripped request does not replace its bytes by its facts.
    const again = leanCertificateRequest(structuredClone(original)) as CertificateRequest;
    leanCertificateRequest(again);
    assert.deepEqual(strippedBytes.restore(again), original);
  });

  it('only for the version whose bytes it took', async () => {
    const original = await issuedRequest(2, '10');
    const cached = leanCertificateRequest(structuredClone(original)) as CertificateRequest;
    const newer = { ...cached, metadata: { ...cached.metadata, resourceVersion: '11' } };
    assert.equal(strippedBytes.restore(newer), undefined);
    assert.ok(strippedBytes.restore(cached));
  });

  it('holds at most its capacity, and nothing once unused for its idle period', async () => {
    const bytes = new StrippedBytes(4, 1000);
    const requests = await Promise.all(Array.from({ length: 10 }, (_, i) => issuedRequest(100 + i)));
    for (const cr of requests) bytes.remember(cr);
    assert.ok(bytes.size <= 4, `${bytes.size} held`);
    assert.equal(bytes.restore(requests[0]), undefined, 'the oldest are let go');
    assert.deepEqual(bytes.restore(requests[9]), requests[9]);
    assert.equal(bytes.releaseIfIdle(Date.now()), true, 'still in use');
    assert.equal(bytes.releaseIfIdle(Date.now() + 1000), false);
    assert.equal(bytes.size, 0);
    assert.equal(bytes.restore(requests[8]), undefined);
  });
});
