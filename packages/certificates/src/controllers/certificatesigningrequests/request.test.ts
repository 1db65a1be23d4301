import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.d.ts';
import { requestedDuration, requestsCA } from './request.ts';

function csr(
  annotations: Record<string, string> = {},
  expirationSeconds?: number,
): CertificateSigningRequest {
  return {
    metadata: { name: 'x', annotations },
    spec: {
      request: '',
      signerName: 'issuers.cert-manager.io/ns.ca',
      usages: ['server auth'],
      expirationSeconds,
    },
  };
}

describe('requestedDuration', () => {
  it('takes the annotation first, then spec.expirationSeconds, then 90 days', () => {
    assert.deepEqual(
      requestedDuration(csr({ 'experimental.cert-manager.io/request-duration': '1h30m' }, 7200)),
      { ms: 5_400_000 },
    );
    assert.deepEqual(requestedDuration(csr({}, 7200)), { ms: 7_200_000 });
    assert.deepEqual(requestedDuration(csr()), { ms: 90 * 24 * 3600_000 });
  });

  it('fails an unreadable annotation with ErrorParseDuration', () => {
    const result = requestedDuration(csr({ 'experimental.cert-manager.io/request-duration': 'a week' }));
    assert.ok('problem' in result);
    assert.equal(result.problem.reason, 'ErrorParseDuration');
    assert.match(result.problem.message, /^Failed to parse requested duration: /);
  });

  it('fails under 600 s with InvalidDuration, in Go duration words', () => {
    const result = requestedDuration(csr({ 'experimental.cert-manager.io/request-duration': '5m' }));
    assert.deepEqual(result, {
      problem: {
        reason: 'InvalidDuration',
        message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested 5m0s',
      },
    });
    assert.deepEqual(requestedDuration(csr({ 'experimental.cert-manager.io/request-duration': '10m' })), {
      ms: 600_000,
    });
  });
});

describe('requestsCA', () => {
  it('is true for "true" alone', () => {
    assert.equal(requestsCA(csr({ 'experimental.cert-manager.io/request-is-ca': 'true' })), true);
    assert.equal(requestsCA(csr({ 'experimental.cert-manager.io/request-is-ca': 'True' })), false);
    assert.equal(requestsCA(csr()), false);
  });
});
