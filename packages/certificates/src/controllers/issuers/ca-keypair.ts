import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { formatTime } from '@certkit/apimachinery';
import { SecretKeys } from '../../api/constants.ts';
import {
  joinCertificateChain,
  parseCertificate,
  parsePrivateKey,
  splitCertificateChain,
  type CertificateInfo,
} from '../../pki/index.ts';

/**
 * The CA key pair in an issuer's Secret, read as cert-manager's kube.SecretTLSKeyPairAndCA reads it:
 * `tls.key`, the `tls.crt` chain (signing CA first), then `ca.crt` appended when present. Unusable data is an
 * InvalidDataError (cmerrors.NewInvalidData), so callers can tell it from a failed GET.
 */

export class InvalidDataError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidDataError';
  }
}

export interface CAKeyPair {
  /** The signing CA certificate first, then the rest of its chain (and ca.crt). */
  certPem: string;
  key: KeyObject;
  /** The signing CA certificate (the first of tls.crt). */
  cert: CertificateInfo;
}

function entry(secret: Secret, key: string): string | undefined {
  const value = secret.data?.[key];
  return value ? Buffer.from(value, 'base64').toString('latin1') : undefined;
}

function certificates(pem: string, what: string): string[] {
  let certs: string[];
  try {
    certs = splitCertificateChain(pem);
  } catch (err) {
    throw new InvalidDataError(`error decoding ${what}: ${(err as Error).message}`, { cause: err });
  }
  if (certs.length === 0) throw new InvalidDataError(`error decoding ${what}: no certificate PEM data found`);
  return certs;
}

export function caKeyPairFromSecret(secret: Secret): CAKeyPair {
  const where = `secret '${secret.metadata?.namespace}/${secret.metadata?.name}'`;
  const keyPem = entry(secret, SecretKeys.tlsKey);
  if (!keyPem) throw new InvalidDataError(`no private key data for "${SecretKeys.tlsKey}" in ${where}`);
  let key: KeyObject;
  try {
    key = parsePrivateKey(keyPem);
  } catch (err) {
    throw new InvalidDataError(`error decoding private key: ${(err as Error).message}`, { cause: err });
  }
  const certPem = entry(secret, SecretKeys.tlsCert);
  if (!certPem) throw new InvalidDataError(`no certificate data for "${SecretKeys.tlsCert}" in ${where}`);
  const chain = certificates(certPem, 'certificate chain');
  let cert: CertificateInfo;
  try {
    cert = parseCertificate(chain[0]);
  } catch (err) {
    throw new InvalidDataError(`error decoding certificate: ${(err as Error).message}`, { cause: err });
  }
  const caPem = entry(secret, SecretKeys.ca);
  if (caPem?.trim()) chain.push(...certificates(caPem, 'CA certificate'));
  return { certPem: joinCertificateChain(chain), key, cert };
}

/**
 * What CA.Setup says of a Secret without one of the two entries: it reads the certificate first, then the key
 * (kube.SecretTLSCert, then SecretTLSKey), each with the words "no data for". The signer reads them the other
 * way round, with other words (caKeyPairFromSecret, as SecretTLSKeyPairAndCA); the issuer's Ready condition
 * is what `kubectl get issuer` shows, so it keeps Setup's.
 */
export function missingSetupEntry(secret: Secret): string | undefined {
  const where = `secret '${secret.metadata?.namespace}/${secret.metadata?.name}'`;
  for (const key of [SecretKeys.tlsCert, SecretKeys.tlsKey]) {
    // Go's `data[key]` with ok: present counts, even empty (which then fails to decode).
    if (secret.data?.[key] === undefined) return `no data for "${key}" in ${where}`;
  }
  return undefined;
}

/**
 * Why the CA certificate cannot sign at `now`: it has expired (from its notAfter on, as the signer counts it),
 * or it is not valid yet. A certificate signed then would not verify, so neither the issuer nor the signer
 * treats the pair as usable. cert-manager checks neither (cert-manager#6323).
 */
export function caValidityProblem(cert: CertificateInfo, now: Date): string | undefined {
  if (cert.notAfter.getTime() <= now.getTime())
    return `the CA certificate expired at ${formatTime(cert.notAfter)}`;
  if (cert.notBefore.getTime() > now.getTime()) {
    return `the CA certificate is not valid before ${formatTime(cert.notBefore)}`;
  }
  return undefined;
}

/**
 * caKeyPairFromSecret remembered per Secret version. The CA signer reads its issuer's Secret for every
 * signing, live when the Secret is unlabelled (a new object each time), so the memo is keyed by uid and
 * resourceVersion rather than by object. It holds the few CA Secrets in use; the oldest go first.
 */
const MAX_REMEMBERED_PAIRS = 256;
const pairs = new Map<string, { resourceVersion: string; pair: CAKeyPair | InvalidDataError }>();

export function cachedCaKeyPair(secret: Secret): CAKeyPair {
  const uid = secret.metadata?.uid;
  const resourceVersion = secret.metadata?.resourceVersion;
  if (!uid || !resourceVersion) return caKeyPairFromSecret(secret);
  let entry = pairs.get(uid);
  if (entry?.resourceVersion !== resourceVersion) {
    let pair: CAKeyPair | InvalidDataError;
    try {
      pair = caKeyPairFromSecret(secret);
    } catch (err) {
      if (!(err instanceof InvalidDataError)) throw err;
      pair = err;
    }
    pairs.delete(uid);
    if (pairs.size >= MAX_REMEMBERED_PAIRS) pairs.delete(pairs.keys().next().value!);
    pairs.set(uid, (entry = { resourceVersion, pair }));
  }
  if (entry.pair instanceof InvalidDataError) throw entry.pair;
  return entry.pair;
}
