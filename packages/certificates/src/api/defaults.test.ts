import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyCertificateDefaults, applyCertificateRequestDefaults, defaultPrivateKey } from './defaults.ts';
import type { Certificate, CertificateRequest } from './types.ts';

const minimal: Certificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'default' },
  spec: { secretName: 'web-tls', issuerRef: { name: 'ca' }, dnsNames: ['web.example.com'] },
};

describe('applyCertificateDefaults', () => {
  it('fills in what cert-manager assumes, without touching the input', () => {
    const before = structuredClone(minimal);
    const defaulted = applyCertificateDefaults(minimal);
    assert.deepEqual(minimal, before);
    assert.deepEqual(defaulted.spec, {
      secretName: 'web-tls',
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      dnsNames: ['web.example.com'],
      privateKey: { rotationPolicy: 'Always', encoding: 'PKCS1', algorithm: 'RSA', size: 2048 },
      duration: '2160h0m0s',
      revisionHistoryLimit: 1,
      usages: ['digital signature', 'key encipherment'],
      encodeUsagesInRequest: true,
    });
    // renewBefore depends on the issued certificate's lifetime, and cleanupPolicy on the controller flag.
    assert.equal(defaulted.spec.renewBefore, undefined);
    assert.equal(defaulted.spec.cleanupPolicy, undefined);
  });

  it('keeps what the user set', () => {
    const spec = {
      ...minimal.spec,
      issuerRef: { name: 'le', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      privateKey: {
        algorithm: 'ECDSA' as const,
        size: 384,
        encoding: 'PKCS8' as const,
        rotationPolicy: 'Never' as const,
      },
      duration: '24h',
      revisionHistoryLimit: 5,
      usages: ['server auth' as const],
      encodeUsagesInRequest: false,
      cleanupPolicy: 'OnDelete' as const,
    };
    assert.deepEqual(applyCertificateDefaults({ ...minimal, spec }).spec, spec);
  });

  it('sizes keys per algorithm', () => {
    assert.equal(defaultPrivateKey({ algorithm: 'ECDSA' }).size, 256);
    assert.equal(defaultPrivateKey({ algorithm: 'RSA' }).size, 2048);
    assert.equal('size' in defaultPrivateKey({ algorithm: 'Ed25519' }), false);
  });

  it('defaults spec.privateKey exactly as defaultPrivateKey does (the key manager defaults only the key)', () => {
    for (const privateKey of [
      undefined,
      {},
      { rotationPolicy: 'Never' as const },
      { algorithm: 'ECDSA' as const, size: 384 },
      { algorithm: 'Ed25519' as const, encoding: 'PKCS8' as const },
    ]) {
      const cert = { ...minimal, spec: { ...minimal.spec, ...(privateKey ? { privateKey } : {}) } };
      assert.deepEqual(defaultPrivateKey(privateKey), applyCertificateDefaults(cert).spec.privateKey);
      assert.deepEqual(cert.spec.privateKey, privateKey, 'the stored spec is left as it was');
    }
  });
});

describe('applyCertificateRequestDefaults', () => {
  it('defaults the issuerRef kind and group', () => {
    const cr: CertificateRequest = {
      metadata: { name: 'web-1' },
      spec: { issuerRef: { name: 'ca', kind: '' }, request: 'cmVx' },
    };
    assert.deepEqual(applyCertificateRequestDefaults(cr).spec.issuerRef, {
      name: 'ca',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });
    assert.equal(cr.spec.issuerRef.kind, '');
  });
});
