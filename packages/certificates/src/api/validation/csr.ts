/**
 * The webhook's check of `spec.request`: a PEM PKCS#10 request whose self-signature verifies
 * (pki.CertificateTemplateFromCSRPEM: DecodeX509CertificateRequestBytes + CheckSignature). Only the
 * outer DER structure is walked, enough to find the signed bytes, the key and the signature; reading the
 * request's names and extensions is the signers' business.
 */

import { createPublicKey, verify } from 'node:crypto';
import { LruMap } from '../../lru.ts';

interface Tlv {
  tag: number;
  contentStart: number;
  end: number;
}

function readTlv(der: Buffer, offset: number, limit = der.length): Tlv {
  if (offset + 2 > limit) throw new Error('asn1: syntax error: data truncated');
  const tag = der[offset];
  let length = der[offset + 1];
  let contentStart = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || contentStart + count > limit)
      throw new Error('asn1: syntax error: data truncated');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[contentStart + i];
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > limit) throw new Error('asn1: syntax error: data truncated');
  return { tag, contentStart, end };
}

function expectTag(tlv: Tlv, tag: number): Tlv {
  if (tlv.tag !== tag) throw new Error("asn1: structure error: tags don't match");
  return tlv;
}

function decodeOid(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  const first = parts.shift() ?? 0;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...parts].join('.');
}

const SEQUENCE = 0x30;
const OBJECT_IDENTIFIER = 0x06;
const BIT_STRING = 0x03;
const INTEGER = 0x02;

/** Signature algorithms by OID, as the digest node:crypto's verify takes (null for Ed25519). */
const SIGNATURE_ALGORITHMS: Record<string, { digest: string | null; family: string }> = {
  '1.2.840.113549.1.1.5': { digest: 'sha1', family: 'RSA' },
  '1.2.840.113549.1.1.11': { digest: 'sha256', family: 'RSA' },
  '1.2.840.113549.1.1.12': { digest: 'sha384', family: 'RSA' },
  '1.2.840.113549.1.1.13': { digest: 'sha512', family: 'RSA' },
  '1.2.840.10045.4.3.2': { digest: 'sha256', family: 'ECDSA' },
  '1.2.840.10045.4.3.3': { digest: 'sha384', family: 'ECDSA' },
  '1.2.840.10045.4.3.4': { digest: 'sha512', family: 'ECDSA' },
  '1.3.101.112': { digest: null, family: 'Ed25519' },
};
const RSASSA_PSS = '1.2.840.113549.1.1.10';

const VERIFICATION_FAILURE: Record<string, string> = {
  RSA: 'crypto/rsa: verification error',
  ECDSA: 'x509: ECDSA verification failure',
  Ed25519: 'x509: Ed25519 verification failure',
};

/**
 * Throws with Go's wording when `der` is not a PKCS#10 request signed by its own key. True when the signature
 * was verified; false for RSASSA-PSS, whose signature is left to the signer.
 */
function checkCertificationRequest(der: Buffer): boolean {
  const outer = expectTag(readTlv(der, 0), SEQUENCE);
  if (outer.end !== der.length) throw new Error('asn1: syntax error: trailing data');
  const info = expectTag(readTlv(der, outer.contentStart, outer.end), SEQUENCE);
  const algorithm = expectTag(readTlv(der, info.end, outer.end), SEQUENCE);
  const signature = expectTag(readTlv(der, algorithm.end, outer.end), BIT_STRING);

  const version = expectTag(readTlv(der, info.contentStart, info.end), INTEGER);
  const subject = expectTag(readTlv(der, version.end, info.end), SEQUENCE);
  const spki = expectTag(readTlv(der, subject.end, info.end), SEQUENCE);

  const oid = expectTag(readTlv(der, algorithm.contentStart, algorithm.end), OBJECT_IDENTIFIER);
  const algorithmOid = decodeOid(der.subarray(oid.contentStart, oid.end));
  // RSA-PSS parameters need more parsing than this check is worth; the signer verifies them.
  if (algorithmOid === RSASSA_PSS) return false;
  const known = SIGNATURE_ALGORITHMS[algorithmOid];
  if (!known) throw new Error('x509: cannot verify signature: algorithm unimplemented');

  let key;
  try {
    key = createPublicKey({ key: der.subarray(subject.end, spki.end), format: 'der', type: 'spki' });
  } catch {
    throw new Error('x509: unsupported public key');
  }
  // The first content octet of a BIT STRING counts unused bits; signatures use whole octets.
  const signatureBytes = der.subarray(signature.contentStart + 1, signature.end);
  const signed = der.subarray(outer.contentStart, info.end);
  let ok = false;
  try {
    ok = verify(known.digest, signed, key, signatureBytes);
  } catch {
    ok = false;
  }
  if (!ok) throw new Error(VERIFICATION_FAILURE[known.family]);
  return true;
}

/** The first PEM block's type and DER bytes (encoding/pem.Decode), or undefined. */
function decodePem(text: string): { type: string; der: Buffer } | undefined {
  const match = /-----BEGIN ([^-\r\n]*)-----\r?\n([\s\S]*?)-----END \1-----/.exec(text);
  if (!match) return undefined;
  // Drop RFC 1421 headers (lines with a colon) before the base64 body.
  const body = match[2]
    .split(/\r?\n/)
    .filter((line) => !line.includes(':'))
    .join('');
  if (!/^[A-Za-z0-9+/=\s]*$/.test(body)) return undefined;
  return { type: match[1], der: Buffer.from(body, 'base64') };
}

/** Why `spec.request` (base64 of a PEM CSR) is not a usable request, or undefined. */
export function certificateRequestError(request: string): string | undefined {
  const checked = checkedRequests.getOrCompute(request, checkRequest);
  return typeof checked === 'string' ? checked : undefined;
}

/**
 * Whether this process has verified the signature of `request` (base64 of a PEM CSR), or built and signed it
 * itself, and found it valid: the signers then need not verify it again when they sign it (docs/adr/1185).
 * False for a request not checked lately, and for an RSASSA-PSS one, which the check leaves to the signer.
 */
export function requestSignatureVerified(request: string): boolean {
  return checkedRequests.has(request) && checkedRequests.get(request) === SIGNATURE_VERIFIED;
}

/**
 * A request this process just built and signed with the key it holds: the signer's checks of it (here and
 * in the webhook's validation of the request it travels in) need not verify its signature again.
 */
export function rememberValidRequest(request: string): void {
  checkedRequests.set(request, SIGNATURE_VERIFIED);
}

/** A valid request whose signature was verified; a valid one whose signature was left to the signer. */
const SIGNATURE_VERIFIED = true;
const SIGNATURE_NOT_CHECKED = false;

/**
 * Answers by request text, the problem or whether the signature was verified: the signers check a
 * CertificateRequest's CSR at every version of it (approval, issuance), and the check verifies a signature.
 */
const checkedRequests = new LruMap<string, string | boolean>(1024);

function checkRequest(request: string): string | boolean {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  const block = decodePem(pem);
  if (!block) return 'error decoding certificate request PEM block: no PEM data was found in given input';
  try {
    return checkCertificationRequest(block.der) ? SIGNATURE_VERIFIED : SIGNATURE_NOT_CHECKED;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The request as the webhook quotes it in errors: its PEM text cut to 100 characters. */
export function truncatedRequest(request: string): string {
  const text = Buffer.from(request, 'base64').toString('utf8');
  return text.length <= 100 ? text : `${text.slice(0, 97)}...`;
}
