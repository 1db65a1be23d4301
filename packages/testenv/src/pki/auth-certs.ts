import {
  certificatePem,
  createLeafCertificate,
  createSelfSignedCa,
  ECDSA_SHA256,
  privateKeyPem,
  subjectKeyId,
} from '@certkit/apiserver/security/x509';

/**
 * Certificates for authentication tests, made as an operator would make them for kube-apiserver's
 * --tls-cert-file and --client-ca-file: a CA, serving certificates for loopback, client certificates with a
 * user (CN) and groups (O). Built by the API server's own certificate code (`security/x509.ts`), so they are
 * made as the server makes its own.
 */

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

/** A CA valid from an hour ago for a day, and what it issues valid for the same time. */
export async function createTestCa(commonName: string): Promise<TestCa> {
  const now = Date.now();
  const notBefore = new Date(now - HOUR_MS);
  const notAfter = new Date(now + 24 * HOUR_MS);
  const ca = await createSelfSignedCa({ subject: `CN=${commonName}`, notBefore, notAfter });
  const issuer = {
    subjectName: ca.cert.subjectName,
    keyId: await subjectKeyId(ca.cert),
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ECDSA_SHA256,
  };
  return {
    certPem: certificatePem(ca.cert),
    keyPem: privateKeyPem(ca.keys.privateKey),
    async issue(options) {
      const subject = [
        `CN=${options.commonName}`,
        ...(options.organizations ?? []).map((o) => `O=${o}`),
      ].join(', ');
      const leaf = await createLeafCertificate({
        issuer,
        subject,
        notBefore,
        notAfter,
        extendedKeyUsages: options.usages,
        subjectAltNames: [
          ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
          ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
        ],
      });
      return { certPem: certificatePem(leaf.cert), keyPem: privateKeyPem(leaf.keys.privateKey) };
    },
  };
}
