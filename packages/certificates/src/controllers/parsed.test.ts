import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../api/types.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  parseCertificate,
  signCertificate,
} from '../pki/index.ts';
import { parseRequestFacts } from './request-facts.ts';
import { rootCa } from '@certkit/testenv/pki/ca';
import {
  CONTENT_CACHE_SIZE,
  IDLE_RELEASE_MS,
  releaseIdleParses,
  rememberPrivateKey,
  certificateHasPublicKey,
  hasPublicKey,
  parsedCertificatePem,
  rememberBuiltRequest,
  rememberSignedCertificate,
  requestCsr,
  sameKeys,
  secretCertificate,
  secretPrivateKey,
  valueOf,
} from './parsed.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('parsed views of cached objects', () => {
  it('parses a Secret once per content: a new object with the same PEM shares it, new PEM is parsed', async () => {
    const root = await rootCa();
    const data = { 'tls.crt': b64(root.certPem), 'tls.key': b64(encodePrivateKey(root.key)) };
    const secret = { metadata: { name: 's' }, data };
    const key = valueOf(secretPrivateKey(secret));
    const cert = valueOf(secretCertificate(secret));
    assert.equal(valueOf(secretPrivateKey(secret)), key, 'the same KeyObject for the same Secret object');
    assert.equal(valueOf(secretCertificate(secret)), cert);
    const relabelled = { metadata: { name: 's', labels: { a: 'b' } }, data: { ...data } };
    assert.equal(
      valueOf(secretPrivateKey(relabelled)),
      key,
      'a new version with the same key shares the parse',
    );
    assert.equal(sameKeys(cert.publicKey, key), true);

    const other = await rootCa();
    const rotated = {
      metadata: { name: 's' },
      data: { ...data, 'tls.key': b64(encodePrivateKey(other.key)) },
    };
    const rotatedKey = valueOf(secretPrivateKey(rotated));
    assert.notEqual(rotatedKey, key, 'a new key is parsed afresh');
    assert.equal(sameKeys(cert.publicKey, rotatedKey), false);
    assert.equal(valueOf(secretCertificate(rotated)), cert, 'the unchanged certificate is shared');
  });

  it('forgets the least recently used contents beyond its bound', async () => {
    const first = await generatePrivateKey({ algorithm: 'ECDSA' });
    const secretWith = (key: string) => ({ metadata: { name: 's' }, data: { 'tls.key': b64(key) } });
    const pem = encodePrivateKey(first);
    const parsed = valueOf(secretPrivateKey(secretWith(pem)));
    for (let i = 0; i < CONTENT_CACHE_SIZE + 10; i++) {
      secretPrivateKey(secretWith(encodePrivateKey(await generatePrivateKey({ algorithm: 'ECDSA' }))));
    }
    assert.notEqual(valueOf(secretPrivateKey(secretWith(pem))), parsed, 'parsed again after eviction');
  });

  it('does not keep a parse alive for as long as its object is cached', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const cached = { metadata: { name: 'kept' }, data: { 'tls.key': b64(encodePrivateKey(key)) } };
    const parsed = valueOf(secretPrivateKey(cached));
    for (let i = 0; i < CONTENT_CACHE_SIZE; i++) {
      const other = encodePrivateKey(await generatePrivateKey({ algorithm: 'ECDSA' }));
      secretPrivateKey({ metadata: { name: `other-${i}` }, data: { 'tls.key': b64(other) } });
    }
    const again = valueOf(secretPrivateKey(cached));
    assert.notEqual(again, parsed, 'the same object is parsed again once its parse was evicted');
    assert.equal(sameKeys(again, key), true);
  });

  it('knows a key it was told about when a Secret carries its PEM, without parsing it', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const pem = encodePrivateKey(key, 'PKCS8');
    const base64 = rememberPrivateKey(pem, key);
    assert.equal(base64, b64(pem));
    assert.equal(valueOf(secretPrivateKey({ metadata: { name: 'next' }, data: { 'tls.key': base64 } })), key);
  });

  it('remembers a parse failure as the same error', () => {
    const secret = { metadata: { name: 's' }, data: { 'tls.key': b64('not a key') } };
    const first = secretPrivateKey(secret);
    assert.ok('error' in first);
    assert.equal(secretPrivateKey(secret), first);
    assert.throws(
      () => valueOf(first),
      (err) => err === first.error,
    );
  });

  it('parses a CertificateRequest CSR once, and compares keys by public key', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csr = await buildCertificateRequest({ commonName: 'a' }, key);
    const cr = { spec: { request: b64(csr), issuerRef: { name: 'i' } } } as CertificateRequest;
    const view = valueOf(requestCsr(cr));
    assert.equal(valueOf(requestCsr(cr)), view);
    assert.equal(hasPublicKey(key, view.publicKeyDigest), true);
    assert.equal(hasPublicKey(other, view.publicKeyDigest), false);
    assert.equal(hasPublicKey(other, view.publicKeyDigest), false, 'remembered answers stay right');
    const otherView = valueOf(
      requestCsr({
        spec: { request: b64(await buildCertificateRequest({ commonName: 'b' }, other)) },
      } as CertificateRequest),
    );
    assert.equal(sameKeys(key, other), false);
    assert.equal(hasPublicKey(other, otherView.publicKeyDigest), true);
  });

  it('knows the facts of a CSR built here from its key, the same as parsed from scratch', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const request = b64(
      await buildCertificateRequest({ commonName: 'built', dnsNames: ['built.example'] }, key),
    );
    rememberBuiltRequest(request, key);
    const cr = { spec: { request, issuerRef: { name: 'i' } } } as CertificateRequest;
    const facts = valueOf(requestCsr(cr));
    assert.deepEqual(facts, parseRequestFacts(request));
    assert.equal(hasPublicKey(key, facts.publicKeyDigest), true);
  });

  it('takes a certificate just signed here as parsed, the same as OpenSSL reads it', async () => {
    const root = await rootCa();
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'signed' }, key);
    const { certPem, leaf } = await signCertificate({
      csrPem,
      duration: 3_600_000,
      isCA: false,
      issuer: { certPem: root.certPem, key: root.key },
    });
    const remembered = valueOf(rememberSignedCertificate(certPem, leaf));
    assert.equal(valueOf(parsedCertificatePem(certPem)), remembered, 'not parsed again');
    const { publicKey, ...view } = remembered;
    const { publicKey: parsedKey, ...parsed } = parseCertificate(certPem);
    assert.deepEqual(view, parsed);
    assert.ok(publicKey.equals(parsedKey));
  });

  it("compares an issued certificate's key with a CSR's by its SubjectPublicKeyInfo", async () => {
    const root = await rootCa();
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    const request = b64(await buildCertificateRequest({ commonName: 'k' }, key));
    const otherRequest = b64(await buildCertificateRequest({ commonName: 'k' }, other));
    const digest = valueOf(requestCsr({ spec: { request } } as CertificateRequest)).publicKeyDigest;
    const otherDigest = valueOf(
      requestCsr({ spec: { request: otherRequest } } as CertificateRequest),
    ).publicKeyDigest;
    const { certPem } = await signCertificate({
      csrPem: Buffer.from(request, 'base64').toString(),
      duration: 3_600_000,
      isCA: false,
      issuer: { certPem: root.certPem, key: root.key },
    });
    const issued = parseCertificate(certPem);
    assert.equal(certificateHasPublicKey(issued, digest), true);
    assert.equal(certificateHasPublicKey(issued, otherDigest), false);
    // The same key in other SPKI bytes (an EC point written compressed) is compared through the key.
    const compressed = { ...issued, publicKeyInfo: Buffer.from('not the bytes the digest was taken of') };
    assert.equal(certificateHasPublicKey(compressed, digest), true);
    assert.equal(certificateHasPublicKey(compressed, otherDigest), false);
  });

  it('lets go of every parse once the caches went unused for IDLE_RELEASE_MS, not before', async () => {
    const root = await rootCa();
    const secret = {
      metadata: { name: 's' },
      data: { 'tls.crt': b64(root.certPem), 'tls.key': b64(encodePrivateKey(root.key)) },
    };
    const key = valueOf(secretPrivateKey(secret));
    const cert = valueOf(secretCertificate(secret));
    releaseIdleParses(Date.now() + IDLE_RELEASE_MS - 1000);
    assert.equal(valueOf(secretPrivateKey(secret)), key, 'still held while in use');
    assert.equal(valueOf(secretCertificate(secret)), cert);
    releaseIdleParses(Date.now() + IDLE_RELEASE_MS);
    const again = valueOf(secretPrivateKey(secret));
    assert.notEqual(again, key, 'parsed anew after the release');
    assert.notEqual(valueOf(secretCertificate(secret)), cert);
    assert.equal(sameKeys(again, key), true);
  });
});
