import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { encodePrivateKey, splitCertificateChain } from '@certkit/certificates/pki/index';
import { DAY, HOUR, issue, rootCa } from '@certkit/testenv/pki/ca';
import {
  chainTrust,
  expiryInWords,
  formatTlsSecret,
  relativeTime,
  rfc1123,
} from './inspect-secret-format.ts';

/** What `certkit inspect secret` prints for a Secret's data, at a fixed time, against chosen roots. */
describe('inspect secret view', () => {
  const now = new Date('2026-06-01T12:00:00Z');

  async function chain() {
    const root = await rootCa({ algorithm: 'ECDSA' }, 365 * DAY, new Date('2026-01-01T00:00:00Z'));
    const intermediate = await issue({
      spec: {
        commonName: 'intermediate',
        isCA: true,
        subject: { organizations: ['Example'], countries: ['DE'] },
      },
      issuer: { certPem: root.certPem, key: root.key },
      duration: 300 * DAY,
      now: new Date('2026-01-01T00:00:00Z'),
    });
    const leaf = await issue({
      spec: {
        commonName: 'web',
        dnsNames: ['web.example', 'www.example'],
        ipAddresses: ['10.0.0.1'],
        usages: ['digital signature', 'key encipherment', 'server auth'],
      },
      keySpec: { algorithm: 'RSA', size: 2048 },
      issuer: { certPem: intermediate.certPem, key: intermediate.key },
      duration: 90 * DAY,
      now: new Date('2026-05-01T12:00:00Z'),
    });
    // The CA signer returns the leaf with its issuer after it, as tls.crt holds them.
    assert.equal(splitCertificateChain(leaf.certPem).length, 2);
    return { root, intermediate, leaf };
  }

  it("prints cmctl's sections for the leaf: names, usages, validity, issuer, subject, certificate", async () => {
    const { root, leaf } = await chain();
    const text = formatTlsSecret(
      {
        'tls.crt': Buffer.from(leaf.certPem),
        'tls.key': Buffer.from(encodePrivateKey(leaf.key)),
        'ca.crt': Buffer.from(root.certPem),
      },
      { now, trustedRoots: [] },
    );
    const x509 = new X509Certificate(leaf.certPem);
    assert.match(
      text,
      /^Valid for:\n\tDNS Names: \n\t\t- web\.example\n\t\t- www\.example\n\tURIs: <none>\n/,
    );
    assert.match(text, /\tIP Addresses: \n\t\t- 10\.0\.0\.1\n\tEmail Addresses: <none>\n/);
    assert.match(text, /\tUsages: \n\t\t- digital signature\n\t\t- key encipherment\n\t\t- server auth\n/);
    assert.match(
      text,
      /Validity period:\n\tNot Before: Fri, 01 May 2026 12:00:00 UTC\n\tNot After: Thu, 30 Jul 2026 12:00:00 UTC\n\tState: expires in 59 days\n/,
    );
    assert.match(
      text,
      /Issued By:\n\tCommon Name:\tintermediate\n\tOrganization:\tExample\n\tOrganizationalUnit:\t<none>\n\tCountry:\tDE\n/,
    );
    assert.match(text, /Issued For:\n\tCommon Name:\tweb\n\tOrganization:\t<none>\n/);
    assert.match(text, /\tPublic Key Algorithm: \tRSA\n/);
    assert.ok(text.includes(`\tSerial Number:\t${BigInt(`0x${x509.serialNumber}`)}\n`), text);
    assert.ok(text.includes(`\tFingerprints: \t${x509.fingerprint256}\n`));
    assert.match(text, /\tIs a CA certificate: false\n\tCRL:\t<none>\n\tOCSP:\t<none>\n/);
  });

  it('shows the chain link by link, the key match, ca.crt, and trust by ca.crt but not by this computer', async () => {
    const { root, leaf } = await chain();
    const text = formatTlsSecret(
      {
        'tls.crt': Buffer.from(leaf.certPem),
        'tls.key': Buffer.from(encodePrivateKey(leaf.key)),
        'ca.crt': Buffer.from(root.certPem),
      },
      { now, trustedRoots: [] },
    );
    assert.match(
      text,
      /Chain \(tls\.crt, 2 certificates\):\n\t0: CN=web \(signed by certificate 1, expires Thu, 30 Jul 2026/,
    );
    assert.match(text, /\t1: C=DE, O=Example, CN=intermediate \(issued by CN=certkit test root, expires /);
    assert.match(text, /Private Key:\n\tMatches the certificate: yes\n/);
    assert.match(
      text,
      /CA \(ca\.crt\):\n\tCN=certkit test root \(CA, expires in 213 days\)\n\tIssued the chain: yes\n/,
    );
    assert.match(text, /\tTrusted by this computer:\tno: certificate signed by unknown authority\n/);
    assert.match(text, /\tTrusted by ca\.crt:\tyes\n/);
    assert.match(text, /\tCRL Status:\tNo CRL endpoints set\n\tOCSP Status:\tNo OCSP servers set\n$/);
  });

  it('says when tls.key is another key, and when the chain is out of order', async () => {
    const { intermediate, leaf } = await chain();
    const other = await issue({ spec: { commonName: 'other' } });
    const text = formatTlsSecret(
      {
        'tls.crt': Buffer.from(splitCertificateChain(leaf.certPem)[0] + other.certPem),
        'tls.key': Buffer.from(encodePrivateKey(other.key)),
      },
      { now, trustedRoots: [intermediate.certPem] },
    );
    assert.match(
      text,
      /Matches the certificate: NO: tls\.key is not the key of the certificate in tls\.crt\n/,
    );
    assert.match(
      text,
      /\t0: CN=web \(NOT signed by certificate 1 \(issuer C=DE, O=Example, CN=intermediate\)/,
    );
    assert.match(text, /\t1: CN=other \(self-signed, /);
    assert.match(text, /CA \(ca\.crt\): <none>\n/);
    // A root this computer trusts (here: the intermediate) signs the leaf directly.
    assert.match(text, /\tTrusted by this computer:\tyes\n\tTrusted by ca\.crt:\t<no 'ca\.crt'>\n/);
  });

  it('refuses a Secret without a certificate, in one line', () => {
    assert.throws(
      () => formatTlsSecret({}, { now, trustedRoots: [] }),
      /^Error: the Secret has no 'tls\.crt'$/,
    );
    assert.throws(
      () => formatTlsSecret({ 'tls.crt': Buffer.from('garbage') }, { now, trustedRoots: [] }),
      /^Error: no PEM data found in secret$/,
    );
  });

  it('judges trust at the given time: an expired leaf is not trusted', async () => {
    const { root, leaf } = await chain();
    const certs = splitCertificateChain(leaf.certPem).map((p) => new X509Certificate(p));
    const roots = [new X509Certificate(root.certPem)];
    assert.equal(chainTrust(certs, roots, now), 'yes');
    assert.match(
      chainTrust(certs, roots, new Date('2026-09-01T00:00:00Z')),
      /^no: certificate CN=web has expired/,
    );
    assert.equal(chainTrust(certs, [], now), 'no: certificate signed by unknown authority');
  });
});

describe('time in words', () => {
  const now = new Date('2026-06-01T12:00:00Z');
  const at = (ms: number) => new Date(now.getTime() + ms);

  it('uses the largest unit that counts at least two', () => {
    assert.equal(relativeTime(at(89 * DAY + 5 * HOUR), now), 'in 89 days');
    assert.equal(relativeTime(at(-3 * DAY), now), '3 days ago');
    assert.equal(relativeTime(at(36 * HOUR), now), 'in 36 hours');
    assert.equal(relativeTime(at(90 * 60_000), now), 'in 90 minutes');
    assert.equal(relativeTime(at(-45_000), now), '45 seconds ago');
    assert.equal(relativeTime(at(800 * DAY), now), 'in 2 years');
  });

  it('says whether a certificate is valid, expired or not yet valid', () => {
    assert.equal(expiryInWords({ notBefore: at(-DAY), notAfter: at(10 * DAY) }, now), 'expires in 10 days');
    assert.equal(
      expiryInWords({ notBefore: at(-10 * DAY), notAfter: at(-2 * DAY) }, now),
      'expired 2 days ago',
    );
    assert.equal(
      expiryInWords({ notBefore: at(5 * HOUR), notAfter: at(10 * DAY) }, now),
      'not yet valid: becomes valid in 5 hours',
    );
  });

  it("prints times as Go's RFC1123 in UTC", () => {
    assert.equal(rfc1123(now), 'Mon, 01 Jun 2026 12:00:00 UTC');
  });
});
