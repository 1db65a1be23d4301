import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileExclusive, ensurePrivateDir, PRIVATE_FILE_MODE, readFileIfExists } from '../files.ts';

/**
 * The keys of ServiceAccount tokens, as kube-apiserver takes them: one private key signs
 * (--service-account-signing-key-file), and every public key of --service-account-key-file verifies (the
 * signing key's own included), so that tokens signed by a previous key stay valid while it is listed.
 */

/** A key that verifies tokens: its JWS algorithm and the key id kube-apiserver derives from it. */
export interface VerificationKey {
  key: KeyObject;
  alg: string;
  kid: string;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

/** Where `certkit up` and `certkit apiserver` keep the key they generated, as kubeadm names it. */
export const GENERATED_SIGNING_KEY_FILE = 'sa.key';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/**
 * kube-apiserver's key id (serviceaccount.keyIDFromPublicKey): the unpadded base64url SHA-256 of the public
 * key's DER SubjectPublicKeyInfo, so that the same key gets the same id on every server that loads it.
 */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** The algorithm kube-apiserver signs and verifies with for a key: RS256 for RSA, ES256/384/512 by curve. */
export function algorithmOf(publicKey: KeyObject): string {
  if (publicKey.asymmetricKeyType === 'rsa') return 'RS256';
  if (publicKey.asymmetricKeyType === 'ec') {
    switch (publicKey.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
    }
    throw new Error(
      `unsupported elliptic curve ${publicKey.asymmetricKeyDetails?.namedCurve}: must be P-256, P-384 or P-521`,
    );
  }
  throw new Error(`unsupported key type ${publicKey.asymmetricKeyType}: must be RSA or ECDSA`);
}

function verificationKey(key: KeyObject): VerificationKey {
  return { key, alg: algorithmOf(key), kid: keyId(key) };
}

/** The signing key of a PEM private key (PKCS#1, PKCS#8 or SEC 1), as --service-account-signing-key-file holds. */
export function signingKeyFromPem(pem: string, path: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`${path}: not a PEM private key: ${(err as Error).message}`);
  }
  try {
    return { privateKey, ...verificationKey(createPublicKey(privateKey)) };
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/**
 * The public keys of one --service-account-key-file: every PEM block of it, public keys, private keys (whose
 * public half is taken) or certificates (their subject key), as kube's keyutil.ParsePublicKeysPEM reads them.
 */
export function verificationKeysFromPem(pem: string, path: string): VerificationKey[] {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new Error(`${path} holds no PEM key`);
  return blocks.map(([block, label], i) => {
    try {
      if (label === 'CERTIFICATE') return verificationKey(new X509Certificate(block).publicKey);
      return verificationKey(
        label.includes('PRIVATE') ? createPublicKey(createPrivateKey(block)) : createPublicKey(block),
      );
    } catch (err) {
      throw new Error(`${path}: PEM block ${i + 1} (${label}): ${(err as Error).message}`);
    }
  });
}

export async function loadSigningKey(path: string): Promise<SigningKey> {
  return signingKeyFromPem(await readFile(path, 'utf8'), path);
}

export async function loadVerificationKeys(path: string): Promise<VerificationKey[]> {
  return verificationKeysFromPem(await readFile(path, 'utf8'), path);
}

/**
 * The signing key `certkit up` and `certkit apiserver` use when none is given: `dir/sa.key`, generated on
 * first start (RSA 2048, as kubeadm generates its sa.key) with owner-only permissions, and read back on every
 * start after, so that tokens issued before a restart stay valid.
 */
export async function ensureSigningKey(dir: string): Promise<SigningKey> {
  const path = join(dir, GENERATED_SIGNING_KEY_FILE);
  const existing = await readFileIfExists(path);
  if (existing !== undefined) return signingKeyFromPem(existing, path);
  await ensurePrivateDir(dir);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  // A concurrent start that got there first wins: both then sign with the same key.
  if (await createFileExclusive(path, pem, PRIVATE_FILE_MODE)) return signingKeyFromPem(pem, path);
  const winner = await readFileIfExists(path);
  if (winner === undefined) throw new Error(`${path} disappeared while it was being created`);
  return signingKeyFromPem(winner, path);
}
