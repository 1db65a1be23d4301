/**
 * The checks kube-apiserver makes of a CertificateSigningRequest's `spec.request` and `status.certificate`
 * (pkg/apis/certificates validation: ParseCSR, CheckSignature, validateCertificate), with its messages.
 *
 * The PKCS#10 structure is parsed by @peculiar/x509; its signature is checked with node:crypto, synchronously,
 * over the CertificationRequestInfo bytes exactly as they were sent (a re-encoding could differ from what was
 * signed), which a short walk of the outer DER SEQUENCE cuts out.
 */

import 'reflect-metadata';
import { createPublicKey, constants, verify, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

interface Tlv {
  /** Where the element's header starts, its content starts, and it ends. */
  start: number;
  content: number;
  end: number;
}

function readTlv(der: Uint8Array, offset: number): Tlv {
  if (offset + 2 > der.length) throw new Error('x509: malformed certificate request');
  let length = der[offset + 1];
  let content = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || content + bytes > der.length)
      throw new Error('x509: malformed certificate request');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[content + i];
    content += bytes;
  }
  if (content + length > der.length) throw new Error('x509: malformed certificate request');
  return { start: offset, content, end: content + length };
}

/** The CertificationRequestInfo as sent, and the signature's bits. */
function signedParts(der: Uint8Array): { info: Uint8Array; signature: Uint8Array } {
  const outer = readTlv(der, 0);
  const info = readTlv(der, outer.content);
  const algorithm = readTlv(der, info.end);
  const bits = readTlv(der, algorithm.end);
  // A BIT STRING's first content byte counts unused bits; signatures use whole bytes.
  return { info: der.subarray(info.start, info.end), signature: der.subarray(bits.content + 1, bits.end) };
}

const HASHES: Record<string, string> = {
  'SHA-1': 'sha1',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};

function checkSignature(csr: x509.Pkcs10CertificateRequest, der: Uint8Array): void {
  const { info, signature } = signedParts(der);
  const key = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
  // WebCrypto's algorithm shape: a name, and the hash's for the hashed signatures.
  const algorithm = csr.signatureAlgorithm as unknown as { name: string; hash?: { name: string } };
  const hash = algorithm.hash ? HASHES[algorithm.hash.name] : undefined;
  let ok: boolean;
  switch (algorithm.name) {
    case 'RSASSA-PKCS1-v1_5':
    case 'ECDSA':
      if (!hash) throw new Error('x509: cannot verify signature: algorithm unimplemented');
      ok = verify(hash, info, key, signature);
      break;
    case 'RSA-PSS':
      if (!hash) throw new Error('x509: cannot verify signature: algorithm unimplemented');
      ok = verify(
        hash,
        info,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
        signature,
      );
      break;
    case 'Ed25519':
      ok = verify(null, info, key, signature);
      break;
    default:
      throw new Error('x509: cannot verify signature: algorithm unimplemented');
  }
  if (!ok)
    throw new Error(
      algorithm.name === 'ECDSA' ? 'x509: ECDSA verification failure' : 'crypto/rsa: verification error',
    );
}

/** Why the request is no valid PEM PKCS#10 request with a good signature; undefined when it is one. */
export function certificateRequestError(pem: string): string | undefined {
  const block = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!block || block[1] !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  const der = Buffer.from(block[2].replace(/\s+/g, ''), 'base64');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch (err) {
    return `asn1: structure error: ${(err as Error).message}`;
  }
  try {
    checkSignature(csr, der);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** validateCertificate: one or more CERTIFICATE PEM blocks without headers, each a parsable certificate. */
export function issuedCertificateError(pem: string): string | undefined {
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const [, type, body] of blocks) {
    if (type !== 'CERTIFICATE')
      return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(type)}`;
    if (/^[A-Za-z-]+:/m.test(body)) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(Buffer.from(body.replace(/\s+/g, ''), 'base64'));
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return undefined;
}
