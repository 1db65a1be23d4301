import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeEnvironment } from '@certkit/testenv/controllers/fake-environment';
import { registerCertificateSigningRequestControllers } from './index.ts';

describe('registerCertificateSigningRequestControllers', () => {
  it('runs the enabled signers under their cert-manager names, and makes the CSR informer for them', async () => {
    const env = await FakeEnvironment.start({});
    try {
      const before = env.ctx.factory.informers().length;
      const controllers = registerCertificateSigningRequestControllers(
        env.ctx,
        (name) => name !== 'certificatesigningrequests-issuer-acme',
      );
      assert.deepEqual(
        controllers.map((c) => c.name),
        ['certificatesigningrequests-issuer-selfsigned', 'certificatesigningrequests-issuer-ca'],
      );
      assert.equal(env.ctx.factory.informers().length, before + 1, 'one CSR informer, shared');
    } finally {
      await env.stop();
    }
  });

  it('makes no CSR informer when none is enabled, nor under --namespace (CSRs are cluster-scoped)', async () => {
    for (const [options, enabled] of [
      [{}, () => false],
      [{ namespace: 'team' }, () => true],
    ] as const) {
      const env = await FakeEnvironment.start({}, options);
      try {
        const before = env.ctx.factory.informers().length;
        assert.deepEqual(registerCertificateSigningRequestControllers(env.ctx, enabled), []);
        assert.equal(env.ctx.factory.informers().length, before);
      } finally {
        await env.stop();
      }
    }
  });
});
