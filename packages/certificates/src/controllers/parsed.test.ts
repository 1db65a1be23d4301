import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../api/types.ts';
import { buildCertificateRequest, encodePrivateKey, generatePrivateKey } from '../pki/index.ts';
import { rootCa } from '@certkit/testenv/pki/ca';
import {
  CONTENT_CACHE_SIZE,
  IDLE_RELEASE_MS,
  releaseIdleParses,
  rememberPrivateKey,
  hasPublicKey,
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
