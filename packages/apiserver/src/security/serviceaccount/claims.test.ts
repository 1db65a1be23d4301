import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubernetesClaim, tokenClaims } from './claims.ts';

describe('ServiceAccount token claims', () => {
  const base = {
    issuer: 'https://issuer.test',
    namespace: 'ns',
    serviceAccount: { name: 'robot', uid: 'sa-uid' },
    audiences: ['a', 'b'],
    expirationSeconds: 600,
    now: 1_800_000_000,
  };

  it("writes kube-apiserver's registered and private claims", () => {
    const claims = tokenClaims({ ...base, bound: { kind: 'Secret', ref: { name: 's', uid: 's-uid' } } });
    assert.deepEqual(
      { ...claims, jti: typeof claims.jti },
      {
        iss: 'https://issuer.test',
        sub: 'system:serviceaccount:ns:robot',
        aud: ['a', 'b'],
        exp: 1_800_000_600,
        iat: 1_800_000_000,
        nbf: 1_800_000_000,
        jti: 'string',
        'kubernetes.io': {
          namespace: 'ns',
          serviceaccount: { name: 'robot', uid: 'sa-uid' },
          secret: { name: 's', uid: 's-uid' },
        },
      },
    );
    assert.notEqual(tokenClaims(base).jti, tokenClaims(base).jti, 'every token has its own jti');
    const pod = tokenClaims({ ...base, bound: { kind: 'Pod', ref: { name: 'p', uid: 'p-uid' } } });
    assert.deepEqual(pod['kubernetes.io'].pod, { name: 'p', uid: 'p-uid' });
    assert.equal(pod['kubernetes.io'].secret, undefined);
  });

  it('reads back the claims it wrote, and nothing that names the ServiceAccount otherwise', () => {
    const claims = tokenClaims(base) as unknown as Record<string, unknown>;
    assert.deepEqual(kubernetesClaim(claims), {
      namespace: 'ns',
      serviceaccount: { name: 'robot', uid: 'sa-uid' },
    });
    const k = claims['kubernetes.io'] as Record<string, unknown>;
    const refused: Record<string, unknown>[] = [
      { ...claims, 'kubernetes.io': undefined },
      { ...claims, 'kubernetes.io': 'text' },
      { ...claims, sub: 'system:serviceaccount:ns:other' },
      { ...claims, 'kubernetes.io': { ...k, namespace: '' } },
      { ...claims, 'kubernetes.io': { ...k, serviceaccount: { name: 'robot' } } },
      { ...claims, 'kubernetes.io': { ...k, serviceaccount: { name: 'robot', uid: 7 } } },
      { ...claims, 'kubernetes.io': { ...k, pod: { name: 'p' } } },
      { ...claims, 'kubernetes.io': { ...k, secret: null } },
    ];
    for (const payload of refused) assert.equal(kubernetesClaim(payload), undefined, JSON.stringify(payload));
  });
});
