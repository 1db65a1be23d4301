import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { signatureAlgorithmFor } from './algorithms.ts';
import { decodeCertificatePems } from './certificate-der.ts';
import { buildCertificateRequest, parseCertificateRequest } from './csr.ts';
import { sequence } from './der.ts';
import { encodeBasicConstraints, ExtensionOid, findExtension } from './extensions.ts';
import { generatePrivateKey, subjectPublicKeyInfo } from './keys.ts';
import {
  canonicalNameConstraints,
  cidrAddressAndMask,
  decodeNameConstraints,
  nameConstraintsExtension,
  type NameConstraintsSpec,
} from './name-constraints.ts';
import { encodeRdnSequence, subjectRdnSequence } from './names.ts';
import { encodePem } from './pem.ts';
import { signCertificate, SigningError } from './sign.ts';
import { DAY, issue, openssl, opensslUnavailable, rootCa } from '@certkit/testenv/pki/ca';
import { encodeCertificationRequestInfo, signDer } from './x509-encode.ts';
import { x509 } from '@certkit/testenv/pki/x509-lib';

const SPEC: NameConstraintsSpec = {
  critical: true,
  permitted: {
    dnsDomains: ['example.com', '.internal.example'],
    ipRanges: ['10.1.2.3/8', '2001:db8::/32'],
    emailAddresses: ['example.com'],
    uriDomains: ['.example.com'],
  },
  excluded: {
    dnsDomains: ['bad.example.com'],
    ipRanges: ['192.168.0.0/16'],
    emailAddresses: ['admin@example.com'],
    uriDomains: ['evil.example.com'],
  },
};

/** `openssl x509 -text` of a certificate, or undefined (with the reason logged) when openssl is missing. */
function opensslText(certPem: string): string | undefined {
  const reason = opensslUnavailable();
  if (reason) {
    console.log(`# openssl cross-check skipped: ${reason}`);
    return undefined;
  }
  const result = openssl((dir) => ['x509', '-noout', '-text', '-in', join(dir, 'c.pem')], {
    'c.pem': certPem,
  });
  assert.ok(result.ok, result.output);
  return result.output;
}

describe('name constraints', () => {
  it('writes CIDRs as the masked network and its mask, as net.ParseCIDR reads them', () => {
    assert.equal(cidrAddressAndMask('10.1.2.3/8').toString('hex'), '0a000000ff000000');
    assert.equal(cidrAddressAndMask('192.168.7.0/23').toString('hex'), 'c0a80600fffffe00');
    assert.equal(
      cidrAddressAndMask('2001:db8:1::/33').toString('hex'),
      `20010db8000000000000000000000000${'ffffffff80'}${'00'.repeat(11)}`,
    );
    assert.throws(() => cidrAddressAndMask('10.0.0.0/33'), /invalid CIDR address: 10.0.0.0\/33/);
    assert.throws(() => cidrAddressAndMask('10.0.0.0'), /invalid CIDR address/);
  });

  it('adds no extension for constraints that name nothing, and refuses non-ASCII names', () => {
    assert.equal(nameConstraintsExtension(undefined), undefined);
    assert.equal(
      nameConstraintsExtension({ critical: true, permitted: {}, excluded: { dnsDomains: [] } }),
      undefined,
    );
    assert.throws(
      () => nameConstraintsExtension({ permitted: { dnsDomains: ['bücher.example'] } }),
      /cannot be encoded as an IA5String/,
    );
  });

  it('reads back what it writes, with canonical CIDRs and the critical flag', () => {
    const decoded = decodeNameConstraints(nameConstraintsExtension(SPEC)!);
    assert.deepEqual(decoded, {
      critical: true,
      permitted: {
        dnsDomains: ['example.com', '.internal.example'],
        ipRanges: ['10.0.0.0/8', '2001:db8::/32'],
        emailAddresses: ['example.com'],
        uriDomains: ['.example.com'],
      },
      excluded: {
        dnsDomains: ['bad.example.com'],
        ipRanges: ['192.168.0.0/16'],
        emailAddresses: ['admin@example.com'],
        uriDomains: ['evil.example.com'],
      },
    });
    assert.deepEqual(canonicalNameConstraints({ ...SPEC, critical: false })?.critical, false);
  });

  it('puts them into the CSR and the signed CA certificate; openssl and @peculiar/x509 read them', async () => {
    const root = await rootCa();
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest(
      { commonName: 'constrained intermediate', isCA: true, nameConstraints: SPEC },
      key,
    );
    assert.equal(parseCertificateRequest(csrPem).nameConstraints?.permitted.ipRanges[0], '10.0.0.0/8');
    const { certPem } = await signCertificate({
      csrPem,
      duration: 30 * DAY,
      isCA: true,
      issuer: { certPem: root.certPem, key: root.key },
    });
    const [leaf] = decodeCertificatePems(certPem);
    const extension = findExtension(leaf.extensions, ExtensionOid.nameConstraints);
    assert.ok(extension, 'the certificate carries Name Constraints');
    assert.equal(extension.critical, true);
    assert.deepEqual(decodeNameConstraints(extension), canonicalNameConstraints(SPEC));

    const parsed = new x509.X509Certificate(certPem).getExtension('2.5.29.30');
    assert.ok(parsed, '@peculiar/x509 finds the extension');
    assert.equal(parsed.critical, true);

    const text = opensslText(certPem);
    if (text === undefined) return;
    assert.match(text, /X509v3 Name Constraints: critical/);
    const section = text.slice(text.indexOf('X509v3 Name Constraints'));
    const permitted = section.slice(section.indexOf('Permitted:'), section.indexOf('Excluded:'));
    const excluded = section.slice(section.indexOf('Excluded:'));
    for (const line of [
      'DNS:example.com',
      'DNS:.internal.example',
      'IP:10.0.0.0/255.0.0.0',
      'IP:2001:DB8:0:0:0:0:0:0/FFFF:FFFF:0:0:0:0:0:0',
      'email:example.com',
      'URI:.example.com',
    ]) {
      assert.ok(permitted.includes(line), `permitted ${line} in\n${permitted}`);
    }
    for (const line of [
      'DNS:bad.example.com',
      'IP:192.168.0.0/255.255.0.0',
      'email:admin@example.com',
      'URI:evil.example.com',
    ]) {
      assert.ok(excluded.includes(line), `excluded ${line} in\n${excluded}`);
    }
  });

  it('marks the extension non-critical when critical is false', async () => {
    const ca = await issue({
      spec: {
        commonName: 'loose',
        isCA: true,
        nameConstraints: { permitted: { dnsDomains: ['a.example'] } },
      },
    });
    const extension = findExtension(
      decodeCertificatePems(ca.certPem)[0].extensions,
      ExtensionOid.nameConstraints,
    );
    assert.equal(extension?.critical, false);
    const text = opensslText(ca.certPem);
    if (text === undefined) return;
    assert.match(text, /X509v3 Name Constraints: *\n/);
    assert.doesNotMatch(text, /Name Constraints: critical/);
  });

  it('refuses to sign a CSR whose Name Constraints extension is malformed', async () => {
    const root = await rootCa();
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    // An empty constraints SEQUENCE: RFC 5280 forbids it, Go refuses to parse it.
    const info = encodeCertificationRequestInfo(
      encodeRdnSequence(subjectRdnSequence('bad', undefined)),
      subjectPublicKeyInfo(key),
      [
        { oid: ExtensionOid.basicConstraints, critical: true, value: encodeBasicConstraints(true) },
        { oid: ExtensionOid.nameConstraints, critical: true, value: sequence() },
      ],
    );
    const csrPem = encodePem('CERTIFICATE REQUEST', signDer(info, signatureAlgorithmFor(key), key));
    await assert.rejects(
      signCertificate({
        csrPem,
        duration: DAY,
        isCA: true,
        issuer: { certPem: root.certPem, key: root.key },
      }),
      (err: unknown) =>
        err instanceof SigningError &&
        err.reason === 'InvalidRequest' &&
        /empty name constraints extension/.test(err.message),
    );
  });
});
