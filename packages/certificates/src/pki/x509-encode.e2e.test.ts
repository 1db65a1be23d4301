import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { signatureAlgorithmOid, type SignatureAlgorithm } from './algorithms.ts';
import { decodeCertificateDer } from './certificate-der.ts';
import {
  buildCertificateRequest,
  decodeCertificateRequestDer,
  decodeCertificateRequestPem,
  parseCertificateRequest,
  verifyCertificateRequest,
} from './csr.ts';
import { contextTag, readChildren, readOne, Tag } from './der.ts';
import {
  encodeBasicConstraints,
  encodeSubjectKeyIdentifier,
  ExtensionOid,
  keyIdentifier,
  type Extension,
} from './extensions.ts';
import { subjectPublicKeyInfo } from './keys.ts';
import { encodeRdnSequence, parseLiteralSubject } from './names.ts';
import { encodePem } from './pem.ts';
import { signCertificate } from './sign.ts';
import { DAY, issue, openssl, opensslUnavailable, opensslVerify } from '@certkit/testenv/pki/ca';
import { encodeCertificationRequestInfo, encodeTbsCertificate, signDer } from './x509-encode.ts';

/** Each algorithm with a key it suits (explicit algorithms, so RSA needs no 3072/4096-bit keys). */
const CASES: { algorithm: SignatureAlgorithm; keyType: 'rsa' | 'ec' | 'ed25519' }[] = [
  { algorithm: 'SHA256WithRSA', keyType: 'rsa' },
  { algorithm: 'SHA384WithRSA', keyType: 'rsa' },
  { algorithm: 'SHA512WithRSA', keyType: 'rsa' },
  { algorithm: 'ECDSAWithSHA256', keyType: 'ec' },
  { algorithm: 'ECDSAWithSHA384', keyType: 'ec' },
  { algorithm: 'ECDSAWithSHA512', keyType: 'ec' },
  { algorithm: 'PureEd25519', keyType: 'ed25519' },
];

const keys: Record<string, KeyObject> = {};

before(() => {
  keys.rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  keys.ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  keys.ed25519 = generateKeyPairSync('ed25519').privateKey;
});

const NAME = encodeRdnSequence(parseLiteralSubject('CN=encoder test,O=certkit'));

/** A self-signed CA certificate made with the encoder alone, so that any algorithm can be chosen. */
function selfSignedCa(
  key: KeyObject,
  algorithm: SignatureAlgorithm,
  extra: Partial<Parameters<typeof encodeTbsCertificate>[0]> = {},
) {
  const publicKeyInfo = subjectPublicKeyInfo(key);
  const extensions: Extension[] = [
    { oid: ExtensionOid.basicConstraints, critical: true, value: encodeBasicConstraints(true) },
    {
      oid: ExtensionOid.subjectKeyIdentifier,
      critical: false,
      value: encodeSubjectKeyIdentifier(keyIdentifier(publicKeyInfo)),
    },
  ];
  const tbs = encodeTbsCertificate(
    {
      serialNumber: Buffer.from([0x01, 0x23]),
      issuer: NAME,
      subject: NAME,
      notBefore: new Date(Date.now() - DAY),
      notAfter: new Date(Date.now() + DAY),
      publicKeyInfo,
      extensions,
      ...extra,
    },
    algorithm,
  );
  return signDer(tbs, algorithm, key);
}

/** The AlgorithmIdentifier's children: the OID, then parameters if any. */
function algorithmIdentifierParts(der: Buffer) {
  const [, algorithm] = readChildren(readOne(der, Tag.SEQUENCE).value);
  return readChildren(algorithm.value);
}

function skipWithoutOpenssl(t: { skip(message: string): void }): boolean {
  const reason = opensslUnavailable();
  if (!reason) return false;
  console.log(`# openssl cross-check skipped: ${reason}`);
  t.skip(reason);
  return true;
}

describe('encodeTbsCertificate + signDer', () => {
  for (const { algorithm, keyType } of CASES) {
    it(`writes a ${algorithm} certificate that node:crypto and openssl verify`, (t) => {
      const der = selfSignedCa(keys[keyType], algorithm);
      const cert = new X509Certificate(der);
      assert.ok(cert.verify(cert.publicKey), 'X509Certificate.verify');
      const decoded = decodeCertificateDer(der);
      assert.equal(decoded.signatureAlgorithmOid, signatureAlgorithmOid(algorithm));
      // Both AlgorithmIdentifiers (inside and outside the TBS) are the same bytes, with Go's parameters.
      const outer = algorithmIdentifierParts(der);
      const inner = readChildren(readChildren(readOne(decoded.tbs, Tag.SEQUENCE).value)[2].value);
      assert.deepEqual(
        inner.map((part) => part.raw.toString('hex')),
        outer.map((part) => part.raw.toString('hex')),
      );
      if (keyType === 'rsa') {
        assert.equal(outer.length, 2);
        assert.equal(outer[1].raw.toString('hex'), '0500', 'NULL parameters');
      } else {
        assert.equal(outer.length, 1, 'absent parameters');
      }
      if (skipWithoutOpenssl(t)) return;
      const pem = encodePem('CERTIFICATE', der);
      const result = opensslVerify(pem, pem);
      assert.ok(result.ok, result.output);
    });
  }

  it('writes v3, a positive minimal serial, and no [3] when there are no extensions', () => {
    const der = selfSignedCa(keys.ec, 'ECDSAWithSHA256', {
      serialNumber: Buffer.from([0x00, 0x00, 0x80, 0x01]),
      extensions: [],
    });
    const fields = readChildren(readOne(decodeCertificateDer(der).tbs, Tag.SEQUENCE).value);
    assert.equal(fields[0].raw.toString('hex'), 'a003020102');
    assert.equal(
      fields[1].raw.toString('hex'),
      '0203008001',
      'leading zeros dropped, 0x00 added for the sign bit',
    );
    assert.equal(fields.length, 7, 'nothing after subjectPublicKeyInfo');
    assert.equal(fields.at(-1)!.tag, Tag.SEQUENCE);
    const decoded = decodeCertificateDer(der);
    assert.equal(decoded.version, 3);
    assert.deepEqual(decoded.extensions, []);
    const cert = new X509Certificate(der);
    assert.ok(cert.verify(cert.publicKey));
  });

  it('writes extensions in [3] in the given order, critical only when true', () => {
    const der = selfSignedCa(keys.ec, 'ECDSAWithSHA256');
    const fields = readChildren(readOne(decodeCertificateDer(der).tbs, Tag.SEQUENCE).value);
    assert.equal(fields.at(-1)!.tag, contextTag(3, true));
    const [bc, ski] = readChildren(readOne(fields.at(-1)!.value, Tag.SEQUENCE).value);
    assert.equal(readChildren(bc.value)[1].raw.toString('hex'), '0101ff');
    assert.equal(readChildren(ski.value).length, 2, 'DEFAULT FALSE is omitted');
  });

  it('switches to GeneralizedTime from 2050 and before 1950 (RFC 5280 §4.1.2.5), openssl agreeing', (t) => {
    const notBefore = new Date('1949-12-31T23:59:59.999Z');
    const notAfter = new Date('2050-01-01T00:00:00Z');
    const der = selfSignedCa(keys.ec, 'ECDSAWithSHA256', { notBefore, notAfter });
    const fields = readChildren(readOne(decodeCertificateDer(der).tbs, Tag.SEQUENCE).value);
    const [from, to] = readChildren(fields[4].value);
    assert.equal(from.tag, Tag.GENERALIZED_TIME);
    assert.equal(from.value.toString('latin1'), '19491231235959Z');
    assert.equal(to.tag, Tag.GENERALIZED_TIME);
    assert.equal(to.value.toString('latin1'), '20500101000000Z');
    const cert = new X509Certificate(der);
    assert.equal(cert.validFromDate.toISOString(), '1949-12-31T23:59:59.000Z');
    assert.equal(cert.validToDate.toISOString(), '2050-01-01T00:00:00.000Z');
    if (skipWithoutOpenssl(t)) return;
    const result = openssl((dir) => ['x509', '-noout', '-dates', '-in', `${dir}/cert.pem`], {
      'cert.pem': encodePem('CERTIFICATE', der),
    });
    assert.ok(result.ok, result.output);
    assert.match(result.output, /notBefore=Dec 31 23:59:59 1949 GMT/);
    assert.match(result.output, /notAfter=Jan +1 00:00:00 2050 GMT/);
  });
});

describe('signCertificate: encoding', () => {
  it('uses GeneralizedTime for a notAfter past 2049, which openssl verifies', async (t) => {
    const { certPem, caPem } = await issue({
      spec: { commonName: 'long-lived' },
      duration: 40 * 365 * DAY,
      now: new Date('2026-01-01T00:00:00Z'),
    });
    const decoded = decodeCertificateDer(new X509Certificate(certPem).raw);
    const [from, to] = readChildren(readChildren(readOne(decoded.tbs, Tag.SEQUENCE).value)[4].value);
    assert.equal(from.tag, Tag.UTC_TIME);
    assert.equal(from.value.toString('latin1'), '260101000000Z');
    assert.equal(to.tag, Tag.GENERALIZED_TIME);
    assert.equal(to.value.toString('latin1'), '20651222000000Z');
    if (skipWithoutOpenssl(t)) return;
    const result = openssl(
      (dir) => [
        'verify',
        '-attime',
        String(Date.UTC(2060, 0, 1) / 1000),
        '-CAfile',
        `${dir}/ca.pem`,
        `${dir}/cert.pem`,
      ],
      { 'ca.pem': caPem, 'cert.pem': certPem },
    );
    assert.ok(result.ok, result.output);
  });

  it('rejects a duration that ends after 9999 rather than write a bad time', async () => {
    const key = keys.ec;
    const csrPem = await buildCertificateRequest({ commonName: 'x' }, key);
    await assert.rejects(
      signCertificate({ csrPem, duration: 8000 * 365 * DAY, isCA: false, issuer: { selfSignedKey: key } }),
      { name: 'SigningError', reason: 'InvalidRequest', message: /after 9999-12-31/ },
    );
    await assert.rejects(
      signCertificate({ csrPem, duration: Infinity, isCA: false, issuer: { selfSignedKey: key } }),
      { name: 'SigningError', reason: 'InvalidRequest' },
    );
  });
});

describe('buildCertificateRequest: encoding', () => {
  for (const { algorithm, keyType } of CASES) {
    it(`signs a ${algorithm} request that verifies (node:crypto, openssl req -verify)`, async (t) => {
      const pem = await buildCertificateRequest(
        { commonName: 'x', dnsNames: ['x.example'], signatureAlgorithm: algorithm },
        keys[keyType],
      );
      const decoded = decodeCertificateRequestPem(pem);
      assert.equal(decoded.signatureAlgorithmOid, signatureAlgorithmOid(algorithm));
      assert.equal(algorithmIdentifierParts(decoded.der).length, keyType === 'rsa' ? 2 : 1);
      assert.equal(parseCertificateRequest(pem).signatureAlgorithm, algorithm);
      assert.equal(verifyCertificateRequest(pem), true);
      if (skipWithoutOpenssl(t)) return;
      const result = openssl((dir) => ['req', '-verify', '-noout', '-in', `${dir}/csr.pem`], {
        'csr.pem': pem,
      });
      assert.ok(result.ok, result.output);
      assert.match(result.output, /verify OK/i);
    });
  }

  it('writes version 0, the key as exported, and an empty [0] when there are no extensions', async () => {
    const pem = await buildCertificateRequest({ commonName: 'x', encodeUsagesInRequest: false }, keys.ec);
    const decoded = decodeCertificateRequestPem(pem);
    const [version, , spki, attributes] = readChildren(readOne(decoded.info, Tag.SEQUENCE).value);
    assert.equal(version.raw.toString('hex'), '020100');
    assert.ok(spki.raw.equals(subjectPublicKeyInfo(keys.ec)), 'the SubjectPublicKeyInfo is the signing key');
    assert.equal(attributes.raw.toString('hex'), 'a000');
    assert.deepEqual(decoded.extensions, []);
  });

  it('carries extensions in one extensionRequest attribute: SET { SEQUENCE OF Extension }', () => {
    const extensions: Extension[] = [
      { oid: ExtensionOid.basicConstraints, critical: true, value: encodeBasicConstraints(true) },
    ];
    const info = encodeCertificationRequestInfo(NAME, subjectPublicKeyInfo(keys.ed25519), extensions);
    const attributes = readChildren(readOne(info, Tag.SEQUENCE).value)[3];
    assert.equal(attributes.tag, contextTag(0, true));
    const [attribute] = readChildren(attributes.value);
    const [type, values] = readChildren(attribute.value);
    assert.equal(type.raw.toString('hex'), '06092a864886f70d01090e');
    assert.equal(values.tag, Tag.SET);
    assert.equal(readChildren(values.value).length, 1);
    const der = signDer(info, 'PureEd25519', keys.ed25519);
    assert.deepEqual(decodeCertificateRequestDer(der).extensions, extensions);
    assert.equal(verifyCertificateRequest(encodePem('CERTIFICATE REQUEST', der)), true);
  });
});
