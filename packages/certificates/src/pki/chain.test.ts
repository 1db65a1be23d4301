import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { certificatePem, decodeCertificatePems, type DecodedCertificate } from './certificate-der.ts';
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

describe('buildPemBundle: certificates sharing a subject', () => {
  it('refuses a set whose ordering needs more signature checks than its size allows, before making them', async () => {
    // 200 distinct self-signed CA certificates named alike: each is a candidate parent of every other, so
    // ordering them by trying every pair is 39,800 signature checks (1,000 of them, in a CA Secret of
    // half a megabyte, held the event loop for 76 s).
    const certs: DecodedCertificate[] = [];
    for (let i = 0; i < 200; i++) {
      const ca = await issue({ spec: { commonName: 'same name', isCA: true } });
      certs.push(...decodeCertificatePems(ca.certPem));
    }
    const started = performance.now();
    assert.throws(
      () => buildPemBundle(certs),
      /^Error: certificate chain is malformed or broken: ordering its 200 certificates takes more than 416 signature checks/,
    );
    // The budget (416 checks) is what it spends: well under the 39,800 the pairs would cost.
    assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
  });

  it('still orders a chain whose CA was re-keyed under the same name, and a long chain of distinct names', async () => {
    const oldRoot = await issue({ spec: { commonName: 'Root', isCA: true } });
    // The new key under the same name, certified by the old one (a key roll-over certificate).
    const rolled = await issue({
      spec: { commonName: 'Root', isCA: true },
      issuer: { certPem: oldRoot.certPem, key: oldRoot.key },
    });
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: rolled.certPem, key: rolled.key },
    });
    const [oldCert] = decodeCertificatePems(oldRoot.certPem);
    const [rolledCert] = decodeCertificatePems(rolled.certPem);
    const [leafCert] = decodeCertificatePems(leaf.certPem);
    const bundle = buildPemBundle([oldCert, leafCert, rolledCert]);
    assert.equal(bundle.chainPem, certificatePem(leafCert) + certificatePem(rolledCert));
    assert.equal(bundle.caPem, certificatePem(oldCert));

    // 300 CAs each under the one before, given root first: about one check per certificate, within the budget.
    let parent = await issue({ spec: { commonName: 'level 0', isCA: true } });
    const chain = decodeCertificatePems(parent.certPem);
    for (let i = 1; i <= 300; i++) {
      // Only the parent itself as the issuer's PEM, so that each signing orders a chain of two.
      const issuer = { certPem: certificatePem(chain[chain.length - 1]), key: parent.key };
      parent = await issue({ spec: { commonName: `level ${i}`, isCA: true }, issuer });
      chain.push(decodeCertificatePems(parent.certPem)[0]);
    }
    const long = buildPemBundle(chain);
    assert.equal(long.caPem, certificatePem(chain[0]));
    assert.equal(long.chainPem, chain.slice(1).reverse().map(certificatePem).join(''));
  });
});
