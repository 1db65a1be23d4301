// @peculiar/x509 resolves its dependencies through tsyringe decorators, which need the Reflect polyfill to be
// installed before the library module is evaluated; ES modules evaluate imports in order, so it comes first.
import 'reflect-metadata';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Certificates made with @peculiar/x509 on Node's WebCrypto: the API server's own CA and serving certificate
 * (certificates.ts), and the CAs and leaves tests make the same way (@certkit/testenv/pki/auth-certs), so that
 * what a test presents is built as what the server makes. P-256 keys, ECDSA with SHA-256.
 */

// Node's WebCrypto is structurally the DOM `Crypto` the library is typed against; only the nominal types differ.
export const crypto = webcrypto as unknown as Crypto;
x509.cryptoProvider.set(crypto);

export { x509 };

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' };
export const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' };

/** A certificate with the key pair it was made for. */
export interface MadeCertificate {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
}

/** An extractable P-256 key pair, so that its private key can be written out as PEM. */
export async function generateP256KeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await crypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

/** A random 128-bit serial number, as hex. */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  // Positive and minimally encoded: Go rejects negative serials, and DER forbids a leading zero byte.
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes.toString('hex');
}

/** The library omits the final newline, which tools that concatenate PEM files (bundles, `cat`) expect. */
export function certificatePem(cert: x509.X509Certificate): string {
  return `${cert.toString('pem')}\n`;
}

export function privateKeyPem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** A self-signed CA certificate on a new key: basic constraints CA:TRUE, certificate and CRL signing. */
export async function createSelfSignedCa(options: {
  /** The subject as a distinguished name string, e.g. `CN=certkit-ca`. */
  subject: string;
  notBefore: Date;
  notAfter: Date;
}): Promise<MadeCertificate> {
  const keys = await generateP256KeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name: options.subject,
      notBefore: options.notBefore,
      notAfter: options.notAfter,
      keys,
      signingAlgorithm: ECDSA_SHA256,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert, keys };
}

/** Who signs a leaf certificate. */
export interface LeafIssuer {
  /** Used as the issuer name verbatim: clients such as Go match issuer to subject byte for byte. */
  subjectName: x509.Name;
  /** The issuer's subject key identifier, copied into the leaf's authority key identifier. */
  keyId: string;
  signingKey: webcrypto.CryptoKey;
  signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
}

/**
 * An end-entity certificate on a new key, signed by `issuer`: basic constraints CA:FALSE, digital signature,
 * and the extended key usages and subject alternative names asked for (each extension left out when empty).
 */
export async function createLeafCertificate(options: {
  issuer: LeafIssuer;
  /** The subject as a distinguished name string, e.g. `CN=alice, O=developers`. */
  subject: string;
  notBefore: Date;
  notAfter: Date;
  extendedKeyUsages?: ('serverAuth' | 'clientAuth')[];
  subjectAltNames?: { type: 'dns' | 'ip'; value: string }[];
}): Promise<MadeCertificate> {
  const { issuer } = options;
  const keys = await generateP256KeyPair();
  const usages = options.extendedKeyUsages ?? [];
  const names = options.subjectAltNames ?? [];
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject: options.subject,
      issuer: issuer.subjectName,
      notBefore: options.notBefore,
      notAfter: options.notAfter,
      publicKey: keys.publicKey,
      signingKey: issuer.signingKey,
      signingAlgorithm: issuer.signingAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        ...(usages.length > 0
          ? [new x509.ExtendedKeyUsageExtension(usages.map((usage) => x509.ExtendedKeyUsage[usage]))]
          : []),
        ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
        new x509.AuthorityKeyIdentifierExtension(issuer.keyId),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert, keys };
}

/** The subject key identifier of a certificate: its extension's, or computed from its public key without one. */
export async function subjectKeyId(cert: x509.X509Certificate): Promise<string> {
  const ski = cert.getExtension(x509.SubjectKeyIdentifierExtension);
  return ski
    ? ski.keyId
    : (await x509.SubjectKeyIdentifierExtension.create(cert.publicKey, false, crypto)).keyId;
}
