import assert from 'node:assert/strict';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { decodeCertificateDer, decodeCertificatePems } from './certificate-der.ts';
import { buildCertificateRequest } from './csr.ts';
import { parseCertificate } from './inspect.ts';
import { generatePrivateKey, type PrivateKeySpec } from './keys.ts';
import { decodePemBlock, encodePem } from './pem.ts';
import { signCertificate, SigningError, type SigningFailure } from './sign.ts';
import {
  DAY,
  HOUR,
  issue,
  opensslUnavailable,
  opensslVerify,
  rootCa,
  type Issued,
} from '@certkit/testenv/pki/ca';
import { x509 } from '@certkit/testenv/pki/x509-lib';

function cert(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

function peculiar(pem: string): x509.X509Certificate {
  return new x509.X509Certificate(pem);
}

/** openssl verify, or a skip with the reason when openssl is missing. */
function assertOpensslVerifies(
  t: { diagnostic(message: string): void },
  root: string,
  leaf: string,
  intermediates?: string,
) {
  const reason = opensslUnavailable();
  if (reason) {
    t.diagnostic(`openssl cross-check skipped: ${reason}`);
    console.log(`# openssl cross-check skipped: ${reason}`);
    return;
  }
  const result = opensslVerify(root, leaf, intermediates);
  assert.ok(result.ok, result.output);
}

function rejectsWith(reason: SigningFailure, message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof SigningError, String(err));
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    return true;
  };
}

const KEY_SPECS: PrivateKeySpec[] = [
  { algorithm: 'RSA' },
  { algorithm: 'ECDSA', size: 256 },
  { algorithm: 'ECDSA', size: 384 },
  { algorithm: 'ECDSA', size: 521 },
  { algorithm: 'Ed25519' },
];

const SIGNATURE_OIDS: Record<string, string> = {
  RSA: '1.2.840.113549.1.1.11',
  'ECDSA/256': '1.2.840.10045.4.3.2',
  'ECDSA/384': '1.2.840.10045.4.3.3',
  'ECDSA/521': '1.2.840.10045.4.3.4',
  Ed25519: '1.3.101.112',
};

const signatureOidFor = (spec: PrivateKeySpec) =>
  SIGNATURE_OIDS[spec.algorithm === 'ECDSA' ? `ECDSA/${spec.size}` : spec.algorithm!];

describe('signCertificate: self-signed', () => {
  for (const keySpec of KEY_SPECS) {
    it(`issues a verifiable self-signed ${JSON.stringify(keySpec)} certificate whose CA is itself`, async (t) => {
      const issued = await issue({ spec: { commonName: 'self', dnsNames: ['self.example'] }, keySpec });
      assert.equal(issued.caPem, issued.certPem);
      const c = cert(issued.certPem);
      assert.ok(c.verify(c.publicKey));
      assert.equal(c.subject, 'CN=self');
      assert.equal(c.issuer, 'CN=self');
      assert.equal(decodeCertificateDer(c.raw).signatureAlgorithmOid, signatureOidFor(keySpec));
      // No AuthorityKeyIdentifier on a self-issued certificate (as Go), but a SubjectKeyIdentifier.
      const p = peculiar(issued.certPem);
      assert.equal(p.getExtension(x509.AuthorityKeyIdentifierExtension), null);
      assert.ok(p.getExtension(x509.SubjectKeyIdentifierExtension));
      assertOpensslVerifies(t, issued.caPem, issued.certPem);
    });
  }

  it('rejects a key that is not the CSR key', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'x' }, key);
    await assert.rejects(
      signCertificate({ csrPem, duration: HOUR, isCA: false, issuer: { selfSignedKey: other } }),
      rejectsWith('KeyMismatch', /CSR not signed by referenced private key/),
    );
  });
});

/** The PEM of `csrPem` with the last octet of its signature changed: well formed, signed by no one. */
function withBrokenSignature(csrPem: string): string {
  const der = Buffer.from(decodePemBlock(csrPem, ['CERTIFICATE REQUEST']).der);
  der[der.length - 1] ^= 0x01;
  return encodePem('CERTIFICATE REQUEST', der);
}

describe('signCertificate: a CSR whose signature the caller verified (csrSignatureVerified)', () => {
  it('is not verified again, and is checked for everything else', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    const root = await rootCa();
    const csrPem = withBrokenSignature(await buildCertificateRequest({ commonName: 'x' }, key));
    const ca = { certPem: root.certPem, key: root.key };
    await assert.rejects(
      signCertificate({ csrPem, duration: HOUR, isCA: false, issuer: ca }),
      rejectsWith('InvalidRequest', /CSR signature is invalid/),
    );
    // The option says the signature was verified: it is the caller's word (the signers' webhook check).
    const { certPem, leaf } = await signCertificate({
      csrPem,
      duration: HOUR,
      isCA: false,
      issuer: ca,
      csrSignatureVerified: true,
    });
    assert.deepEqual(leaf.der, cert(certPem).raw);
    assert.ok(cert(certPem).publicKey.equals(createPublicKey(key)));
    // A self-signed issuer's key is still compared with the CSR's.
    await assert.rejects(
      signCertificate({
        csrPem,
        duration: HOUR,
        isCA: false,
        issuer: { selfSignedKey: other },
        csrSignatureVerified: true,
      }),
      rejectsWith('KeyMismatch', /CSR not signed by referenced private key/),
    );
    await assert.rejects(
      signCertificate({
        csrPem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
        duration: HOUR,
        isCA: false,
        issuer: ca,
        csrSignatureVerified: true,
      }),
      rejectsWith('InvalidRequest', /failed to decode CSR/),
    );
  });
});

describe('signCertificate: CA', () => {
  let root: Issued;

  before(async () => {
    root = await rootCa({ algorithm: 'RSA' });
  });

  for (const keySpec of KEY_SPECS) {
    it(`issues a ${JSON.stringify(keySpec)} leaf from an RSA CA that verifies against it`, async (t) => {
      const leaf = await issue({
        spec: { commonName: 'leaf', dnsNames: ['leaf.example'] },
        keySpec,
        issuer: { certPem: root.certPem, key: root.key },
      });
      assert.equal(leaf.caPem, root.certPem);
      const c = cert(leaf.certPem);
      const ca = cert(root.certPem);
      assert.ok(c.verify(ca.publicKey));
      assert.ok(c.checkIssued(ca));
      // The issuer's algorithm decides the signature: RSA-2048 → SHA-256.
      assert.equal(decodeCertificateDer(c.raw).signatureAlgorithmOid, '1.2.840.113549.1.1.11');
      // The certificate's issuer is the CA's subject, byte for byte.
      assert.ok(decodeCertificateDer(c.raw).issuer.equals(decodeCertificateDer(ca.raw).subject));
      const aki = peculiar(leaf.certPem).getExtension(x509.AuthorityKeyIdentifierExtension)!;
      const ski = peculiar(root.certPem).getExtension(x509.SubjectKeyIdentifierExtension)!;
      assert.equal(aki.keyId, ski.keyId);
      assertOpensslVerifies(t, root.certPem, leaf.certPem);
    });
  }

  for (const keySpec of KEY_SPECS.slice(1)) {
    it(`signs with the issuer key's default algorithm (${JSON.stringify(keySpec)} CA)`, async () => {
      const ca = await rootCa(keySpec);
      const leaf = await issue({
        spec: { commonName: 'leaf' },
        issuer: { certPem: ca.certPem, key: ca.key },
      });
      assert.equal(
        decodeCertificateDer(cert(leaf.certPem).raw).signatureAlgorithmOid,
        signatureOidFor(keySpec),
      );
      assert.ok(cert(leaf.certPem).verify(cert(ca.certPem).publicKey));
    });
  }

  it('makes a usable intermediate: root → intermediate → leaf verifies, and the chain omits the root', async (t) => {
    const intermediate = await issue({
      spec: { commonName: 'intermediate', isCA: true },
      keySpec: { algorithm: 'ECDSA', size: 384 },
      issuer: { certPem: root.certPem, key: root.key },
    });
    assert.equal(intermediate.caPem, root.certPem);
    assert.equal(decodeCertificatePems(intermediate.certPem).length, 1);
    assert.equal(cert(intermediate.certPem).ca, true);

    // As the CA issuer reads its Secret: tls.crt, then ca.crt.
    const leaf = await issue({
      spec: { commonName: 'leaf', dnsNames: ['leaf.example'] },
      issuer: { certPem: intermediate.certPem + intermediate.caPem, key: intermediate.key },
    });
    const chain = decodeCertificatePems(leaf.certPem);
    assert.equal(chain.length, 2, 'leaf + intermediate');
    assert.ok(chain[1].der.equals(decodeCertificatePems(intermediate.certPem)[0].der));
    assert.equal(leaf.caPem, root.certPem);
    assert.ok(cert(leaf.certPem).verify(cert(intermediate.certPem).publicKey));
    assertOpensslVerifies(t, leaf.caPem, leaf.certPem, intermediate.certPem);
    if (!opensslUnavailable()) {
      // Sanity check of the cross-check itself: without the intermediate the chain cannot be built.
      assert.equal(
        opensslVerify(
          leaf.caPem,
          decodeCertificatePems(leaf.certPem).map((c) => encodePem('CERTIFICATE', c.der))[0],
        ).ok,
        false,
      );
    }

    // Without the root, the intermediate is the top of the chain and becomes ca.crt.
    const partial = await issue({
      spec: { commonName: 'leaf2' },
      issuer: { certPem: intermediate.certPem, key: intermediate.key },
    });
    assert.equal(decodeCertificatePems(partial.certPem).length, 2);
    assert.equal(partial.caPem, intermediate.certPem);

    // A second-level intermediate, as cert-manager's CA e2e suite does.
    const second = await issue({
      spec: { commonName: 'second', isCA: true },
      issuer: { certPem: intermediate.certPem + intermediate.caPem, key: intermediate.key },
    });
    const deepLeaf = await issue({
      spec: { commonName: 'deep' },
      issuer: { certPem: second.certPem + second.caPem, key: second.key },
    });
    assert.equal(decodeCertificatePems(deepLeaf.certPem).length, 3);
    assert.equal(deepLeaf.caPem, root.certPem);
    assertOpensslVerifies(t, root.certPem, deepLeaf.certPem, deepLeaf.certPem);
  });

  it('rejects a CA key that does not match the CA certificate, every time, and signs once the PEM matches', async () => {
    const other = await rootCa();
    // The same key object throughout, as the CA Secret cache hands it out while the Secret's tls.crt is fixed.
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        issue({ spec: { commonName: 'x' }, issuer: { certPem: other.certPem, key: root.key } }),
        rejectsWith('InvalidIssuer', /doesn't match parent's PublicKey/),
      );
    }
    const fixed = await issue({
      spec: { commonName: 'x' },
      issuer: { certPem: root.certPem, key: root.key },
    });
    assert.equal(fixed.caPem, root.certPem);
  });

  it('rejects an issuer certificate that is not a CA', async () => {
    const notCa = await issue({ spec: { commonName: 'not a ca' } });
    await assert.rejects(
      issue({ spec: { commonName: 'x' }, issuer: { certPem: notCa.certPem, key: notCa.key } }),
      rejectsWith('InvalidIssuer', /not a CA/),
    );
  });

  it('adds CRL distribution points, OCSP servers and issuing certificate URLs', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'x' }, key);
    const { certPem } = await signCertificate({
      csrPem,
      duration: DAY,
      isCA: false,
      issuer: { certPem: root.certPem, key: root.key },
      crlDistributionPoints: ['http://crl.example/ca.crl'],
      ocspServers: ['http://ocsp.example'],
      issuingCertificateURLs: ['http://ca.example/ca.crt'],
    });
    const p = peculiar(certPem);
    const crl = p.getExtension(x509.CRLDistributionPointsExtension)!;
    assert.deepEqual(
      [...crl.distributionPoints].map((dp) =>
        dp.distributionPoint?.fullName?.map((n) => n.uniformResourceIdentifier),
      ),
      [['http://crl.example/ca.crl']],
    );
    const aia = p.getExtension(x509.AuthorityInfoAccessExtension)!;
    assert.deepEqual(
      aia.ocsp.map((n) => n.value),
      ['http://ocsp.example'],
    );
    assert.deepEqual(
      aia.caIssuers.map((n) => n.value),
      ['http://ca.example/ca.crt'],
    );
    const info = parseCertificate(certPem);
    assert.deepEqual(info.crlDistributionPoints, ['http://crl.example/ca.crl']);
    assert.deepEqual(info.ocspServers, ['http://ocsp.example']);
    assert.deepEqual(info.issuingCertificateURLs, ['http://ca.example/ca.crt']);
    assert.equal(
      cert(certPem).infoAccess,
      'OCSP - URI:http://ocsp.example\nCA Issuers - URI:http://ca.example/ca.crt',
    );
  });
});

describe('signCertificate: validity', () => {
  it('starts at `now` (no backdating) and lasts `duration`', async () => {
    const now = new Date('2026-03-01T12:34:56.789Z');
    const { certPem } = await issue({ spec: { commonName: 'x' }, duration: 896 * HOUR, now });
    const c = cert(certPem);
    assert.equal(c.validFromDate.toISOString(), '2026-03-01T12:34:56.000Z');
    assert.equal(
      c.validToDate.toISOString(),
      new Date(now.getTime() + 896 * HOUR).toISOString().replace('.789', '.000'),
    );
  });

  it('never outlives its CA: notAfter is capped at the CA certificate’s notAfter', async () => {
    const now = new Date();
    const ca = await rootCa({ algorithm: 'ECDSA' }, 2 * HOUR, now);
    const leaf = await issue({
      spec: { commonName: 'x' },
      duration: 90 * DAY,
      now,
      issuer: { certPem: ca.certPem, key: ca.key },
    });
    assert.equal(cert(leaf.certPem).validTo, cert(ca.certPem).validTo);
    const short = await issue({
      spec: { commonName: 'y' },
      duration: HOUR,
      now,
      issuer: { certPem: ca.certPem, key: ca.key },
    });
    assert.equal(
      cert(short.certPem).validToDate.getTime() - cert(short.certPem).validFromDate.getTime(),
      HOUR,
    );
  });

  it('refuses to sign with an expired CA rather than issue an expired certificate', async () => {
    const then = new Date(Date.now() - 10 * DAY);
    const ca = await rootCa({ algorithm: 'ECDSA' }, DAY, then);
    await assert.rejects(
      issue({ spec: { commonName: 'x' }, issuer: { certPem: ca.certPem, key: ca.key } }),
      rejectsWith('InvalidIssuer', /CA certificate expired/),
    );
  });

  it('uses GeneralizedTime past 2049', async () => {
    const { certPem } = await issue({
      spec: { commonName: 'x' },
      duration: 40 * 365 * DAY,
      now: new Date('2026-01-01T00:00:00Z'),
    });
    assert.equal(cert(certPem).validToDate.getUTCFullYear(), 2065);
  });

  it('rejects a non-positive duration', async () => {
    await assert.rejects(
      issue({ spec: { commonName: 'x' }, duration: 0 }),
      rejectsWith('InvalidRequest', /duration/),
    );
  });
});

describe('signCertificate: serial numbers', () => {
  it('uses random, positive serials of at most 128 bits', async () => {
    const key = await generatePrivateKey({ algorithm: 'Ed25519' });
    const csrPem = await buildCertificateRequest({ commonName: 'x' }, key);
    const serials = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const { certPem } = await signCertificate({
        csrPem,
        duration: HOUR,
        isCA: false,
        issuer: { selfSignedKey: key },
      });
      const serial = decodeCertificateDer(cert(certPem).raw).serial;
      assert.equal(serial[0] & 0x80, 0, 'positive');
      assert.ok(
        serial.some((b) => b !== 0),
        'non-zero',
      );
      assert.ok(serial.length <= 17, `${serial.length} bytes`);
      serials.add(serial.toString('hex'));
    }
    assert.equal(serials.size, 50);
  });
});

describe('signCertificate: extensions', () => {
  it('takes usages and basic constraints from the request (CA:FALSE critical on leaves)', async () => {
    const { certPem } = await issue({
      spec: { commonName: 'x', usages: ['signing', 'data encipherment', 'server auth', 'client auth'] },
    });
    const p = peculiar(certPem);
    const bc = p.getExtension(x509.BasicConstraintsExtension)!;
    assert.equal(bc.ca, false);
    assert.equal(bc.critical, true);
    const ku = p.getExtension(x509.KeyUsagesExtension)!;
    assert.equal(ku.critical, true);
    assert.equal(ku.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.dataEncipherment);
    assert.deepEqual(
      [...p.getExtension(x509.ExtendedKeyUsageExtension)!.usages],
      ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2'],
    );
  });

  it('issues CA certificates with CA:TRUE critical and cert sign', async () => {
    const ca = await rootCa();
    const p = peculiar(ca.certPem);
    const bc = p.getExtension(x509.BasicConstraintsExtension)!;
    assert.equal(bc.ca, true);
    assert.equal(bc.critical, true);
    assert.equal(bc.pathLength, undefined);
    assert.ok(p.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.keyCertSign);
  });

  it('copies subject and SANs from the CSR byte for byte, SAN critical only for an empty subject', async () => {
    const literalSubject = 'CN=*.x.foo-long.bar.com,OU=FooLong,OU=Bar,OU=Baz,OU=Dept.,O=Corp.';
    const named = await issue({ spec: { literalSubject, dnsNames: ['a.example'], ipAddresses: ['::1'] } });
    const csrDer = decodePemBlock(named.csrPem, ['CERTIFICATE REQUEST']).der;
    const certDer = decodeCertificateDer(cert(named.certPem).raw);
    assert.ok(csrDer.includes(certDer.subject));
    const san = peculiar(named.certPem).getExtension(x509.SubjectAlternativeNameExtension)!;
    assert.equal(san.critical, false);
    assert.deepEqual(san.names.toJSON(), [
      { type: 'dns', value: 'a.example' },
      { type: 'ip', value: '::1' },
    ]);
    const anonymous = await issue({ spec: { dnsNames: ['only.example'] } });
    assert.equal(
      peculiar(anonymous.certPem).getExtension(x509.SubjectAlternativeNameExtension)!.critical,
      true,
    );
  });

  it('honours KeyUsage/BasicConstraints in the CSR only when they agree with the request', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const serverCsr = await buildCertificateRequest({ commonName: 'x', usages: ['server auth'] }, key);
    await assert.rejects(
      signCertificate({ csrPem: serverCsr, duration: HOUR, isCA: false, issuer: { selfSignedKey: key } }),
      rejectsWith(
        'InvalidRequest',
        /^encoded CSR error: the KeyUsages \[\] do not match the expected KeyUsages \[ 'digital signature', 'key encipherment' \]$/,
      ),
    );
    const caCsr = await buildCertificateRequest({ commonName: 'x', isCA: true }, key);
    await assert.rejects(
      signCertificate({ csrPem: caCsr, duration: HOUR, isCA: false, issuer: { selfSignedKey: key } }),
      rejectsWith('InvalidRequest', /IsCA true does not match expected value false/),
    );
    // A CSR without usages takes whatever the request says.
    const bare = await buildCertificateRequest({ commonName: 'x', encodeUsagesInRequest: false }, key);
    const { certPem } = await signCertificate({
      csrPem: bare,
      duration: HOUR,
      isCA: false,
      usages: ['client auth'],
      issuer: { selfSignedKey: key },
    });
    assert.deepEqual(
      [...peculiar(certPem).getExtension(x509.ExtendedKeyUsageExtension)!.usages],
      ['1.3.6.1.5.5.7.3.2'],
    );
    await assert.rejects(
      signCertificate({
        csrPem: bare,
        duration: HOUR,
        isCA: false,
        usages: ['bogus'],
        issuer: { selfSignedKey: key },
      }),
      rejectsWith('InvalidRequest', /unknown key usages: \[bogus\]/),
    );
  });
});

describe('signCertificate: bad requests', () => {
  it('rejects a CSR whose signature does not verify', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'abc' }, key);
    const der = Buffer.from(decodePemBlock(csrPem, ['CERTIFICATE REQUEST']).der);
    der[der.indexOf(Buffer.from('abc'))] = 'x'.charCodeAt(0);
    await assert.rejects(
      signCertificate({
        csrPem: encodePem('CERTIFICATE REQUEST', der),
        duration: HOUR,
        isCA: false,
        issuer: { selfSignedKey: key },
      }),
      rejectsWith('InvalidRequest', /CSR signature is invalid/),
    );
  });

  it('rejects input that is not a CSR', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    await assert.rejects(
      signCertificate({ csrPem: 'garbage', duration: HOUR, isCA: false, issuer: { selfSignedKey: key } }),
      rejectsWith('InvalidRequest', /failed to decode CSR/),
    );
  });
});
