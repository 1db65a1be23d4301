import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCertificateRequest, parseCertificateRequest } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import { signCertificate } from './sign.ts';
import { parseCertificate } from './inspect.ts';

// A Certificate's dnsNames and its subject's lists are as long as its author makes them, within the API
// server's 3 MiB body. Each name was one argument of a spread call, and Node's stack holds about 100,000.
describe('requests and certificates with lists of 120,000 names', () => {
  it('builds a CSR of 120,000 dnsNames, signs it and reads both back, where it overflowed the stack', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const dnsNames = Array.from({ length: 120_000 }, (_, i) => `n${i}.example.com`);
    const csrPem = await buildCertificateRequest({ dnsNames }, key);
    const csr = parseCertificateRequest(csrPem);
    assert.equal(csr.dnsNames.length, 120_000);
    assert.equal(csr.dnsNames[119_999], 'n119999.example.com');

    const signed = await signCertificate({
      csrPem,
      duration: 3_600_000,
      isCA: false,
      issuer: { selfSignedKey: key },
    });
    const cert = parseCertificate(signed.certPem);
    assert.equal(cert.dnsNames.length, 120_000);
    assert.equal(cert.dnsNames[0], 'n0.example.com');
  });

  it('builds a CSR whose subject has 120,000 organizations', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const organizations = Array.from({ length: 120_000 }, (_, i) => `org ${i}`);
    const csr = parseCertificateRequest(
      await buildCertificateRequest({ commonName: 'o', subject: { organizations } }, key),
    );
    assert.equal(csr.subject.organizations?.length, 120_000);
    assert.equal(csr.subject.organizations?.[119_999], 'org 119999');
  });
});
