import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../api/types.ts';
import { buildCertificateRequest, encodePrivateKey, generatePrivateKey } from '../pki/index.ts';
import { rootCa } from '../pki/test-support.ts';
import { requestCsr, sameKeys, secretCertificate, secretPrivateKey, valueOf } from './parsed.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('parsed views of cached objects', () => {
  it('parses a Secret once per object, and a changed (new) object again', async () => {
    const root = await rootCa();
    const data = { 'tls.crt': b64(root.certPem), 'tls.key': b64(encodePrivateKey(root.key)) };
    const secret = { metadata: { name: 's' }, data };
    const key = valueOf(secretPrivateKey(secret));
    const cert = valueOf(secretCertificate(secret));
    assert.equal(valueOf(secretPrivateKey(secret)), key, 'the same KeyObject for the same Secret object');
    assert.equal(valueOf(secretCertificate(secret)), cert);
    const updated = { ...secret, data: { ...data } };
    assert.notEqual(valueOf(secretPrivateKey(updated)), key, 'a new object is parsed afresh');
    assert.equal(sameKeys(cert.publicKey, key), true);
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
    assert.equal(sameKeys(view.publicKey, key), true);
    assert.equal(sameKeys(view.publicKey, other), false);
    assert.equal(sameKeys(view.publicKey, other), false, 'remembered answers stay right');
  });
});
