import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import {
  buildCertificateRequest,
  decodeCertificateRequestPem,
  parseCertificateRequest,
  verifyCertificateRequest,
  type CertificateRequestSpec,
} from './csr.ts';
import { readChildren, readOne, Tag } from './der.ts';
import { generatePrivateKey } from './keys.ts';
import { encodeRdnSequence, parseLiteralSubject } from './names.ts';
import { decodePemBlock, encodePem } from './pem.ts';
import { UPN_OID } from './sans.ts';
import { openssl, opensslUnavailable } from '@certkit/testenv/pki/ca';
import { x509 } from '@certkit/testenv/pki/x509-lib';

let ecKey: KeyObject;
let rsaKey: KeyObject;

before(async () => {
  [ecKey, rsaKey] = await Promise.all([
    generatePrivateKey({ algorithm: 'ECDSA' }),
    generatePrivateKey({ algorithm: 'RSA' }),
  ]);
});

async function peculiarCsr(spec: CertificateRequestSpec, key = ecKey) {
  const pem = await buildCertificateRequest(spec, key);
  const csr = new x509.Pkcs10CertificateRequest(pem);
  assert.equal(await csr.verify(), true, 'the CSR verifies with @peculiar/x509');
  return { pem, csr };
}

function extension<T extends x509.Extension>(
  csr: x509.Pkcs10CertificateRequest,
  type: new (raw: ArrayBuffer) => T,
  oid: string,
) {
  // CSR extensions live in the extensionRequest attribute; getExtension() does not look there.
  const ext = csr.extensions.find((e) => e.type === oid);
  return ext && new type(ext.rawData);
}

/** Each RDN as [[type, value], …], in encoding order, as @peculiar/x509 reads them. */
function rdnsOf(name: x509.Name): [string, string][][] {
  return name
    .toJSON()
    .map((rdn) =>
      Object.entries(rdn).flatMap(([type, values]) => values.map((v) => [type, v] as [string, string])),
    );
}

describe('buildCertificateRequest: subject', () => {
  it("orders spec.subject attributes as Go's pkix.Name does, one RDN per attribute type", async () => {
    const { csr } = await peculiarCsr({
      commonName: 'example.com',
      subject: {
        serialNumber: '42',
        organizationalUnits: ['Unit'],
        organizations: ['Org B', 'Org A'],
        postalCodes: ['12345'],
        streetAddresses: ['1 Main St'],
        localities: ['Town'],
        provinces: ['State'],
        countries: ['GB'],
      },
    });
    assert.deepEqual(rdnsOf(csr.subjectName), [
      [['C', 'GB']],
      [['ST', 'State']],
      [['L', 'Town']],
      [['2.5.4.9', '1 Main St']],
      [['2.5.4.17', '12345']],
      // A multi-valued RDN is a SET OF, so DER sorts it (shorter encodings first, then bytewise).
      [
        ['O', 'Org A'],
        ['O', 'Org B'],
      ],
      [['OU', 'Unit']],
      [['CN', 'example.com']],
      [['2.5.4.5', '42']],
    ]);
  });

  it('keeps the literalSubject of conformance scenario 7 in its given order (RDNSequence reversed)', async () => {
    const literalSubject = 'CN=*.x.foo-long.bar.com,OU=FooLong,OU=Bar,OU=Baz,OU=Dept.,O=Corp.';
    const { pem, csr } = await peculiarCsr({ literalSubject, dnsNames: ['foo.example.com'] });
    assert.deepEqual(rdnsOf(csr.subjectName), [
      [['O', 'Corp.']],
      [['OU', 'Dept.']],
      [['OU', 'Baz']],
      [['OU', 'Bar']],
      [['OU', 'FooLong']],
      [['CN', '*.x.foo-long.bar.com']],
    ]);
    // The raw subject equals the literal subject encoded on its own, as the e2e test compares them.
    const view = parseCertificateRequest(pem);
    assert.ok(view.subjectDer.equals(encodeRdnSequence(parseLiteralSubject(literalSubject))));
    assert.equal(view.literalSubject, literalSubject);
    assert.equal(view.commonName, '*.x.foo-long.bar.com');
  });

  it('encodes values with Go\'s string types: PrintableString when it can, else UTF8String ("*" is not printable)', async () => {
    const { pem } = await peculiarCsr({ literalSubject: 'CN=*.example.com,O=Acme,OU=Zürich' });
    const subject = readOne(parseCertificateRequest(pem).subjectDer, Tag.SEQUENCE);
    const tags = readChildren(subject.value).map((rdn) => {
      const [atv] = readChildren(readOne(rdn.raw).value);
      return readChildren(atv.value)[1].tag;
    });
    assert.deepEqual(tags, [Tag.UTF8_STRING, Tag.PRINTABLE_STRING, Tag.UTF8_STRING]);
  });

  it('accepts the reverse-order RDNs of the literalsubjectrdns e2e test, including DC and UID', async () => {
    const literalSubject =
      'CN=James \\"Jim\\" Smith\\, III,UID=jamessmith,SERIALNUMBER=1234512345,OU=Admins,OU=IT,DC=net,DC=dc,O=Acme,STREET=La Rambla,L=Barcelona,C=Spain';
    const { csr } = await peculiarCsr({ literalSubject });
    assert.deepEqual(rdnsOf(csr.subjectName).flat(), [
      ['C', 'Spain'],
      ['L', 'Barcelona'],
      ['2.5.4.9', 'La Rambla'],
      ['O', 'Acme'],
      ['DC', 'dc'],
      ['DC', 'net'],
      ['OU', 'IT'],
      ['OU', 'Admins'],
      ['2.5.4.5', '1234512345'],
      ['0.9.2342.19200300.100.1.1', 'jamessmith'],
      ['CN', 'James "Jim" Smith, III'],
    ]);
  });

  it('accepts dotted OIDs and multi-valued RDNs in literalSubject', async () => {
    const { csr } = await peculiarCsr({ literalSubject: 'CN=a+2.5.4.17=999,O=b' });
    assert.deepEqual(rdnsOf(csr.subjectName), [
      [['O', 'b']],
      [
        ['CN', 'a'],
        ['2.5.4.17', '999'],
      ],
    ]);
  });

  it('rejects unknown attribute names (case-sensitive, like cert-manager)', async () => {
    await assert.rejects(buildCertificateRequest({ literalSubject: 'UNKNOWN=blah' }, ecKey), {
      message: 'Literal subject contains unrecognized key with value [blah]',
    });
    await assert.rejects(
      buildCertificateRequest({ literalSubject: 'cn=foo' }, ecKey),
      /unrecognized key with value \[foo\]/,
    );
  });

  it('requires a common name or at least one SAN', async () => {
    await assert.rejects(
      buildCertificateRequest({ subject: { organizations: ['x'] } }, ecKey),
      /at least one of commonName/,
    );
    await assert.rejects(
      buildCertificateRequest({ literalSubject: 'O=x' }, ecKey),
      /at least one of commonName/,
    );
  });
});

describe('buildCertificateRequest: subject alternative names', () => {
  it("writes DNS, email, IP, URI and UPN otherName SANs in Go's order", async () => {
    const { csr } = await peculiarCsr({
      commonName: 'cn',
      otherNames: [{ oid: UPN_OID, utf8Value: 'upn@domain.test' }],
      uris: ['spiffe://cluster.local/ns/sandbox/sa/foo'],
      ipAddresses: ['127.0.0.1', '2001:db8::1', '::ffff:10.0.0.1'],
      emailAddresses: ['email@domain.test'],
      dnsNames: ['example.com', '*.example.com'],
    });
    const san = extension(csr, x509.SubjectAlternativeNameExtension, '2.5.29.17')!;
    assert.equal(san.critical, false);
    assert.deepEqual(san.names.toJSON(), [
      { type: 'dns', value: 'example.com' },
      { type: 'dns', value: '*.example.com' },
      { type: 'email', value: 'email@domain.test' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: '2001:db8::1' },
      // IPv4-mapped addresses are written as 4 bytes (net.IP.To4).
      { type: 'ip', value: '10.0.0.1' },
      { type: 'url', value: 'spiffe://cluster.local/ns/sandbox/sa/foo' },
      { type: 'upn', value: 'upn@domain.test' },
    ]);
  });

  it('matches the openssl-generated SAN reference of conformance scenario 6 (ignoring order)', async () => {
    // The reference certificate from test/e2e/suite/conformance/certificates/tests.go.
    const reference = `-----BEGIN CERTIFICATE-----
MIIDZjCCAk6gAwIBAgIUWmJ+z4OCWZg4V3XjSfEN+hItXjUwDQYJKoZIhvcNAQEL
BQAwETEPMA0GA1UEAwwGc29tZUNOMB4XDTI0MDEwMzA4NTU1NloXDTI0MDIwMjA4
NTU1NlowETEPMA0GA1UEAwwGc29tZUNOMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A
MIIBCgKCAQEAr5xmoX7/vp+wid+gOvbigYXLP/OvILyRpyj/e6IqJqj83+ImMtHt
QtOHN/E1bYQ8juVXqhhwy5BDXV6qHCfEjAKJF/oHpdVGk4GoMV/noAjbyAdqxFb+
Cr/62sZWFHcuBuh/msJj6MWWAYZkb6HPiyDaV4HdRrrefifQnBGmsO0DE2guy7Yr
CMnE25H0yZ6z1e2tecsXSEkHyPNpil39oJ+1dT3UG8coU32rMOMKs7Za/xF0yMtU
TrCzZ/ylFL4vJi/s0i9zgjBQloJud+s3J+MnbYFgv0MIaosZXuk7/FR0HNIM19Zw
VLH6dgVCcF02bnnVpOAd6KPEzdqjYdDv/QIDAQABo4G1MIGyMB0GA1UdDgQWBBRF
KVGbYoD2H1NE47wJL6xFQ83Q+DAfBgNVHSMEGDAWgBRFKVGbYoD2H1NE47wJL6xF
Q83Q+DAPBgNVHRMBAf8EBTADAQH/MF8GA1UdEQRYMFaBEWVtYWlsQGRvbWFpbi50
ZXN0oCAGCisGAQQBgjcUAgOgEgwQdXBuQGRvbWFpbjIudGVzdKAfBgorBgEEAYI3
FAIDoBEMD3VwbkBkb21haW4udGVzdDANBgkqhkiG9w0BAQsFAAOCAQEAmrouGUth
yyL3jJTe2XZCqbjNgwXrT5N8SwF8JrPNzTyuh4Qiug3N/3djmq4N4V60UAJU8Xpr
Uf8TZBQwF6VD/TSvvJKB3qjSW0T46cF++10ueEgT7mT/icyPeiMw1syWpQlciIvv
WZ/PIvHm2sTB+v8v9rhiFDyQxlnvbtG0D0TV/dEZmyrqfrBpWOP8TFgexRMQU2/4
Gb9fYHRK+LBKRTFudEXNWcDYxK3umfht/ZUsMeWUP70XaNsTd9tQWRsctxGpU10s
cKK5t8N1YDX5CV+01X3vvxpM3ciYuCY9y+lSegrIEI+izRyD7P9KaZlwMaYmsBZq
/XMa5c3nWcbXcA==
-----END CERTIFICATE-----
`;
    const referenceSan = new x509.X509Certificate(reference).getExtension(
      x509.SubjectAlternativeNameExtension,
    )!;
    const pem = await buildCertificateRequest(
      {
        commonName: 'someCN-abc',
        otherNames: [
          { oid: UPN_OID, utf8Value: 'upn@domain.test' },
          { oid: UPN_OID, utf8Value: 'upn@domain2.test' },
        ],
        emailAddresses: ['email@domain.test'],
      },
      ecKey,
    );
    const ours = decodeCertificateRequestPem(pem).extensions.find((e) => e.oid === '2.5.29.17')!;
    const generalNames = (der: Buffer) =>
      readChildren(readOne(der, Tag.SEQUENCE).value)
        .map((name) => name.raw.toString('hex'))
        .sort();
    assert.deepEqual(generalNames(ours.value), generalNames(Buffer.from(referenceSan.value)));
    // And our reader understands openssl's encoding.
    assert.deepEqual(parseCertificateRequest(pem).otherNames, [
      { oid: UPN_OID, utf8Value: 'upn@domain.test' },
      { oid: UPN_OID, utf8Value: 'upn@domain2.test' },
    ]);
  });

  it('marks the SAN extension critical when the subject is empty', async () => {
    const { pem, csr } = await peculiarCsr({ dnsNames: ['only-san.example.com'] });
    assert.equal(csr.subject, '');
    assert.ok(parseCertificateRequest(pem).subjectDer.equals(Buffer.from([0x30, 0x00])));
    assert.equal(extension(csr, x509.SubjectAlternativeNameExtension, '2.5.29.17')!.critical, true);
  });

  it('rejects names that cannot be encoded', async () => {
    await assert.rejects(
      buildCertificateRequest({ dnsNames: ['bücher.example'] }, ecKey),
      /cannot be encoded as an IA5String/,
    );
    await assert.rejects(
      buildCertificateRequest({ ipAddresses: ['10.0.0.256'] }, ecKey),
      /failed to parse IP address/,
    );
    await assert.rejects(
      buildCertificateRequest({ ipAddresses: ['fe80::1%eth0'] }, ecKey),
      /failed to parse IP address/,
    );
    await assert.rejects(
      buildCertificateRequest({ otherNames: [{ oid: 'not-an-oid', utf8Value: 'x' }] }, ecKey),
      /invalid oid/,
    );
    await assert.rejects(
      buildCertificateRequest({ otherNames: [{ oid: UPN_OID }] }, ecKey),
      /has no utf8Value/,
    );
  });
});

describe('buildCertificateRequest: usages and basic constraints', () => {
  const flags = x509.KeyUsageFlags;

  it('defaults to digital signature + key encipherment, KeyUsage critical, no EKU, no BasicConstraints', async () => {
    const { pem, csr } = await peculiarCsr({ commonName: 'x' });
    const ku = extension(csr, x509.KeyUsagesExtension, '2.5.29.15')!;
    assert.equal(ku.critical, true);
    assert.equal(ku.usages, flags.digitalSignature | flags.keyEncipherment);
    assert.equal(extension(csr, x509.ExtendedKeyUsageExtension, '2.5.29.37'), undefined);
    assert.equal(extension(csr, x509.BasicConstraintsExtension, '2.5.29.19'), undefined);
    const view = parseCertificateRequest(pem);
    assert.deepEqual(view.usages, ['digital signature', 'key encipherment']);
    assert.equal(view.isCA, false);
  });

  it('maps the usages of conformance scenario 20 to KU bits and EKU OIDs', async () => {
    const { pem, csr } = await peculiarCsr({
      commonName: 'x',
      usages: ['signing', 'data encipherment', 'server auth', 'client auth'],
    });
    assert.equal(
      extension(csr, x509.KeyUsagesExtension, '2.5.29.15')!.usages,
      flags.digitalSignature | flags.dataEncipherment,
    );
    const eku = extension(csr, x509.ExtendedKeyUsageExtension, '2.5.29.37')!;
    assert.equal(eku.critical, false);
    assert.deepEqual([...eku.usages], ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    assert.deepEqual(parseCertificateRequest(pem).usages, [
      'digital signature',
      'data encipherment',
      'server auth',
      'client auth',
    ]);
  });

  it('maps every cert-manager usage', async () => {
    const { pem } = await peculiarCsr({
      commonName: 'x',
      usages: [
        'signing',
        'digital signature',
        'content commitment',
        'key encipherment',
        'key agreement',
        'data encipherment',
        'cert sign',
        'crl sign',
        'encipher only',
        'decipher only',
        'any',
        'server auth',
        'client auth',
        'code signing',
        'email protection',
        's/mime',
        'ipsec end system',
        'ipsec tunnel',
        'ipsec user',
        'timestamping',
        'ocsp signing',
        'microsoft sgc',
        'netscape sgc',
      ],
    });
    assert.deepEqual(parseCertificateRequest(pem).usages, [
      'digital signature',
      'content commitment',
      'key encipherment',
      'data encipherment',
      'key agreement',
      'cert sign',
      'crl sign',
      'encipher only',
      'decipher only',
      'any',
      'server auth',
      'client auth',
      'code signing',
      'email protection',
      'email protection',
      'ipsec end system',
      'ipsec tunnel',
      'ipsec user',
      'timestamping',
      'ocsp signing',
      'microsoft sgc',
      'netscape sgc',
    ]);
  });

  it('adds cert sign and a critical CA BasicConstraints for isCA', async () => {
    const { pem, csr } = await peculiarCsr({ commonName: 'ca', isCA: true });
    assert.equal(
      extension(csr, x509.KeyUsagesExtension, '2.5.29.15')!.usages,
      flags.digitalSignature | flags.keyEncipherment | flags.keyCertSign,
    );
    const bc = extension(csr, x509.BasicConstraintsExtension, '2.5.29.19')!;
    assert.equal(bc.ca, true);
    assert.equal(bc.critical, true);
    assert.equal(parseCertificateRequest(pem).isCA, true);
  });

  it('leaves usages out when encodeUsagesInRequest is false', async () => {
    const { pem } = await peculiarCsr({
      commonName: 'x',
      usages: ['server auth'],
      encodeUsagesInRequest: false,
    });
    const view = parseCertificateRequest(pem);
    assert.equal(view.hasUsages, false);
    assert.deepEqual(view.extensions, []);
  });

  it('rejects unknown usages', async () => {
    await assert.rejects(buildCertificateRequest({ commonName: 'x', usages: ['frobnicate'] }, ecKey), {
      message: 'unknown key usages: [frobnicate]',
    });
  });
});

describe('buildCertificateRequest: signature algorithms', () => {
  const cases: { spec: Parameters<typeof generatePrivateKey>[0]; expected: string; oid: string }[] = [
    { spec: { algorithm: 'RSA', size: 2048 }, expected: 'SHA256WithRSA', oid: '1.2.840.113549.1.1.11' },
    { spec: { algorithm: 'RSA', size: 3072 }, expected: 'SHA384WithRSA', oid: '1.2.840.113549.1.1.12' },
    { spec: { algorithm: 'ECDSA', size: 256 }, expected: 'ECDSAWithSHA256', oid: '1.2.840.10045.4.3.2' },
    { spec: { algorithm: 'ECDSA', size: 384 }, expected: 'ECDSAWithSHA384', oid: '1.2.840.10045.4.3.3' },
    { spec: { algorithm: 'ECDSA', size: 521 }, expected: 'ECDSAWithSHA512', oid: '1.2.840.10045.4.3.4' },
    { spec: { algorithm: 'Ed25519' }, expected: 'PureEd25519', oid: '1.3.101.112' },
  ];
  for (const { spec, expected, oid } of cases) {
    it(`signs a ${JSON.stringify(spec)} request with ${expected} by default`, async () => {
      const key = await generatePrivateKey(spec);
      const { pem } = await peculiarCsr({ commonName: 'x' }, key);
      assert.equal(decodeCertificateRequestPem(pem).signatureAlgorithmOid, oid);
      assert.equal(parseCertificateRequest(pem).signatureAlgorithm, expected);
      assert.equal(verifyCertificateRequest(pem), true);
    });
  }

  it('uses an explicit signatureAlgorithm that suits the key', async () => {
    const { pem } = await peculiarCsr({ commonName: 'x', signatureAlgorithm: 'ECDSAWithSHA512' });
    assert.equal(parseCertificateRequest(pem).signatureAlgorithm, 'ECDSAWithSHA512');
    const rsa = await peculiarCsr({ commonName: 'x', signatureAlgorithm: 'SHA512WithRSA' }, rsaKey);
    assert.equal(parseCertificateRequest(rsa.pem).signatureAlgorithm, 'SHA512WithRSA');
  });

  it('rejects a signatureAlgorithm for another key type', async () => {
    await assert.rejects(
      buildCertificateRequest({ commonName: 'x', signatureAlgorithm: 'SHA256WithRSA' }, ecKey),
      /cannot be used with an ECDSA key/,
    );
    await assert.rejects(
      buildCertificateRequest({ commonName: 'x', signatureAlgorithm: 'MD5WithRSA' }, rsaKey),
      /unsupported signature algorithm/,
    );
  });
});

describe('parseCertificateRequest / verifyCertificateRequest', () => {
  it('returns the spec the request was built from', async () => {
    const spec = {
      commonName: 'www.example.com',
      subject: { organizations: ['Acme, Inc.'], countries: ['US'], serialNumber: 'SN1' },
      dnsNames: ['www.example.com'],
      ipAddresses: ['192.0.2.1', '2001:db8:0:0:1:0:0:1'],
      uris: ['https://example.com/x'],
      emailAddresses: ['a@example.com'],
      otherNames: [{ oid: '1.2.3.4', utf8Value: 'other' }],
      usages: ['server auth'],
    };
    const pem = await buildCertificateRequest(spec, ecKey);
    const view = parseCertificateRequest(pem);
    assert.equal(view.commonName, 'www.example.com');
    assert.deepEqual(view.subject.organizations, ['Acme, Inc.']);
    assert.deepEqual(view.subject.countries, ['US']);
    assert.equal(view.subject.serialNumber, 'SN1');
    assert.deepEqual(view.dnsNames, spec.dnsNames);
    assert.deepEqual(view.ipAddresses, ['192.0.2.1', '2001:db8::1:0:0:1']);
    assert.deepEqual(view.uris, spec.uris);
    assert.deepEqual(view.emailAddresses, spec.emailAddresses);
    assert.deepEqual(view.otherNames, spec.otherNames);
    assert.deepEqual(view.usages, ['server auth']);
    assert.equal(view.literalSubject, 'SERIALNUMBER=SN1,CN=www.example.com,O=Acme\\, Inc.,C=US');
    assert.ok(encodeRdnSequence(parseLiteralSubject(view.literalSubject)).equals(view.subjectDer));
    assert.equal(view.publicKey.export({ format: 'jwk' }).x, ecKey.export({ format: 'jwk' }).x);
  });

  it('detects a tampered request', async () => {
    const pem = await buildCertificateRequest({ commonName: 'x' }, ecKey);
    const der = Buffer.from(decodePemBlock(pem, ['CERTIFICATE REQUEST']).der);
    assert.equal(verifyCertificateRequest(encodePem('CERTIFICATE REQUEST', der)), true);
    const tampered = Buffer.from(der);
    tampered[der.indexOf(Buffer.from('x')) /* the CN value */] = 'y'.charCodeAt(0);
    assert.equal(verifyCertificateRequest(encodePem('CERTIFICATE REQUEST', tampered)), false);
  });

  it('produces requests openssl accepts', async (t) => {
    const reason = opensslUnavailable();
    if (reason) return t.skip(reason);
    for (const key of [ecKey, rsaKey, await generatePrivateKey({ algorithm: 'Ed25519' })]) {
      const pem = await buildCertificateRequest(
        {
          literalSubject: 'CN=x,O=y',
          dnsNames: ['a.example'],
          otherNames: [{ oid: UPN_OID, utf8Value: 'u@x' }],
          isCA: true,
        },
        key,
      );
      const result = openssl((dir) => ['req', '-verify', '-noout', '-in', `${dir}/csr.pem`], {
        'csr.pem': pem,
      });
      assert.ok(result.ok, result.output);
      assert.match(result.output, /verify OK/i);
    }
  });
});
