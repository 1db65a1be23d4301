/**
 * Signature algorithms: cert-manager's names, the defaults it picks per key (signatureAlgorithmFromPublicKey),
 * their AlgorithmIdentifiers, and signing and verification with node:crypto.
 */

import { constants, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { oid, sequence, tlv, Tag } from './der.ts';
import { keySize, privateKeyAlgorithm, type PrivateKeyAlgorithm } from './keys.ts';

export type SignatureAlgorithm =
  | 'SHA256WithRSA'
  | 'SHA384WithRSA'
  | 'SHA512WithRSA'
  | 'ECDSAWithSHA256'
  | 'ECDSAWithSHA384'
  | 'ECDSAWithSHA512'
  | 'PureEd25519';

interface AlgorithmInfo {
  key: PrivateKeyAlgorithm;
  /** node:crypto's digest name; none for Ed25519, which hashes internally. */
  hash?: 'sha256' | 'sha384' | 'sha512';
  oid: string;
}

const ALGORITHMS: Readonly<Record<SignatureAlgorithm, AlgorithmInfo>> = {
  SHA256WithRSA: { key: 'RSA', hash: 'sha256', oid: '1.2.840.113549.1.1.11' },
  SHA384WithRSA: { key: 'RSA', hash: 'sha384', oid: '1.2.840.113549.1.1.12' },
  SHA512WithRSA: { key: 'RSA', hash: 'sha512', oid: '1.2.840.113549.1.1.13' },
  ECDSAWithSHA256: { key: 'ECDSA', hash: 'sha256', oid: '1.2.840.10045.4.3.2' },
  ECDSAWithSHA384: { key: 'ECDSA', hash: 'sha384', oid: '1.2.840.10045.4.3.3' },
  ECDSAWithSHA512: { key: 'ECDSA', hash: 'sha512', oid: '1.2.840.10045.4.3.4' },
  PureEd25519: { key: 'Ed25519', oid: '1.3.101.112' },
};

/**
 * AlgorithmIdentifiers as Go writes them: NULL parameters for the RSA PKCS#1 v1.5 algorithms (RFC 4055 §5
 * requires them), none for ECDSA (RFC 5758 §3.2) and Ed25519 (RFC 8410 §3), which forbid them.
 */
const ALGORITHM_IDENTIFIERS: Readonly<Record<SignatureAlgorithm, Buffer>> = Object.fromEntries(
  Object.entries(ALGORITHMS).map(([name, info]) => [
    name,
    info.key === 'RSA' ? sequence(oid(info.oid), tlv(Tag.NULL)) : sequence(oid(info.oid)),
  ]),
) as Record<SignatureAlgorithm, Buffer>;

/**
 * What cert-manager signs with when nothing is asked for: RSA by modulus size (≥4096 SHA-512, ≥3072 SHA-384,
 * else SHA-256), ECDSA by curve (P-256 SHA-256, P-384 SHA-384, P-521 SHA-512), Ed25519 pure.
 */
export function defaultSignatureAlgorithm(key: KeyObject): SignatureAlgorithm {
  const size = keySize(key) ?? 0;
  switch (privateKeyAlgorithm(key)) {
    case 'RSA':
      if (size < 2048) throw new Error(`invalid size ${size} for RSA key on signing certificate`);
      return size >= 4096 ? 'SHA512WithRSA' : size >= 3072 ? 'SHA384WithRSA' : 'SHA256WithRSA';
    case 'ECDSA':
      return size === 521 ? 'ECDSAWithSHA512' : size === 384 ? 'ECDSAWithSHA384' : 'ECDSAWithSHA256';
    case 'Ed25519':
      return 'PureEd25519';
  }
}

/** `requested` if given (it must suit the key, as Go's x509 insists), else the key's default. */
export function signatureAlgorithmFor(key: KeyObject, requested?: string): SignatureAlgorithm {
  if (!requested) return defaultSignatureAlgorithm(key);
  if (!Object.hasOwn(ALGORITHMS, requested)) throw new Error(`unsupported signature algorithm: ${requested}`);
  const algorithm = requested as SignatureAlgorithm;
  const keyAlgorithm = privateKeyAlgorithm(key);
  if (ALGORITHMS[algorithm].key !== keyAlgorithm) {
    throw new Error(`signature algorithm ${algorithm} cannot be used with an ${keyAlgorithm} key`);
  }
  return algorithm;
}

/** DER AlgorithmIdentifier for `algorithm` (a shared constant: do not modify it). */
export function signatureAlgorithmIdentifier(algorithm: SignatureAlgorithm): Buffer {
  return ALGORITHM_IDENTIFIERS[algorithm];
}

/**
 * Signs `data` with `key` (which must suit `algorithm`, see signatureAlgorithmFor) in the form X.509 and
 * PKCS#10 carry: an RSASSA-PKCS1-v1_5 signature, a DER ECDSA-Sig-Value, or a pure Ed25519 signature.
 */
export function signData(algorithm: SignatureAlgorithm, key: KeyObject, data: Buffer): Buffer {
  const { hash } = ALGORITHMS[algorithm];
  return sign(hash ?? null, data, { key, dsaEncoding: 'der', padding: constants.RSA_PKCS1_PADDING });
}

export function signatureAlgorithmOid(algorithm: SignatureAlgorithm): string {
  return ALGORITHMS[algorithm].oid;
}

/** cert-manager's name for a signature algorithm OID, if it has one. */
export function signatureAlgorithmName(oid: string): SignatureAlgorithm | undefined {
  return (Object.keys(ALGORITHMS) as SignatureAlgorithm[]).find((name) => ALGORITHMS[name].oid === oid);
}

/** Algorithms accepted when verifying: cert-manager's seven plus SHA-1, which Go still accepts on CSRs. */
const VERIFY_ALGORITHMS: Readonly<Record<string, { key: PrivateKeyAlgorithm; hash: string | null }>> = {
  ...Object.fromEntries(
    Object.values(ALGORITHMS).map((info) => [info.oid, { key: info.key, hash: info.hash ?? null }]),
  ),
  '1.2.840.113549.1.1.5': { key: 'RSA', hash: 'SHA1' },
  '1.2.840.10045.4.1': { key: 'ECDSA', hash: 'SHA1' },
};

/**
 * Checks a signature over `data` made by the key in `spki` (DER SubjectPublicKeyInfo or a KeyObject) with the
 * algorithm `oid`. Signatures are in X.509 form (DER for ECDSA).
 */
export function verifySignature(
  oid: string,
  data: Buffer,
  publicKey: Buffer | KeyObject,
  signature: Buffer,
): boolean {
  const algorithm = VERIFY_ALGORITHMS[oid];
  if (!algorithm) throw new Error(`x509: cannot verify signature: algorithm ${oid} is unimplemented`);
  const key = Buffer.isBuffer(publicKey)
    ? createPublicKey({ key: publicKey, format: 'der', type: 'spki' })
    : publicKey;
  if (privateKeyAlgorithm(key) !== algorithm.key) {
    throw new Error(
      `x509: signature algorithm specifies an ${algorithm.key} public key, but have a ${key.asymmetricKeyType} key`,
    );
  }
  return verify(algorithm.hash, data, { key, dsaEncoding: 'der' }, signature);
}
