/**
 * convert-versions.ts: each field and value cert-manager renamed between v1alpha2, v1alpha3, v1beta1 and v1,
 * both ways, and what is refused.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertObject, type ManifestObject, parseOutputVersion, VERSIONS } from './convert-versions.ts';

const metadata = { name: 'web', namespace: 'default' };

function certificate(version: string, spec: ManifestObject): ManifestObject {
  return { apiVersion: `cert-manager.io/${version}`, kind: 'Certificate', metadata, spec };
}

describe('convert-versions', () => {
  it('v1alpha2 Certificate → v1: SANs renamed, organization into subject, key fields into privateKey', () => {
    const old = certificate('v1alpha2', {
      secretName: 'web-tls',
      organization: ['jetstack'],
      subject: { countries: ['GB'] },
      keyAlgorithm: 'ecdsa',
      keyEncoding: 'pkcs8',
      keySize: 384,
      emailSANs: ['a@example.com'],
      uriSANs: ['spiffe://cluster.local/a'],
      issuerRef: { name: 'ca' },
    });
    assert.deepEqual(convertObject(old), {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata,
      spec: {
        secretName: 'web-tls',
        subject: { countries: ['GB'], organizations: ['jetstack'] },
        emailAddresses: ['a@example.com'],
        uris: ['spiffe://cluster.local/a'],
        issuerRef: { name: 'ca' },
        privateKey: { algorithm: 'ECDSA', encoding: 'PKCS8', size: 384 },
      },
    });
    // The input is left as it was.
    assert.equal(old.apiVersion, 'cert-manager.io/v1alpha2');
  });

  it('v1alpha3 keeps subject.organizations; v1beta1 renames only the SANs', () => {
    const v1alpha3 = convertObject(
      certificate('v1alpha3', {
        subject: { organizations: ['o'] },
        keyAlgorithm: 'rsa',
        keyEncoding: 'pkcs1',
      }),
    );
    assert.deepEqual(v1alpha3.spec, {
      subject: { organizations: ['o'] },
      privateKey: { algorithm: 'RSA', encoding: 'PKCS1' },
    });
    const v1beta1 = convertObject(
      certificate('v1beta1', { emailSANs: ['a@b.c'], privateKey: { algorithm: 'Ed25519' } }),
    );
    assert.deepEqual(v1beta1.spec, { emailAddresses: ['a@b.c'], privateKey: { algorithm: 'Ed25519' } });
  });

  it('CertificateRequest and Order: spec.csr before v1beta1 is spec.request', () => {
    for (const [group, kind] of [
      ['cert-manager.io', 'CertificateRequest'],
      ['acme.cert-manager.io', 'Order'],
    ]) {
      const v1 = convertObject({ apiVersion: `${group}/v1alpha3`, kind, metadata, spec: { csr: 'LS0t' } });
      assert.deepEqual(v1, { apiVersion: `${group}/v1`, kind, metadata, spec: { request: 'LS0t' } });
      const v1beta1 = convertObject({
        apiVersion: `${group}/v1beta1`,
        kind,
        metadata,
        spec: { request: 'LS0t' },
      });
      assert.deepEqual(v1beta1.spec, { request: 'LS0t' });
    }
  });

  it('Challenge: authzURL and the lower-case type of v1alpha2/v1alpha3', () => {
    const v1 = convertObject({
      apiVersion: 'acme.cert-manager.io/v1alpha2',
      kind: 'Challenge',
      metadata,
      spec: { authzURL: 'https://acme/authz/1', type: 'dns-01', dnsName: 'example.com' },
    });
    assert.deepEqual(v1.spec, {
      authorizationURL: 'https://acme/authz/1',
      type: 'DNS-01',
      dnsName: 'example.com',
    });
    const back = convertObject(v1, 'v1alpha2');
    assert.deepEqual(back.spec, { authzURL: 'https://acme/authz/1', type: 'dns-01', dnsName: 'example.com' });
  });

  it('round-trips every version through v1, and converts v1 to each older one', () => {
    const v1 = certificate('v1', {
      secretName: 'web-tls',
      subject: { organizations: ['o'], countries: ['GB'] },
      privateKey: { algorithm: 'RSA', encoding: 'PKCS1', size: 2048, rotationPolicy: 'Always' },
      emailAddresses: ['a@b.c'],
      uris: ['spiffe://x'],
    });
    for (const version of VERSIONS) {
      const older = convertObject(v1, version);
      assert.equal(older.apiVersion, `cert-manager.io/${version}`);
      assert.deepEqual(convertObject(older), v1, version);
    }
    assert.deepEqual(convertObject(v1, 'v1alpha2').spec, {
      secretName: 'web-tls',
      subject: { countries: ['GB'] },
      organization: ['o'],
      privateKey: { rotationPolicy: 'Always' },
      keyAlgorithm: 'rsa',
      keyEncoding: 'pkcs1',
      keySize: 2048,
      emailSANs: ['a@b.c'],
      uriSANs: ['spiffe://x'],
    });
  });

  it('passes other groups through, and names the object of an unknown version or kind', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata };
    assert.equal(convertObject(secret), secret);
    assert.throws(
      () => convertObject({ apiVersion: 'cert-manager.io/v2', kind: 'Certificate', metadata }),
      /^Error: Certificate "web": cert-manager.io\/v2 is not a version of cert-manager.io \(v1alpha2, v1alpha3, v1beta1, v1\)$/,
    );
    assert.throws(
      () => convertObject({ apiVersion: 'acme.cert-manager.io/v1', kind: 'Certificate', metadata }),
      /acme.cert-manager.io has no kind Certificate \(Order, Challenge\)/,
    );
  });

  it('--output-version: a cert-manager group/version, or a bare version', () => {
    assert.equal(parseOutputVersion('cert-manager.io/v1alpha3'), 'v1alpha3');
    assert.equal(parseOutputVersion('acme.cert-manager.io/v1beta1'), 'v1beta1');
    assert.equal(parseOutputVersion('v1'), 'v1');
    assert.throws(() => parseOutputVersion('apps/v1'), /not a cert-manager group/);
    assert.throws(() => parseOutputVersion('cert-manager.io/v1beta2'), /no such version/);
  });
});
