import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bitString, oid, readChildren, readOne, sequence, Tag } from '../../pki/der.ts';
import { decodePemBlock, encodePem } from '../../pki/pem.ts';
import { buildCertificateRequest, generatePrivateKey } from '../../pki/index.ts';
import { certificateRequestError, rememberValidRequest, requestSignatureVerified } from './csr.ts';

const base64Pem = (pem: string) => Buffer.from(pem).toString('base64');

async function csrPem(commonName: string, algorithm: 'ECDSA' | 'RSA' = 'ECDSA'): Promise<string> {
  return buildCertificateRequest({ commonName }, await generatePrivateKey({ algorithm }));
}

/** The request's own info and signature under another AlgorithmIdentifier. */
function withAlgorithm(pem: string, algorithmOid: string): string {
  const der = decodePemBlock(pem, ['CERTIFICATE REQUEST']).der;
  const [info, , signature] = readChildren(readOne(der, Tag.SEQUENCE).value);
  const signed = sequence(info.raw, sequence(oid(algorithmOid)), bitString(signature.value.subarray(1)));
  return encodePem('CERTIFICATE REQUEST', signed);
}

describe('requestSignatureVerified', () => {
  it('is true once the webhook check verified the signature, not before', async () => {
    const request = base64Pem(await csrPem('checked'));
    assert.equal(requestSignatureVerified(request), false);
    assert.equal(certificateRequestError(request), undefined);
    assert.equal(requestSignatureVerified(request), true);
  });

  it('is false for a request whose signature does not verify', async () => {
    const der = Buffer.from(decodePemBlock(await csrPem('broken'), ['CERTIFICATE REQUEST']).der);
    der[der.length - 1] ^= 0x01;
    const request = base64Pem(encodePem('CERTIFICATE REQUEST', der));
    assert.match(certificateRequestError(request) ?? '', /verification failure/);
    assert.equal(requestSignatureVerified(request), false);
  });

  it('is false for an RSASSA-PSS request, whose signature the check leaves to the signer', async () => {
    const request = base64Pem(withAlgorithm(await csrPem('pss', 'RSA'), '1.2.840.113549.1.1.10'));
    assert.equal(certificateRequestError(request), undefined);
    assert.equal(requestSignatureVerified(request), false);
  });

  it('is true for a request this process built and signed (rememberValidRequest)', async () => {
    const request = base64Pem(await csrPem('built'));
    rememberValidRequest(request);
    assert.equal(requestSignatureVerified(request), true);
    assert.equal(certificateRequestError(request), undefined);
  });
});
