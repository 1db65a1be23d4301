import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
// jose is imported when an account key is loaded (an ACME issuer exists), not with this module: the controller
// loads the ACME code with its other controllers (docs/adr/1101-controller-process-setup.md).
import type { JWK } from 'jose';

/** JWS algorithms for account keys: RS256 for RSA (cert-manager's keys), ES256/ES384 for P-256/P-384. */
export type AccountKeyAlgorithm = 'RS256' | 'ES256' | 'ES384';

/**
 * An account key ready for signing: the private key, the JWS `alg` it implies, the public JWK sent in
 * `jwk` headers, and its RFC 7638 thumbprint (the second half of every key authorization). Built once per
 * client, since the JWK export and the hash would otherwise run on every request.
 */
export interface AccountKey {
  readonly privateKey: KeyObject;
  readonly algorithm: AccountKeyAlgorithm;
  readonly publicJwk: JWK;
  /** Unpadded base64url SHA-256 JWK thumbprint. */
  readonly thumbprint: string;
}

/** The account key from a private KeyObject or PEM (PKCS#1, PKCS#8 or SEC1); other key types are refused. */
export async function loadAccountKey(key: KeyObject | string | Buffer): Promise<AccountKey> {
  const privateKey = typeof key === 'string' || Buffer.isBuffer(key) ? createPrivateKey(key) : key;
  if (privateKey.type !== 'private') throw new Error('an ACME account key must be a private key');
  const algorithm = algorithmFor(privateKey);
  // Only the public members: exportJWK of the private key would put `d` into every newAccount request.
  const { exportJWK } = await import('jose');
  const publicJwk = await exportJWK(createPublicKey(privateKey));
  const thumbprint = await jwkThumbprint(publicJwk);
  return { privateKey, algorithm, publicJwk, thumbprint };
}

/** RFC 7638: SHA-256 over the key's required members in lexical order, unpadded base64url. */
export async function jwkThumbprint(jwk: JWK): Promise<string> {
  const { calculateJwkThumbprint } = await import('jose');
  return calculateJwkThumbprint(jwk, 'sha256');
}

function algorithmFor(key: KeyObject): AccountKeyAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return 'RS256';
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    throw new Error(
      `unsupported ACME account key curve ${curve ?? 'unknown'} (P-256 and P-384 are supported)`,
    );
  }
  throw new Error(`unsupported ACME account key type ${type ?? 'unknown'} (RSA and ECDSA are supported)`);
}
