/**
 * Private keys as cert-manager generates, encodes and compares them (pkg/util/pki/generate.go, parse.go,
 * match.go). Key generation runs on libuv's thread pool (async generateKeyPair), so RSA keygen never blocks
 * the event loop.
 */

import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { bitString, oid, sequence } from './der.ts';
import { decodePemBlock } from './pem.ts';

export type PrivateKeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';
export type PrivateKeyEncoding = 'PKCS1' | 'PKCS8';

/** The `spec.privateKey` fields that shape a key; unset fields take cert-manager's defaults. */
export interface PrivateKeySpec {
  algorithm?: PrivateKeyAlgorithm;
  size?: number;
}

export const MIN_RSA_KEY_SIZE = 2048;
export const MAX_RSA_KEY_SIZE = 8192;
export const DEFAULT_ECDSA_KEY_SIZE = 256;

/** ECDSA `size` ↔ named curve (Node's JWK/WebCrypto names). */
const CURVE_BY_SIZE: Readonly<Record<number, string>> = { 256: 'P-256', 384: 'P-384', 521: 'P-521' };
/** Node reports OpenSSL's curve names in asymmetricKeyDetails. */
const SIZE_BY_OPENSSL_CURVE: Readonly<Record<string, number>> = {
  prime256v1: 256,
  secp384r1: 384,
  secp521r1: 521,
};

const generateKeyPairAsync = promisify(generateKeyPair);

/** Generates a key for `spec` (GeneratePrivateKeyForCertificate): RSA 2048, ECDSA P-256 or Ed25519. */
export async function generatePrivateKey(spec: PrivateKeySpec = {}): Promise<KeyObject> {
  const size = spec.size && spec.size > 0 ? spec.size : undefined;
  switch (spec.algorithm ?? 'RSA') {
    case 'RSA': {
      const bits = size ?? MIN_RSA_KEY_SIZE;
      if (bits < MIN_RSA_KEY_SIZE) {
        throw new Error(`weak rsa key size specified: ${bits}. minimum key size: ${MIN_RSA_KEY_SIZE}`);
      }
      if (bits > MAX_RSA_KEY_SIZE) {
        throw new Error(`rsa key size specified too big: ${bits}. maximum key size: ${MAX_RSA_KEY_SIZE}`);
      }
      return (await generateKeyPairAsync('rsa', { modulusLength: bits, publicExponent: 65537 })).privateKey;
    }
    case 'ECDSA': {
      const curve = CURVE_BY_SIZE[size ?? DEFAULT_ECDSA_KEY_SIZE];
      if (!curve) throw new Error(`unsupported ecdsa key size specified: ${size}`);
      return (await generateKeyPairAsync('ec', { namedCurve: curve })).privateKey;
    }
    case 'Ed25519':
      return (await generateKeyPairAsync('ed25519')).privateKey;
    default:
      throw new Error(`unsupported private key algorithm specified: ${String(spec.algorithm)}`);
  }
}

/**
 * PEM for `tls.key` (EncodePrivateKey): PKCS1 (the default) means PKCS#1 for RSA and SEC 1 for ECDSA;
 * Ed25519 has no PKCS#1 form, so it is PKCS#8 whatever the encoding says.
 */
export function encodePrivateKey(key: KeyObject, encoding: PrivateKeyEncoding = 'PKCS1'): string {
  assertSupportedPrivateKey(key);
  if (encoding !== 'PKCS1' && encoding !== 'PKCS8') {
    throw new Error(`error encoding private key: unknown key encoding: ${String(encoding)}`);
  }
  if (encoding === 'PKCS1') {
    if (key.asymmetricKeyType === 'rsa') return key.export({ type: 'pkcs1', format: 'pem' }) as string;
    if (key.asymmetricKeyType === 'ec') return key.export({ type: 'sec1', format: 'pem' }) as string;
  }
  return key.export({ type: 'pkcs8', format: 'pem' }) as string;
}

const PEM_KEY_TYPES: Readonly<Record<string, 'pkcs8' | 'sec1' | 'pkcs1'>> = {
  'PRIVATE KEY': 'pkcs8',
  'EC PRIVATE KEY': 'sec1',
  'RSA PRIVATE KEY': 'pkcs1',
};

/**
 * Parses the first PEM block of `pem` (DecodePrivateKeyBytes): PKCS#8, SEC 1 or PKCS#1. Encrypted keys and
 * key types cert-manager cannot sign with are rejected.
 */
export function parsePrivateKey(pem: string | Buffer): KeyObject {
  const block = decodePemBlock(pem, Object.keys(PEM_KEY_TYPES));
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: block.der, format: 'der', type: PEM_KEY_TYPES[block.type] });
  } catch (err) {
    throw new Error(`error parsing ${block.type}: ${(err as Error).message}`, { cause: err });
  }
  assertSupportedPrivateKey(key);
  return key;
}

function assertSupportedPrivateKey(key: KeyObject): void {
  if (key.type !== 'private') throw new Error(`expected a private key, got a ${key.type} key`);
  privateKeyAlgorithm(key);
}

interface KeyShape {
  type: string | undefined;
  modulusLength?: number;
  namedCurve?: string;
}

/**
 * A key's type and details, read once per KeyObject: each read of asymmetricKeyDetails asks OpenSSL again and
 * builds a new object, and the controllers check the same cached keys against specs on every reconcile.
 */
const shapes = new WeakMap<KeyObject, KeyShape>();

function shapeOf(key: KeyObject): KeyShape {
  let shape = shapes.get(key);
  if (!shape) {
    const details = key.asymmetricKeyDetails;
    shape = {
      type: key.asymmetricKeyType,
      modulusLength: details?.modulusLength,
      namedCurve: details?.namedCurve,
    };
    shapes.set(key, shape);
  }
  return shape;
}

/** The cert-manager algorithm of a key (private or public); throws for anything else (RSA-PSS, P-224, X25519…). */
export function privateKeyAlgorithm(key: KeyObject): PrivateKeyAlgorithm {
  const shape = shapeOf(key);
  switch (shape.type) {
    case 'rsa':
      return 'RSA';
    case 'ec':
      if (SIZE_BY_OPENSSL_CURVE[shape.namedCurve ?? ''] === undefined) {
        throw new Error(`unsupported ECDSA curve ${String(shape.namedCurve)}`);
      }
      return 'ECDSA';
    case 'ed25519':
      return 'Ed25519';
    default:
      throw new Error(`unsupported key type ${String(shape.type)}`);
  }
}

/** RSA modulus bits, ECDSA curve size (256/384/521), or undefined for Ed25519. */
export function keySize(key: KeyObject): number | undefined {
  const shape = shapeOf(key);
  if (shape.type === 'rsa') return shape.modulusLength;
  if (shape.type === 'ec') return SIZE_BY_OPENSSL_CURVE[shape.namedCurve ?? ''];
  return undefined;
}

/**
 * The `spec.privateKey` fields `key` violates (PrivateKeyMatchesSpec), e.g. `["spec.privateKey.size"]`.
 * Unset fields compare against their defaults: RSA, 2048 bits, P-256; Ed25519 ignores size.
 */
export function privateKeySpecViolations(key: KeyObject, spec: PrivateKeySpec = {}): string[] {
  let algorithm: PrivateKeyAlgorithm | undefined;
  try {
    algorithm = privateKeyAlgorithm(key);
  } catch {
    algorithm = undefined;
  }
  return keyTraitsSpecViolations({ algorithm, size: algorithm && keySize(key) }, spec);
}

/** What privateKeySpecViolations looks at of a key: its algorithm (undefined: unsupported) and size. */
export interface KeyTraits {
  algorithm: PrivateKeyAlgorithm | undefined;
  size: number | undefined;
}

/** privateKeySpecViolations of a key known by its shape only (a Secret cached as facts). */
export function keyTraitsSpecViolations(shape: KeyTraits, spec: PrivateKeySpec = {}): string[] {
  const algorithm = spec.algorithm ?? 'RSA';
  if (shape.algorithm !== algorithm) return ['spec.privateKey.algorithm'];
  const wanted =
    spec.size && spec.size > 0 ? spec.size : algorithm === 'RSA' ? MIN_RSA_KEY_SIZE : DEFAULT_ECDSA_KEY_SIZE;
  if (algorithm !== 'Ed25519' && shape.size !== wanted) return ['spec.privateKey.size'];
  return [];
}

/** Whether `key` has the algorithm and size `spec` asks for (what keymanager and readiness check). */
export function keyMatchesSpec(key: KeyObject, spec: PrivateKeySpec = {}): boolean {
  return privateKeySpecViolations(key, spec).length === 0;
}

/** The public half of a private key; public keys are returned as they are. */
export function publicKeyOf(key: KeyObject): KeyObject {
  return key.type === 'private' ? createPublicKey(key) : key;
}

/**
 * Whether two keys (private or public, in any mix) have the same public key. KeyObject.equals compares key
 * material, not encodings (so a compressed and an uncompressed EC point are equal), and is far cheaper than
 * exporting both keys; it never equates a private key with a public one, hence publicKeyOf first.
 */
export function publicKeysEqual(a: KeyObject, b: KeyObject): boolean {
  const pa = publicKeyOf(a);
  const pb = publicKeyOf(b);
  // The type alone: asking fresh public keys for their details (as shapeOf does) costs more than equals.
  return pa.asymmetricKeyType === pb.asymmetricKeyType && pa.equals(pb);
}

/** RFC 5480 §2.1.1.1 namedCurve OIDs, by JWK curve name. */
const CURVE_OIDS: Readonly<Record<string, string>> = {
  'P-256': '1.2.840.10045.3.1.7',
  'P-384': '1.3.132.0.34',
  'P-521': '1.3.132.0.35',
};
const EC_PUBLIC_KEY_OID = '1.2.840.10045.2.1';
const ED25519_OID = '1.3.101.112';

/** SubjectPublicKeyInfo by key object: the CSR built from a key and the key's digest both need it. */
const spkis = new WeakMap<KeyObject, Buffer>();

/**
 * The DER SubjectPublicKeyInfo of a key (private or public), as `export({ type: 'spki' })` writes it. EC and
 * Ed25519 keys are assembled from their JWK coordinates, because OpenSSL 3's SPKI encoder costs several times
 * more than the rest of a CSR; RSA keys have no such shortcut (JWK export is slower still). Remembered per
 * key object (an issuance asks for its key's twice: its CSR, its digest; docs/adr/1185), so the Buffer is
 * shared: do not modify it.
 */
export function subjectPublicKeyInfo(key: KeyObject): Buffer {
  let spki = spkis.get(key);
  if (!spki) spkis.set(key, (spki = encodeSubjectPublicKeyInfo(key)));
  return spki;
}

function encodeSubjectPublicKeyInfo(key: KeyObject): Buffer {
  const publicKey = publicKeyOf(key);
  // The algorithm of `key` itself, whose shape is remembered (publicKey is a new object each time).
  switch (privateKeyAlgorithm(key)) {
    case 'ECDSA': {
      const { crv, x, y } = publicKey.export({ format: 'jwk' });
      // An uncompressed point (SEC 1 §2.3.3); JWK coordinates are always the field's full width.
      const point = Buffer.concat([
        Buffer.from([4]),
        Buffer.from(x!, 'base64url'),
        Buffer.from(y!, 'base64url'),
      ]);
      return sequence(sequence(oid(EC_PUBLIC_KEY_OID), oid(CURVE_OIDS[crv!])), bitString(point));
    }
    case 'Ed25519': {
      const { x } = publicKey.export({ format: 'jwk' });
      return sequence(sequence(oid(ED25519_OID)), bitString(Buffer.from(x!, 'base64url')));
    }
    case 'RSA':
      return publicKey.export({ type: 'spki', format: 'der' });
  }
}
