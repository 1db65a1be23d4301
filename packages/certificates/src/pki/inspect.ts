/**
 * Reading issued certificates: what readiness and the policy checks need to know about `tls.crt`, and the
 * Secret annotations cert-manager derives from it (AnnotationsForCertificate).
 */

import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { signatureAlgorithmName } from './algorithms.ts';
import { decodeCertificateDer, type DecodedCertificate } from './certificate-der.ts';
import { joinWithEscapeCsv } from './csv.ts';
import {
  decodeAuthorityInfoAccess,
  decodeAuthorityKeyIdentifier,
  decodeBasicConstraints,
  decodeCrlDistributionPoints,
  decodeSubjectKeyIdentifier,
  ExtensionOid,
  findExtension,
  type Extension,
} from './extensions.ts';
import { publicKeysEqual } from './keys.ts';
import { decodeRdnSequence, distinguishedName, type DistinguishedName } from './names.ts';
import { decodePemBlock } from './pem.ts';
import { decodeSubjectAltNames, emptySubjectAltNames, type SubjectAltNames } from './sans.ts';
import { decodeExtKeyUsage, decodeKeyUsage, extKeyUsageNames, keyUsageNames } from './usages.ts';

export interface CertificateInfo extends SubjectAltNames {
  notBefore: Date;
  notAfter: Date;
  subject: DistinguishedName;
  issuer: DistinguishedName;
  /** From BasicConstraints (false when absent). */
  isCA: boolean;
  /** cert-manager usage names of the KeyUsage bits ("digital signature", "cert sign", …). */
  keyUsages: string[];
  /** cert-manager usage names of the EKUs ("server auth", …); EKUs it has no name for stay dotted OIDs. */
  extKeyUsages: string[];
  /** Upper-case hex, as node:crypto prints it. */
  serialNumber: string;
  /** cert-manager's name for the signature algorithm, or its OID. */
  signatureAlgorithm: string;
  subjectKeyId?: string;
  authorityKeyId?: string;
  crlDistributionPoints: string[];
  ocspServers: string[];
  issuingCertificateURLs: string[];
  publicKey: KeyObject;
  /** The SubjectPublicKeyInfo DER as the certificate carries it. */
  publicKeyInfo: Buffer;
  extensions: Extension[];
  /** The leaf's DER (the first certificate of the PEM). */
  der: Buffer;
}

/**
 * Parses the first certificate of a PEM bundle (the leaf of `tls.crt`). node:crypto parses and validates the
 * certificate as a whole; names and extensions are read from its DER.
 */
export function parseCertificate(pem: string | Buffer): CertificateInfo {
  const { der } = decodePemBlock(pem, ['CERTIFICATE']);
  const x509 = new X509Certificate(der);
  return certificateInfo(decodeCertificateDer(der), {
    notBefore: x509.validFromDate,
    notAfter: x509.validToDate,
    serialNumber: x509.serialNumber,
    publicKey: x509.publicKey,
  });
}

/**
 * The same view of a certificate this process has just encoded and signed (signCertificate), from its decoded
 * DER alone: OpenSSL's parse checks bytes our own encoder wrote (and tests compare with OpenSSL's reading),
 * and was most of the cost of reading them (docs/adr/1185). Its serial number must be positive, as ours are.
 */
export function encodedCertificateInfo(decoded: DecodedCertificate): CertificateInfo {
  return certificateInfo(decoded, {
    notBefore: decoded.notBefore,
    notAfter: decoded.notAfter,
    serialNumber: positiveSerialHex(decoded.serial),
    publicKey: createPublicKey({ key: decoded.publicKeyInfo, format: 'der', type: 'spki' }),
  });
}

/** A positive serial's INTEGER content octets as node:crypto prints them: upper-case hex, no leading zero octets. */
function positiveSerialHex(serial: Buffer): string {
  let start = 0;
  while (start < serial.length - 1 && serial[start] === 0) start++;
  return serial.subarray(start).toString('hex').toUpperCase();
}

function certificateInfo(
  decoded: DecodedCertificate,
  read: Pick<CertificateInfo, 'notBefore' | 'notAfter' | 'serialNumber' | 'publicKey'>,
): CertificateInfo {
  const ext = (oid: string) => findExtension(decoded.extensions, oid);
  const san = ext(ExtensionOid.subjectAltName);
  const bc = ext(ExtensionOid.basicConstraints);
  const ku = ext(ExtensionOid.keyUsage);
  const eku = ext(ExtensionOid.extKeyUsage);
  const ski = ext(ExtensionOid.subjectKeyIdentifier);
  const aki = ext(ExtensionOid.authorityKeyIdentifier);
  const crl = ext(ExtensionOid.crlDistributionPoints);
  const aia = ext(ExtensionOid.authorityInfoAccess);
  return {
    ...(san ? decodeSubjectAltNames(san.value) : emptySubjectAltNames()),
    notBefore: read.notBefore,
    notAfter: read.notAfter,
    subject: distinguishedName(decodeRdnSequence(decoded.subject)),
    issuer: distinguishedName(decodeRdnSequence(decoded.issuer)),
    isCA: bc ? decodeBasicConstraints(bc.value).isCA : false,
    keyUsages: keyUsageNames(ku ? decodeKeyUsage(ku.value) : 0),
    extKeyUsages: extKeyUsageNames(eku ? decodeExtKeyUsage(eku.value) : []),
    serialNumber: read.serialNumber,
    signatureAlgorithm:
      signatureAlgorithmName(decoded.signatureAlgorithmOid) ?? decoded.signatureAlgorithmOid,
    subjectKeyId: ski && decodeSubjectKeyIdentifier(ski.value).toString('hex'),
    authorityKeyId: aki && decodeAuthorityKeyIdentifier(aki.value)?.toString('hex'),
    crlDistributionPoints: crl ? decodeCrlDistributionPoints(crl.value) : [],
    ...(aia ? decodeAuthorityInfoAccess(aia.value) : { ocspServers: [], issuingCertificateURLs: [] }),
    publicKey: read.publicKey,
    publicKeyInfo: decoded.publicKeyInfo,
    extensions: decoded.extensions,
    der: decoded.der,
  };
}

/** Whether the leaf certificate of `certPem` carries the public half of `key` (private or public). */
export function certificateMatchesKey(certPem: string | Buffer | CertificateInfo, key: KeyObject): boolean {
  const cert = typeof certPem === 'string' || Buffer.isBuffer(certPem) ? parseCertificate(certPem) : certPem;
  return publicKeysEqual(cert.publicKey, key);
}

export const SecretAnnotation = {
  commonName: 'cert-manager.io/common-name',
  altNames: 'cert-manager.io/alt-names',
  ipSans: 'cert-manager.io/ip-sans',
  uriSans: 'cert-manager.io/uri-sans',
  emailSans: 'cert-manager.io/email-sans',
  subjectOrganizations: 'cert-manager.io/subject-organizations',
  subjectOrganizationalUnits: 'cert-manager.io/subject-organizationalunits',
  subjectCountries: 'cert-manager.io/subject-countries',
  subjectProvinces: 'cert-manager.io/subject-provinces',
  subjectLocalities: 'cert-manager.io/subject-localities',
  subjectPostalCodes: 'cert-manager.io/subject-postalcodes',
  subjectStreetAddresses: 'cert-manager.io/subject-streetaddresses',
  subjectSerialNumber: 'cert-manager.io/subject-serialnumber',
} as const;

/**
 * What the Secret annotations and the spec comparisons read of a certificate: its names and subject. A
 * certificate Secret cached as facts carries these without its PEM (controllers/secret-facts.ts).
 */
export type CertificateNames = Pick<
  CertificateInfo,
  'dnsNames' | 'emailAddresses' | 'ipAddresses' | 'uris'
> & {
  subject: Pick<
    DistinguishedName,
    | 'commonName'
    | 'serialNumber'
    | 'organizations'
    | 'organizationalUnits'
    | 'countries'
    | 'provinces'
    | 'localities'
    | 'postalCodes'
    | 'streetAddresses'
  >;
};

/**
 * The certificate-derived annotations on the Secret, from the ISSUED certificate (not the spec): common name
 * and the DNS/IP/URI SAN lists always (possibly empty), emails and subject fields only when non-empty. Lists
 * are joined as CSV with Go's quoting, so values containing commas or quotes survive.
 */
export function secretAnnotationsFor(cert: CertificateNames | string | Buffer): Record<string, string> {
  const info = typeof cert === 'string' || Buffer.isBuffer(cert) ? parseCertificate(cert) : cert;
  const annotations: Record<string, string> = {};
  const list = (key: string, values: readonly string[], keepEmpty: boolean) => {
    if (values.length || keepEmpty) annotations[key] = joinWithEscapeCsv(values);
  };
  annotations[SecretAnnotation.commonName] = info.subject.commonName;
  if (info.subject.serialNumber)
    annotations[SecretAnnotation.subjectSerialNumber] = info.subject.serialNumber;
  list(SecretAnnotation.subjectOrganizations, info.subject.organizations, false);
  list(SecretAnnotation.subjectOrganizationalUnits, info.subject.organizationalUnits, false);
  list(SecretAnnotation.subjectCountries, info.subject.countries, false);
  list(SecretAnnotation.subjectProvinces, info.subject.provinces, false);
  list(SecretAnnotation.subjectLocalities, info.subject.localities, false);
  list(SecretAnnotation.subjectPostalCodes, info.subject.postalCodes, false);
  list(SecretAnnotation.subjectStreetAddresses, info.subject.streetAddresses, false);
  list(SecretAnnotation.emailSans, info.emailAddresses, false);
  list(SecretAnnotation.altNames, info.dnsNames, true);
  list(SecretAnnotation.ipSans, info.ipAddresses, true);
  list(SecretAnnotation.uriSans, info.uris, true);
  return annotations;
}
