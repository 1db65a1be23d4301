import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseCertificate } from '@certkit/certificates/pki/index';
import { DAY, issue, rootCa } from '@certkit/testenv/pki/ca';
import { secretCertificateLines } from './status-secret-format.ts';

/** The Secret section of `certkit status certificate`, line for line as cmctl's `status certificate` prints it. */
describe('status certificate: the Secret section', () => {
  it("has cmctl's lines first, in its order, with Go's names and lower-case hex", async () => {
    const root = await rootCa({ algorithm: 'ECDSA' }, 365 * DAY);
    const intermediate = await issue({
      spec: {
        commonName: 'intermediate',
        isCA: true,
        subject: { organizations: ['Example', 'Other'], countries: ['DE'] },
      },
      issuer: { certPem: root.certPem, key: root.key },
      duration: 300 * DAY,
    });
    const leaf = await issue({
      spec: {
        commonName: 'web',
        dnsNames: ['web.example'],
        // Listed out of bit order: cmctl prints them in bit order.
        usages: ['key encipherment', 'digital signature', 'client auth', 'server auth'],
      },
      keySpec: { algorithm: 'RSA', size: 2048 },
      issuer: { certPem: intermediate.certPem, key: intermediate.key },
      duration: 90 * DAY,
    });
    const lines = secretCertificateLines(Buffer.from(leaf.certPem));
    const x509 = new X509Certificate(leaf.certPem);
    const serial = BigInt(`0x${x509.serialNumber}`).toString(16);
    const issuerSki = parseCertificate(intermediate.certPem).subjectKeyId;
    assert.match(issuerSki ?? '', /^[0-9a-f]{40}$/);
    assert.deepEqual(lines.slice(0, 10), [
      '  Issuer Country: DE',
      // In the order of the DER SET OF (shorter encodings first), as Go reads it.
      '  Issuer Organisation: Other, Example',
      '  Issuer Common Name: intermediate',
      '  Key Usage: Digital Signature, Key Encipherment',
      '  Extended Key Usages: Client Authentication, Server Authentication',
      '  Public Key Algorithm: RSA',
      '  Signature Algorithm: ECDSA-SHA256',
      `  Subject Key ID: ${parseCertificate(leaf.certPem).subjectKeyId}`,
      `  Authority Key ID: ${issuerSki}`,
      `  Serial Number: ${serial.length % 2 ? `0${serial}` : serial}`,
    ]);
    assert.match(lines[7], /^ {2}Subject Key ID: [0-9a-f]{40}$/);
    // certkit's own lines follow.
    assert.deepEqual(lines.slice(10, 11), ['  Subject: CN=web']);
    assert.ok(lines.includes(`  Fingerprint (SHA-256): ${x509.fingerprint256}`));
    assert.ok(lines.includes('  Is CA: false'));
  });

  it('an RSA CA self-signed: SHA256-RSA, Cert Sign, no EKU, empty issuer country and organisation', async () => {
    const root = await rootCa({ algorithm: 'RSA', size: 2048 }, 30 * DAY);
    const lines = secretCertificateLines(Buffer.from(root.certPem));
    assert.deepEqual(lines.slice(0, 7), [
      '  Issuer Country: ',
      '  Issuer Organisation: ',
      '  Issuer Common Name: certkit test root',
      '  Key Usage: Digital Signature, Key Encipherment, Cert Sign',
      '  Extended Key Usages: ',
      '  Public Key Algorithm: RSA',
      '  Signature Algorithm: SHA256-RSA',
    ]);
    assert.ok(lines.includes('  Is CA: true'));
  });
});
