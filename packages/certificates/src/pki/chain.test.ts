import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCertificatePems } from './certificate-der.ts';
import { buildPemBundle } from './chain.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';

describe('buildPemBundle', () => {
  it('orders certificates given in any order, drops duplicates and the root from the chain', async () => {
    const root = await rootCa();
    const intermediate = await issue({
      spec: { commonName: 'int', isCA: true },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: intermediate.certPem, key: intermediate.key },
    });
    const [leafCert] = decodeCertificatePems(leaf.certPem);
    const [intCert] = decodeCertificatePems(intermediate.certPem);
    const [rootCert] = decodeCertificatePems(root.certPem);
    const bundle = buildPemBundle([rootCert, leafCert, intCert, rootCert]);
    assert.equal(bundle.chainPem, leaf.certPem);
    assert.equal(bundle.caPem, root.certPem);
    // A lone root is both chain and CA; a lone non-root has no CA.
    assert.deepEqual(buildPemBundle([rootCert]), { chainPem: root.certPem, caPem: root.certPem });
    assert.deepEqual(buildPemBundle([intCert]), { chainPem: intermediate.certPem, caPem: '' });
  });

  it('rejects certificates that do not form one chain', async () => {
    const root = await rootCa();
    const other = await rootCa();
    const a = await issue({ spec: { commonName: 'a' }, issuer: { certPem: root.certPem, key: root.key } });
    const b = await issue({ spec: { commonName: 'b' }, issuer: { certPem: root.certPem, key: root.key } });
    const [aCert] = decodeCertificatePems(a.certPem);
    const [bCert] = decodeCertificatePems(b.certPem);
    const [otherCert] = decodeCertificatePems(other.certPem);
    assert.throws(() => buildPemBundle([aCert, bCert]), /malformed or broken/);
    assert.throws(() => buildPemBundle([aCert, otherCert]), /malformed or broken/);
  });
});

describe('buildPemBundle: signedBy', () => {
  it('takes the given signature as made, but still requires the parent to be a CA', async () => {
    const root = await rootCa();
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const [rootCert] = decodeCertificatePems(root.certPem);
    const [leafCert] = decodeCertificatePems(leaf.certPem);
    // A corrupted signature breaks the chain unless the caller vouches for it (as signCertificate does for
    // the certificate it has just signed).
    const forged = { ...leafCert, signature: Buffer.from(leafCert.signature).fill(1, 8, 16) };
    assert.throws(() => buildPemBundle([rootCert, forged]), /malformed or broken/);
    assert.deepEqual(buildPemBundle([rootCert, forged], new Map([[forged, rootCert]])).caPem, root.certPem);
    // The pair must name the parent actually chosen, and a non-CA parent is refused whatever the caller says.
    assert.throws(() => buildPemBundle([rootCert, forged], new Map([[forged, forged]])), /malformed/);
    const other = await issue({ spec: { commonName: 'leaf' } });
    const [notCa] = decodeCertificatePems(other.certPem);
    const child = { ...leafCert, issuer: notCa.subject };
    assert.throws(() => buildPemBundle([notCa, child], new Map([[child, notCa]])), /malformed/);
  });
});
