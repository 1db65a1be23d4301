/**
 * The conformance checks themselves, against certificates made locally with known defects: a check that
 * cannot fail proves nothing, so each default, feature and scenario check must reject what it is meant to.
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { Certificate, CertificateSpec } from '../api/types.ts';
import { encodePrivateKey, generatePrivateKey, type PrivateKeySpec } from '../pki/index.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import { opensslUnavailable } from '@certkit/testenv/conformance/openssl';
import {
  expectArbitraryKeyUsages,
  expectLiteralSubjectOrder,
  expectSameSansAsReference,
  OTHER_NAMES,
  OTHER_NAMES_EMAIL,
} from '@certkit/testenv/conformance/scenarios';
import { type Check, inspectSecret, validate } from '@certkit/testenv/conformance/validations';
import { canonicalIp, parseRfc4514 } from '@certkit/testenv/conformance/x509-view';

const DAY = 24 * 3600_000;
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const seconds = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

type Spec = Omit<CertificateSpec, 'secretName' | 'issuerRef'>;

/** A Certificate and the Secret a correct controller would have written for it. */
async function fixture(
  spec: Spec,
  options: { issuer?: Awaited<ReturnType<typeof rootCa>>; duration?: number; csrSpec?: Spec } = {},
) {
  const keySpec: PrivateKeySpec = {
    algorithm: spec.privateKey?.algorithm ?? 'RSA',
    size: spec.privateKey?.size,
  };
  const issued = await issue({
    spec: (options.csrSpec ?? spec) as never,
    keySpec,
    issuer: options.issuer ? { certPem: options.issuer.certPem, key: options.issuer.key } : 'self',
    duration: options.duration ?? (spec.duration ? toMilliseconds(parseGoDuration(spec.duration)) : 90 * DAY),
  });
  const notAfter = new X509Certificate(issued.certPem).validToDate;
  const certificate: Certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'c', namespace: 'n', generation: 2 },
    spec: { secretName: 'c-tls', issuerRef: { name: 'i' }, ...spec },
    status: {
      notAfter: seconds(notAfter),
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: 2 }],
    },
  };
  const secret: Secret = {
    metadata: { name: 'c-tls', annotations: { 'cert-manager.io/certificate-name': 'c' } },
    data: {
      'tls.crt': b64(issued.certPem),
      'tls.key': b64(encodePrivateKey(issued.key, spec.privateKey?.encoding ?? 'PKCS1')),
      'ca.crt': b64(issued.caPem),
    },
  };
  return { certificate, secret, issued };
}

function failures(f: { certificate: Certificate; secret: Secret }, extra?: Record<string, Check>) {
  return validate(inspectSecret(f.certificate, f.secret), extra);
}

function assertFails(list: string[], pattern: RegExp) {
  assert.ok(
    list.some((f) => pattern.test(f)),
    `want a failure matching ${pattern}, got ${JSON.stringify(list)}`,
  );
}

describe('conformance validations', () => {
  it('pass a correct SelfSigned and a correct CA-signed certificate', async () => {
    const spec: Spec = {
      commonName: 'web.example.com',
      dnsNames: ['web.example.com'],
      ipAddresses: ['127.0.0.1'],
      subject: { organizations: ['Org'] },
    };
    assert.deepEqual(failures(await fixture(spec)), []);
    const ca = await rootCa({ algorithm: 'ECDSA' }, 365 * DAY);
    assert.deepEqual(failures(await fixture(spec, { issuer: ca })), []);
  });

  it('reject names, organization, common name and SANs that differ from the spec', async () => {
    const f = await fixture(
      { dnsNames: ['a.example.com'] },
      { csrSpec: { commonName: 'other', dnsNames: ['b.example.com'], subject: { organizations: ['O'] } } },
    );
    const list = failures(f);
    assertFails(list, /^expectDnsNamesToMatch: DNS names/);
    assertFails(list, /^expectOrganizationToMatch: /);
    assertFails(list, /^expectValidCommonName: common name: none requested, got "other"/);

    const sans = await fixture(
      {
        commonName: 'x',
        uris: ['spiffe://a/b'],
        emailAddresses: ['a@example.com'],
        ipAddresses: ['127.0.0.1'],
      },
      { csrSpec: { commonName: 'y', uris: ['spiffe://a/c'], ipAddresses: ['10.0.0.1'] } },
    );
    const more = failures(sans);
    assertFails(more, /^expectValidCommonName: common name: want "x", got "y"/);
    assertFails(more, /^expectUrisToMatch: /);
    assertFails(more, /^expectEmailsToMatch: /);
    assertFails(more, /^expectIpsToMatch: IPs: want/);
    assertFails(more, /^expectIpsToMatch: IPs: node:crypto checkIP\(127\.0\.0\.1\)/);
  });

  it('reject a private key of the wrong algorithm, size or encoding, or not matching tls.crt', async () => {
    const f = await fixture({ dnsNames: ['a.example.com'] });
    f.certificate.spec.privateKey = { algorithm: 'ECDSA' };
    assertFails(failures(f), /^expectValidPrivateKeyData: private key: want ECDSA, got rsa/);
    f.certificate.spec.privateKey = { algorithm: 'RSA', size: 4096 };
    assertFails(failures(f), /want RSA 4096, got RSA 2048/);
    f.certificate.spec.privateKey = { encoding: 'PKCS8' };
    assertFails(failures(f), /PKCS8 RSA key as "RSA PRIVATE KEY" PEM/);
    f.certificate.spec.privateKey = {};
    f.secret.data!['tls.key'] = b64(encodePrivateKey(await generatePrivateKey({ algorithm: 'RSA' })));
    assertFails(failures(f), /tls.key does not match the public key of tls.crt/);
    const ec = await fixture({ dnsNames: ['a.example.com'], privateKey: { algorithm: 'ECDSA', size: 256 } });
    ec.certificate.spec.privateKey!.size = 384;
    assertFails(failures(ec), /want curve secp384r1, got prime256v1/);
  });

  it('reject basicConstraints, notAfter, Secret keys, annotation and Ready that do not match', async () => {
    const f = await fixture({ dnsNames: ['a.example.com'] });
    f.certificate.spec.isCA = true;
    f.certificate.status!.notAfter = '2000-01-01T00:00:00Z';
    f.certificate.status!.conditions![0].observedGeneration = 1;
    f.secret.metadata!.annotations = {};
    const list = failures(f);
    assertFails(list, /^expectValidBasicConstraints: basicConstraints: want isCA true, got false/);
    assertFails(list, /^expectValidNotAfterDate: /);
    assertFails(list, /^expectValidAnnotations: /);
    assertFails(list, /^expectConditionReadyObservedGeneration: /);
    f.secret.data = { 'tls.crt': f.secret.data!['tls.crt'] };
    assertFails(failures(f), /^expectValidKeysInSecret: /);
    f.secret.data = { 'tls.crt': b64('not a certificate'), 'tls.key': '' };
    assertFails(failures(f), /^expectValidCertificate: X.509: tls.crt holds no CERTIFICATE block/);
  });

  it('reject additional output formats that are missing or wrong', async () => {
    const f = await fixture({
      dnsNames: ['a.example.com'],
      additionalOutputFormats: [{ type: 'DER' }, { type: 'CombinedPEM' }],
    });
    let list = failures(f);
    assertFails(list, /no key.der in the Secret/);
    assertFails(list, /no tls-combined.pem in the Secret/);
    const keyPem = Buffer.from(f.secret.data!['tls.key']!, 'base64').toString();
    const crtPem = Buffer.from(f.secret.data!['tls.crt']!, 'base64').toString();
    f.secret.data!['key.der'] = b64(Buffer.from('garbage'));
    f.secret.data!['tls-combined.pem'] = b64(`${crtPem}\n${keyPem}`);
    list = failures(f);
    assertFails(list, /key.der is not the DER of tls.key/);
    assertFails(list, /tls-combined.pem is not tls.key/);
    const der = /-----BEGIN RSA PRIVATE KEY-----([\s\S]*?)-----END/.exec(keyPem)![1];
    f.secret.data!['key.der'] = Buffer.from(der.replace(/\s+/g, ''), 'base64').toString('base64');
    f.secret.data!['tls-combined.pem'] = b64(`${keyPem}\n${crtPem}`);
    assert.deepEqual(failures(f), []);
  });

  it('reject a duration off by more than 30 s', async () => {
    const f = await fixture(
      { dnsNames: ['a.example.com'], duration: '896h' },
      { duration: 896 * 3600_000 + 31_000 },
    );
    assertFails(failures(f), /^expectDurationToMatch: duration: want 3225600s ±30s, got 3225631s/);
    const ok = await fixture(
      { dnsNames: ['a.example.com'], duration: '896h' },
      { duration: 896 * 3600_000 + 29_000 },
    );
    assert.deepEqual(failures(ok), []);
  });

  it('reject a chain that does not lead to ca.crt, and a ca.crt that is not a root', async () => {
    const ca = await rootCa({ algorithm: 'ECDSA' }, 365 * DAY);
    const other = await rootCa({ algorithm: 'ECDSA' }, 365 * DAY);
    const f = await fixture({ dnsNames: ['a.example.com'] }, { issuer: ca });
    f.secret.data!['ca.crt'] = b64(other.certPem);
    const list = failures(f);
    assertFails(list, /^expectCorrectTrustChain: trust chain: no issuer for/);
    if (!opensslUnavailable())
      assertFails(list, /^expectCorrectTrustChain: trust chain: openssl verify failed/);

    // An intermediate as ca.crt: the chain still verifies, but ca.crt is no root.
    const intermediate = await issue({
      spec: { commonName: 'intermediate', isCA: true },
      issuer: { certPem: ca.certPem, key: ca.key },
      duration: 300 * DAY,
    });
    const leaf = await fixture(
      { dnsNames: ['a.example.com'] },
      { issuer: { ...intermediate, certPem: intermediate.certPem } as never },
    );
    leaf.secret.data!['ca.crt'] = b64(intermediate.certPem);
    assertFails(failures(leaf), /^expectCaRootCertificate: ca.crt root: subject and issuer differ/);

    const wrongHost = await fixture(
      { dnsNames: ['a.example.com'] },
      { csrSpec: { dnsNames: ['b.example.com'] } },
    );
    assertFails(failures(wrongHost), /trust chain: leaf not valid for host a.example.com/);
  });

  it('scenario 6 rejects SANs that differ from the reference', async () => {
    const spec: Spec = {
      otherNames: OTHER_NAMES.map((o) => ({ ...o })),
      emailAddresses: [OTHER_NAMES_EMAIL],
      commonName: 'someCN',
    };
    const good = await fixture(spec);
    assert.deepEqual(failures(good, { expectSameSansAsReference }), []);
    const bad = await fixture(spec, { csrSpec: { ...spec, otherNames: [OTHER_NAMES[0]] } });
    assertFails(failures(bad, { expectSameSansAsReference }), /differ from the hand-built/);
  });

  it('scenario 7 rejects a subject whose RDNs are not in the literal order', async () => {
    const host = '*.abc.foo-long.bar.com';
    const literalSubject = `CN=${host},OU=FooLong,OU=Bar,OU=Baz,OU=Dept.,O=Corp.`;
    const check = { order: expectLiteralSubjectOrder(host, literalSubject) };
    const good = await fixture({ literalSubject, dnsNames: [host] });
    assert.deepEqual(failures(good, check), []);
    const reordered = `CN=${host},OU=Bar,OU=FooLong,OU=Baz,OU=Dept.,O=Corp.`;
    const bad = await fixture(
      { literalSubject, dnsNames: [host] },
      { csrSpec: { literalSubject: reordered, dnsNames: [host] } },
    );
    const list = failures(bad, check);
    assertFails(list, /^order: raw subject RDNs/);
    if (!opensslUnavailable()) assertFails(list, /^order: openssl prints the subject as/);
  });

  it('scenario 20 rejects missing usages', async () => {
    const f = await fixture({ dnsNames: ['a.example.com'] });
    const list = failures(f, { expectArbitraryKeyUsages });
    assertFails(list, /EKU serverAuth missing/);
    assertFails(list, /KeyUsage dataEncipherment missing/);
  });

  it('helpers: Go durations, RFC 4514 and IP canonical forms', () => {
    assert.equal(toMilliseconds(parseGoDuration('896h')), 896 * 3600_000);
    assert.equal(toMilliseconds(parseGoDuration('1h30m15s')), 5415_000);
    assert.throws(() => parseGoDuration('10d'));
    assert.deepEqual(parseRfc4514('CN=a\\,b,O=x+OU=y'), [
      [
        { type: 'O', value: 'x' },
        { type: 'OU', value: 'y' },
      ],
      [{ type: 'CN', value: 'a,b' }],
    ]);
    assert.equal(canonicalIp('2001:DB8::1'), '2001:db8:0:0:0:0:0:1');
    assert.equal(canonicalIp('::'), '0:0:0:0:0:0:0:0');
  });
});
