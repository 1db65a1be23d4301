import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCertificateDer } from './certificate-der.ts';
import { buildCertificateRequest } from './csr.ts';
import {
  certificateMatchesKey,
  encodedCertificateInfo,
  parseCertificate,
  SecretAnnotation,
  secretAnnotationsFor,
} from './inspect.ts';
import { generatePrivateKey, type PrivateKeySpec } from './keys.ts';
import { signCertificate } from './sign.ts';
import { UPN_OID } from './sans.ts';
import { DAY, issue, rootCa } from '@certkit/testenv/pki/ca';

describe('parseCertificate', () => {
  it('reads validity, names, SANs, usages, CA flag, serial and key ids', async () => {
    const root = await rootCa();
    const now = new Date('2026-05-01T00:00:00Z');
    const leaf = await issue({
      spec: {
        commonName: 'leaf.example',
        subject: { organizations: ['Acme'], countries: ['DE'], serialNumber: '7' },
        dnsNames: ['leaf.example', '*.leaf.example'],
        ipAddresses: ['10.1.2.3', 'fd00::1'],
        uris: ['spiffe://cluster.local/ns/a/sa/b'],
        emailAddresses: ['ops@leaf.example'],
        otherNames: [{ oid: UPN_OID, utf8Value: 'ops@corp' }],
        usages: ['digital signature', 'key encipherment', 'server auth'],
      },
      keySpec: { algorithm: 'Ed25519' },
      issuer: { certPem: root.certPem, key: root.key },
      now,
      duration: 30 * DAY,
    });
    const info = parseCertificate(leaf.certPem);
    assert.equal(info.notBefore.toISOString(), '2026-05-01T00:00:00.000Z');
    assert.equal(info.notAfter.toISOString(), '2026-05-31T00:00:00.000Z');
    assert.equal(info.subject.commonName, 'leaf.example');
    assert.deepEqual(info.subject.organizations, ['Acme']);
    assert.deepEqual(info.subject.countries, ['DE']);
    assert.equal(info.subject.serialNumber, '7');
    assert.equal(info.issuer.commonName, 'certkit test root');
    assert.deepEqual(info.dnsNames, ['leaf.example', '*.leaf.example']);
    assert.deepEqual(info.ipAddresses, ['10.1.2.3', 'fd00::1']);
    assert.deepEqual(info.uris, ['spiffe://cluster.local/ns/a/sa/b']);
    assert.deepEqual(info.emailAddresses, ['ops@leaf.example']);
    assert.deepEqual(info.otherNames, [{ oid: UPN_OID, utf8Value: 'ops@corp' }]);
    assert.equal(info.isCA, false);
    assert.deepEqual(info.keyUsages, ['digital signature', 'key encipherment']);
    assert.deepEqual(info.extKeyUsages, ['server auth']);
    assert.match(info.serialNumber, /^[0-9A-F]+$/);
    assert.equal(info.signatureAlgorithm, 'ECDSAWithSHA256');
    assert.equal(info.authorityKeyId, parseCertificate(root.certPem).subjectKeyId);
    assert.equal(parseCertificate(root.certPem).isCA, true);
    assert.deepEqual(parseCertificate(root.certPem).keyUsages, [
      'digital signature',
      'key encipherment',
      'cert sign',
    ]);
  });

  it('reads the leaf of a chain', async () => {
    const root = await rootCa();
    const intermediate = await issue({
      spec: { commonName: 'int', isCA: true },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: intermediate.certPem + root.certPem, key: intermediate.key },
    });
    assert.equal(parseCertificate(leaf.certPem).subject.commonName, 'leaf');
  });
});

describe('certificateMatchesKey', () => {
  it('compares the certificate key with a private or public key', async () => {
    const issued = await issue({ spec: { commonName: 'x' } });
    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    assert.equal(certificateMatchesKey(issued.certPem, issued.key), true);
    assert.equal(certificateMatchesKey(parseCertificate(issued.certPem), issued.key), true);
    assert.equal(certificateMatchesKey(issued.certPem, other), false);
  });
});

describe('secretAnnotationsFor', () => {
  it('always writes common-name, alt-names, ip-sans and uri-sans, even when empty', async () => {
    const issued = await issue({ spec: { emailAddresses: ['only@example.com'] } });
    assert.deepEqual(secretAnnotationsFor(issued.certPem), {
      [SecretAnnotation.commonName]: '',
      [SecretAnnotation.altNames]: '',
      [SecretAnnotation.ipSans]: '',
      [SecretAnnotation.uriSans]: '',
      [SecretAnnotation.emailSans]: 'only@example.com',
    });
  });

  it('renders every field from the issued certificate, CSV-escaped as Go does', async () => {
    const issued = await issue({
      spec: {
        commonName: 'Acme, "Widgets"',
        subject: {
          organizations: ['Acme, Inc.', 'Plain'],
          organizationalUnits: ['Say "hi"'],
          countries: ['GB'],
          provinces: ['Greater London'],
          localities: ['London'],
          postalCodes: ['SW1A 1AA'],
          streetAddresses: ['10 Downing Street, Westminster', ' leading space'],
          serialNumber: 'SN-1',
        },
        dnsNames: ['a.example', 'b.example'],
        ipAddresses: ['192.0.2.1', '::ffff:192.0.2.2', '2001:db8::'],
        uris: ['https://a.example/x,y'],
        emailAddresses: ['a@example.com', 'b@example.com'],
      },
    });
    assert.deepEqual(secretAnnotationsFor(parseCertificate(issued.certPem)), {
      'cert-manager.io/common-name': 'Acme, "Widgets"',
      'cert-manager.io/subject-serialnumber': 'SN-1',
      // A multi-valued RDN is sorted by DER: "Plain" (shorter) comes first.
      'cert-manager.io/subject-organizations': 'Plain,"Acme, Inc."',
      'cert-manager.io/subject-organizationalunits': '"Say ""hi"""',
      'cert-manager.io/subject-countries': 'GB',
      'cert-manager.io/subject-provinces': 'Greater London',
      'cert-manager.io/subject-localities': 'London',
      'cert-manager.io/subject-postalcodes': 'SW1A 1AA',
      'cert-manager.io/subject-streetaddresses': '" leading space","10 Downing Street, Westminster"',
      'cert-manager.io/email-sans': 'a@example.com,b@example.com',
      'cert-manager.io/alt-names': 'a.example,b.example',
      'cert-manager.io/ip-sans': '192.0.2.1,192.0.2.2,2001:db8::',
      'cert-manager.io/uri-sans': '"https://a.example/x,y"',
    });
  });
});

describe('encodedCertificateInfo', () => {
  /** The two views alike, the key compared as a key (each view has its own KeyObject). */
  function assertSameView(pem: string, leafDer: Buffer): void {
    const { publicKey: encodedKey, ...encoded } = encodedCertificateInfo(decodeCertificateDer(leafDer));
    const { publicKey: parsedKey, ...parsed } = parseCertificate(pem);
    assert.deepEqual(encoded, parsed);
    assert.ok(encodedKey.equals(parsedKey));
  }

  const specs: PrivateKeySpec[] = [
    { algorithm: 'ECDSA', size: 256 },
    { algorithm: 'ECDSA', size: 384 },
    { algorithm: 'Ed25519' },
    { algorithm: 'RSA', size: 2048 },
  ];
  for (const keySpec of specs) {
    it(`reads a ${keySpec.algorithm} certificate signCertificate just issued as parseCertificate does`, async () => {
      const root = await rootCa();
      const key = await generatePrivateKey(keySpec);
      const csrPem = await buildCertificateRequest(
        {
          commonName: 'leaf.example',
          subject: { organizations: ['Acme'], countries: ['DE'] },
          dnsNames: ['leaf.example'],
          ipAddresses: ['10.1.2.3'],
          uris: ['spiffe://cluster.local/ns/a/sa/b'],
          emailAddresses: ['ops@leaf.example'],
          usages: ['digital signature', 'server auth', 'client auth'],
        },
        key,
      );
      const { certPem, leaf } = await signCertificate({
        csrPem,
        duration: 30 * DAY,
        isCA: false,
        usages: ['digital signature', 'server auth', 'client auth'],
        issuer: { certPem: root.certPem, key: root.key },
      });
      assertSameView(certPem, leaf.der);
    });
  }

  it('prints serial numbers as node:crypto does, with a high bit or a leading zero digit', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'self' }, key);
    let highBit = false;
    let leadingZeroDigit = false;
    for (let i = 0; i < 1000 && !(highBit && leadingZeroDigit); i++) {
      const { certPem, leaf } = await signCertificate({
        csrPem,
        duration: DAY,
        isCA: false,
        issuer: { selfSignedKey: key },
      });
      assertSameView(certPem, leaf.der);
      // A padding zero octet before a high bit; a first octet below 0x10 prints with a leading zero.
      if (leaf.serial[0] === 0) highBit = true;
      else if (leaf.serial[0] < 0x10) leadingZeroDigit = true;
    }
    assert.ok(highBit && leadingZeroDigit, 'both kinds of serial were seen');
  });
});
