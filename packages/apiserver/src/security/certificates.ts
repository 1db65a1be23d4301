import { createPrivateKey, type KeyObject, type webcrypto, X509Certificate } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import {
  ensurePrivateDir,
  readFileIfExists,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  writeFileAtomic,
} from './files.ts';
import {
  certificatePem,
  createLeafCertificate,
  createSelfSignedCa,
  type LeafIssuer,
  privateKeyPem,
  subjectKeyId,
  x509,
} from './x509.ts';

export interface ServingCertificates {
  caCertPem: string;
  certPem: string;
  keyPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const CA_VALIDITY_MS = 3650 * DAY_MS;
const SERVING_VALIDITY_MS = 365 * DAY_MS;
/** Renewing this early gives whoever runs the server a month of restarts in which it happens unnoticed. */
const RENEW_BEFORE_MS = 30 * DAY_MS;
/** Backdated like client-go's self-signed certificates, so peers with a slightly slow clock still accept them. */
const CLOCK_SKEW_MS = 60 * 60 * 1000;

const CA_SUBJECT = 'CN=certkit-ca';
const SERVING_SUBJECT = 'CN=certkit-apiserver';
/** Always included so local tools work whatever --host says. */
const DEFAULT_HOSTS = ['localhost', '127.0.0.1', '::1'];

interface SubjectAltName {
  type: 'dns' | 'ip';
  value: string;
}

interface LoadedCa extends LeafIssuer {
  certPem: string;
  cert: X509Certificate;
}

/**
 * Returns a CA and a serving certificate/key for the API server, kept in `dir/pki`. Certificates are public,
 * but they are kept owner-only like the keys: nothing in the data dir is other users' business (the kubeconfig
 * carries the CA for clients).
 *
 * The CA is created once and kept for as long as it is usable, because every kubeconfig handed out trusts it.
 * The serving certificate is cheap to replace, so it is reissued from that CA whenever it is unusable, close to
 * expiry, or missing one of `hosts` (e.g. after a restart with a different --host).
 */
export async function ensureServingCertificates(dir: string, hosts: string[]): Promise<ServingCertificates> {
  const names = subjectAltNames([...DEFAULT_HOSTS, ...hosts]);
  const pki = join(dir, 'pki');
  await ensurePrivateDir(pki);
  // mkdir leaves an existing directory's mode alone; this one holds private keys.
  await chmod(pki, PRIVATE_DIR_MODE);
  const paths = {
    caCert: join(pki, 'ca.crt'),
    caKey: join(pki, 'ca.key'),
    cert: join(pki, 'apiserver.crt'),
    key: join(pki, 'apiserver.key'),
  };
  const now = new Date();

  let ca = await loadCa(paths.caCert, paths.caKey, now);
  if (!ca) {
    const created = await createCa(now);
    // Key first: a crash in between leaves a key/cert mismatch, which the next start detects and repairs.
    await writeFileAtomic(paths.caKey, created.keyPem, PRIVATE_FILE_MODE);
    await writeFileAtomic(paths.caCert, created.certPem, PRIVATE_FILE_MODE);
    ca = await parseCa(created.certPem, created.keyPem);
  }

  const existing = await loadServing(paths.cert, paths.key, ca, names, now);
  if (existing) return { caCertPem: ca.certPem, ...existing };

  const serving = await createServing(ca, names, now);
  await writeFileAtomic(paths.key, serving.keyPem, PRIVATE_FILE_MODE);
  await writeFileAtomic(paths.cert, serving.certPem, PRIVATE_FILE_MODE);
  return { caCertPem: ca.certPem, ...serving };
}

function subjectAltNames(hosts: string[]): SubjectAltName[] {
  const seen = new Set<string>();
  const names: SubjectAltName[] = [];
  for (const host of hosts) {
    const name = subjectAltName(host);
    const key = `${name.type}:${name.value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    names.push(name);
  }
  return names;
}

const DNS_LABEL = '[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?';
/** Underscores are not valid hostnames but do occur in practice (and Go accepts them); '*' only as a whole label. */
const DNS_NAME = new RegExp(`^(\\*\\.)?${DNS_LABEL}(\\.${DNS_LABEL})*$`);

function subjectAltName(host: string): SubjectAltName {
  let value = host.trim();
  // Accept the URL form of IPv6 addresses and strip zone ids, which cannot appear in a certificate.
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  const zone = value.indexOf('%');
  if (zone > 0 && isIP(value.slice(0, zone)) === 6) value = value.slice(0, zone);

  const family = isIP(value);
  if (family === 4) return { type: 'ip', value };
  // The URL parser yields the canonical compressed form, so '0:0::1' and '::1' are recognised as one address.
  if (family === 6) return { type: 'ip', value: new URL(`http://[${value}]/`).hostname.slice(1, -1) };

  value = value.toLowerCase().replace(/\.$/, '');
  if (value.length > 253 || !DNS_NAME.test(value)) {
    throw new Error(`cannot put host ${JSON.stringify(host)} in a certificate: not a DNS name or IP address`);
  }
  return { type: 'dns', value };
}

/** Returns undefined when the CA must be replaced; read errors other than a missing file are not swallowed. */
async function loadCa(certPath: string, keyPath: string, now: Date): Promise<LoadedCa | undefined> {
  const certPem = await readFileIfExists(certPath);
  const keyPem = await readFileIfExists(keyPath);
  if (certPem === undefined || keyPem === undefined) return undefined;
  let ca: LoadedCa;
  try {
    ca = await parseCa(certPem, keyPem);
  } catch (error) {
    if (error instanceof UnsupportedKeyError) throw error;
    return undefined;
  }
  if (!ca.cert.ca) return undefined;
  // An expiring CA is replaced early so that serving certificates issued from it still get a useful lifetime.
  if (ca.cert.validToDate.getTime() - now.getTime() < RENEW_BEFORE_MS) return undefined;
  return ca;
}

class UnsupportedKeyError extends Error {}

async function parseCa(certPem: string, keyPem: string): Promise<LoadedCa> {
  const cert = new X509Certificate(certPem);
  const keyObject = createPrivateKey(keyPem);
  if (!cert.checkPrivateKey(keyObject)) throw new Error('CA key does not match the CA certificate');
  const parsed = new x509.X509Certificate(certPem);
  const keyId = await subjectKeyId(parsed);
  const { importAlgorithm, signingAlgorithm } = signingParameters(keyObject);
  const signingKey = keyObject.toCryptoKey(importAlgorithm, false, ['sign']);
  return { certPem, cert, subjectName: parsed.subjectName, keyId, signingKey, signingAlgorithm };
}

const CURVES: Record<string, { namedCurve: string; hash: string }> = {
  prime256v1: { namedCurve: 'P-256', hash: 'SHA-256' },
  secp384r1: { namedCurve: 'P-384', hash: 'SHA-384' },
  secp521r1: { namedCurve: 'P-521', hash: 'SHA-512' },
};

/** Beyond the P-256 keys created here, also accepts the common key types of a CA someone put in place by hand. */
function signingParameters(key: KeyObject): {
  importAlgorithm:
    webcrypto.AlgorithmIdentifier | webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams;
  signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
} {
  if (key.asymmetricKeyType === 'ec') {
    const curve = CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (curve) {
      return {
        importAlgorithm: { name: 'ECDSA', namedCurve: curve.namedCurve },
        signingAlgorithm: { name: 'ECDSA', hash: curve.hash },
      };
    }
  }
  if (key.asymmetricKeyType === 'rsa') {
    return {
      importAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5' },
    };
  }
  // Not treated as corruption: silently replacing a deliberately installed CA would break everyone trusting it.
  throw new UnsupportedKeyError(
    `unsupported CA key type ${key.asymmetricKeyType}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}`,
  );
}

async function loadServing(
  certPath: string,
  keyPath: string,
  ca: LoadedCa,
  names: SubjectAltName[],
  now: Date,
): Promise<{ certPem: string; keyPem: string } | undefined> {
  const certPem = await readFileIfExists(certPath);
  const keyPem = await readFileIfExists(keyPath);
  if (certPem === undefined || keyPem === undefined) return undefined;
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return undefined;
    // Catches certificates left over from a CA that has since been replaced.
    if (!cert.checkIssued(ca.cert) || !cert.verify(ca.cert.publicKey)) return undefined;
    if (cert.validToDate.getTime() - now.getTime() < RENEW_BEFORE_MS) return undefined;
    if (cert.validFromDate.getTime() > now.getTime()) return undefined;
    for (const name of names) {
      const covered =
        name.type === 'ip' ? cert.checkIP(name.value) : cert.checkHost(name.value, { subject: 'never' });
      if (covered === undefined) return undefined;
    }
  } catch {
    return undefined;
  }
  return { certPem, keyPem };
}

async function createCa(now: Date): Promise<{ certPem: string; keyPem: string }> {
  const { cert, keys } = await createSelfSignedCa({
    subject: CA_SUBJECT,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + CA_VALIDITY_MS),
  });
  return { certPem: certificatePem(cert), keyPem: privateKeyPem(keys.privateKey) };
}

async function createServing(
  ca: LoadedCa,
  names: SubjectAltName[],
  now: Date,
): Promise<{ certPem: string; keyPem: string }> {
  // A certificate outliving its issuer would be rejected by clients anyway; ending with the CA is more honest.
  const notAfter = Math.min(now.getTime() + SERVING_VALIDITY_MS, ca.cert.validToDate.getTime());
  const { cert, keys } = await createLeafCertificate({
    issuer: ca,
    subject: SERVING_SUBJECT,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(notAfter),
    extendedKeyUsages: ['serverAuth'],
    subjectAltNames: names,
  });
  return { certPem: certificatePem(cert), keyPem: privateKeyPem(keys.privateKey) };
}
