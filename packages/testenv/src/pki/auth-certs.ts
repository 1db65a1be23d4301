// @peculiar/x509 needs the Reflect polyfill before it is evaluated.
import 'reflect-metadata';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Certificates for authentication tests, made as an operator would make them for kube-apiserver's
 * --tls-cert-file and --client-ca-file: a CA, serving certificates for loopback, client certificates with a
 * user (CN) and groups (O).
 */

const crypto = webcrypto as unknown as Crypto;
x509.cryptoProvider.set(crypto);

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' };
const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' };
const HOUR_MS = 60 * 60 * 1000;

export interface TestKeyPair {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  /** Extended key usages; none gives a certificate without the extension. */
  usages?: ('serverAuth' | 'clientAuth')[];
  dnsNames?: string[];
  ipAddresses?: string[];
}

export interface TestCa extends TestKeyPair {
  issue(options: IssueOptions): Promise<TestKeyPair>;
}

export async function createTestCa(commonName: string): Promise<TestCa> {
  const keys = await generateKeys();
  const now = Date.now();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: `CN=${commonName}`,
      notBefore: new Date(now - HOUR_MS),
      notAfter: new Date(now + 24 * HOUR_MS),
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
  return {
    certPem: pem(caCert),
    keyPem: keyPem(keys.privateKey),
    async issue(options) {
      const leafKeys = await generateKeys();
      const subject = [
        `CN=${options.commonName}`,
        ...(options.organizations ?? []).map((o) => `O=${o}`),
      ].join(', ');
      const names = [
        ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
      ];
      const cert = await x509.X509CertificateGenerator.create(
        {
          serialNumber: serial(),
          subject,
          issuer: caCert.subjectName,
          notBefore: new Date(now - HOUR_MS),
          notAfter: new Date(now + 24 * HOUR_MS),
          publicKey: leafKeys.publicKey,
          signingKey: keys.privateKey,
          signingAlgorithm: ECDSA_SHA256,
          extensions: [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
            ...(options.usages?.length
              ? [new x509.ExtendedKeyUsageExtension(options.usages.map((u) => x509.ExtendedKeyUsage[u]))]
              : []),
            ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
            await x509.AuthorityKeyIdentifierExtension.create(caCert, false, crypto),
          ],
        },
        crypto,
      );
      return { certPem: pem(cert), keyPem: keyPem(leafKeys.privateKey) };
    },
  };
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await crypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes.toString('hex');
}

function pem(cert: x509.X509Certificate): string {
  return `${cert.toString('pem')}\n`;
}

function keyPem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }) as string;
}
