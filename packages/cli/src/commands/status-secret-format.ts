import { X509Certificate } from 'node:crypto';
import { parseCertificate, type CertificateInfo } from '@certkit/certificates/pki/index';

/**
 * The certificate lines of the Secret section of `certkit status certificate NAME`: cmctl's, in its order and
 * words (Issuer Country … Serial Number, with Go's names of algorithms and usages and lower-case hex), so that
 * what users and scripts read from `cmctl status certificate` reads the same; then what certkit adds (subject,
 * validity, SANs, whether it is a CA, the SHA-256 fingerprint). Pure: the command reads the Secret.
 */

/** Go's x509.KeyUsage names, by cert-manager's usage name (certkit's pki speaks cert-manager's). */
const KEY_USAGE_NAMES: Readonly<Record<string, string>> = {
  'digital signature': 'Digital Signature',
  'content commitment': 'Content Commitment',
  'key encipherment': 'Key Encipherment',
  'data encipherment': 'Data Encipherment',
  'key agreement': 'Key Agreement',
  'cert sign': 'Cert Sign',
  'crl sign': 'CRL Sign',
  'encipher only': 'Encipher Only',
  'decipher only': 'Decipher Only',
};

/**
 * cmctl's names of Go's x509.ExtKeyUsage values, by cert-manager's usage name or, for the two Go knows and
 * cert-manager has no name for, by OID. Other EKUs are not ExtKeyUsage values in Go (UnknownExtKeyUsage), so
 * cmctl does not list them.
 */
const EXT_KEY_USAGE_NAMES: Readonly<Record<string, string>> = {
  any: 'Any',
  'server auth': 'Server Authentication',
  'client auth': 'Client Authentication',
  'code signing': 'Code Signing',
  'email protection': 'Email Protection',
  'ipsec end system': 'IPSEC End System',
  'ipsec tunnel': 'IPSEC Tunnel',
  'ipsec user': 'IPSEC User',
  timestamping: 'Time Stamping',
  'ocsp signing': 'OCSP Signing',
  'microsoft sgc': 'Microsoft Server Gated Crypto',
  'netscape sgc': 'Netscape Server Gated Crypto',
  '1.3.6.1.4.1.311.2.1.22': 'Microsoft Commercial Code Signing',
  '1.3.6.1.4.1.311.61.1.1': 'Microsoft Kernel Code Signing',
};

/** Go's x509.SignatureAlgorithm names, by cert-manager's name (pki's signatureAlgorithm) or OID. */
const SIGNATURE_ALGORITHM_NAMES: Readonly<Record<string, string>> = {
  SHA256WithRSA: 'SHA256-RSA',
  SHA384WithRSA: 'SHA384-RSA',
  SHA512WithRSA: 'SHA512-RSA',
  ECDSAWithSHA256: 'ECDSA-SHA256',
  ECDSAWithSHA384: 'ECDSA-SHA384',
  ECDSAWithSHA512: 'ECDSA-SHA512',
  PureEd25519: 'Ed25519',
  '1.2.840.113549.1.1.5': 'SHA1-RSA',
  '1.2.840.113549.1.1.4': 'MD5-RSA',
  '1.2.840.10045.4.1': 'ECDSA-SHA1',
  '1.2.840.10040.4.3': 'DSA-SHA1',
};

/** Go's x509.PublicKeyAlgorithm names; "0" is what Go prints for one it does not know. */
function publicKeyAlgorithm(cert: CertificateInfo): string {
  const type = cert.publicKey.asymmetricKeyType;
  if (type === 'rsa') return 'RSA';
  if (type === 'ec') return 'ECDSA';
  if (type === 'ed25519') return 'Ed25519';
  if (type === 'dsa') return 'DSA';
  return '0';
}

/** Go's hex.EncodeToString(serial.Bytes()): lower case, the integer's bytes without leading zeros. */
function serialHex(upperHex: string): string {
  const value = BigInt(`0x${upperHex || '0'}`);
  if (value === 0n) return '';
  const hex = value.toString(16);
  return hex.length % 2 ? `0${hex}` : hex;
}

/** Node prints a distinguished name one attribute a line; the view wants them on one. */
function oneLine(dn: string | undefined): string {
  // A certificate with its names only in the SAN extension has an empty subject, which Node gives as undefined.
  return dn?.split('\n').filter(Boolean).join(', ') || '<empty>';
}

/** The lines under `Secret:` / `  Name: …` for the PEM of `tls.crt` (its first certificate). */
export function secretCertificateLines(pem: Buffer): string[] {
  const cert = parseCertificate(pem);
  const x509 = new X509Certificate(cert.der);
  const names = (list: readonly string[], table: Readonly<Record<string, string>>) =>
    list.flatMap((name) => (table[name] ? [table[name]] : [])).join(', ');
  return [
    `  Issuer Country: ${cert.issuer.countries.join(', ')}`,
    `  Issuer Organisation: ${cert.issuer.organizations.join(', ')}`,
    `  Issuer Common Name: ${cert.issuer.commonName}`,
    `  Key Usage: ${names(cert.keyUsages, KEY_USAGE_NAMES)}`,
    `  Extended Key Usages: ${names(cert.extKeyUsages, EXT_KEY_USAGE_NAMES)}`,
    `  Public Key Algorithm: ${publicKeyAlgorithm(cert)}`,
    `  Signature Algorithm: ${SIGNATURE_ALGORITHM_NAMES[cert.signatureAlgorithm] ?? '0'}`,
    `  Subject Key ID: ${cert.subjectKeyId ?? ''}`,
    `  Authority Key ID: ${cert.authorityKeyId ?? ''}`,
    `  Serial Number: ${serialHex(cert.serialNumber)}`,
    // certkit's additions, after cmctl's lines.
    `  Subject: ${oneLine(x509.subject)}`,
    `  Not Before: ${x509.validFromDate.toISOString()}`,
    `  Not After: ${x509.validToDate.toISOString()}`,
    ...(x509.subjectAltName ? [`  Subject Alternative Names: ${x509.subjectAltName}`] : []),
    `  Is CA: ${x509.ca}`,
    `  Fingerprint (SHA-256): ${x509.fingerprint256}`,
  ];
}
