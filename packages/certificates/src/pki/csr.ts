/**
 * PKCS#10 certificate requests built from a Certificate spec the way cert-manager's GenerateCSR builds them
 * (subject, SANs, usages, basic constraints), and read back into the same spec-shaped view for signers and
 * policy checks.
 */

import { createPublicKey, type KeyObject } from 'node:crypto';
import { signatureAlgorithmFor, signatureAlgorithmName, verifySignature } from './algorithms.ts';
import { bitStringBytes, contextTag, expectTag, readChildren, readOid, readOne, Tag } from './der.ts';
import {
  decodeBasicConstraints,
  decodeExtensions,
  encodeBasicConstraints,
  ExtensionOid,
  findExtension,
  type Extension,
} from './extensions.ts';
import {
  decodeRdnSequence,
  distinguishedName,
  encodeRdnSequence,
  firstCommonName,
  formatRdnSequence,
  isEmptyName,
  parseLiteralSubject,
  subjectRdnSequence,
  type DistinguishedName,
  type X509Subject,
} from './names.ts';
import { subjectPublicKeyInfo } from './keys.ts';
import {
  decodeNameConstraints,
  nameConstraintsExtension,
  type DecodedNameConstraints,
  type NameConstraintsSpec,
} from './name-constraints.ts';
import { decodePemBlock, encodePem } from './pem.ts';
import {
  decodeSubjectAltNames,
  emptySubjectAltNames,
  encodeSubjectAltNames,
  type OtherName,
  type SubjectAltNames,
} from './sans.ts';
import {
  decodeExtKeyUsage,
  decodeKeyUsage,
  encodeExtKeyUsage,
  encodeKeyUsage,
  extKeyUsageNames,
  keyUsageNames,
  keyUsagesFor,
} from './usages.ts';
import { encodeCertificationRequestInfo, EXTENSION_REQUEST_OID, signDer } from './x509-encode.ts';

/** The Certificate spec fields that go into a CSR (a `CertificateSpec` fits). */
export interface CertificateRequestSpec {
  commonName?: string;
  subject?: X509Subject;
  /** RFC 4514; when set it replaces commonName and subject and keeps its own attribute order. */
  literalSubject?: string;
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  uris?: readonly string[];
  emailAddresses?: readonly string[];
  otherNames?: readonly OtherName[];
  usages?: readonly string[];
  isCA?: boolean;
  /** Default true: put KeyUsage/ExtendedKeyUsage into the request. */
  encodeUsagesInRequest?: boolean;
  signatureAlgorithm?: string;
  /** Encoded as given; validation allows it on CA Certificates only, as cert-manager's webhook does. */
  nameConstraints?: NameConstraintsSpec;
}

const PEM_TYPES = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];

/**
 * The request's extensions, in GenerateCSR's order: SAN, KeyUsage, ExtendedKeyUsage, BasicConstraints,
 * NameConstraints.
 */
function requestExtensions(
  spec: CertificateRequestSpec,
  subjectIsEmpty: boolean,
  sans: Buffer | undefined,
): Extension[] {
  const extensions: Extension[] = [];
  // A SAN extension must be critical when the subject is empty (RFC 5280 §4.2.1.6).
  if (sans) extensions.push({ oid: ExtensionOid.subjectAltName, critical: subjectIsEmpty, value: sans });
  if (spec.encodeUsagesInRequest ?? true) {
    const { keyUsage, extKeyUsages } = keyUsagesFor(spec.usages, spec.isCA);
    if (keyUsage)
      extensions.push({ oid: ExtensionOid.keyUsage, critical: true, value: encodeKeyUsage(keyUsage) });
    if (extKeyUsages.length) {
      extensions.push({
        oid: ExtensionOid.extKeyUsage,
        critical: false,
        value: encodeExtKeyUsage(extKeyUsages),
      });
    }
  }
  // cert-manager only writes BasicConstraints into requests behind its alpha UseCertificateRequestBasicConstraints
  // gate (and then also CA:false). We mark CA requests, so that a CSR alone says what it asks for, and leave
  // non-CA requests as cert-manager's defaults do; signers check a present extension against spec.isCA.
  if (spec.isCA) {
    extensions.push({
      oid: ExtensionOid.basicConstraints,
      critical: true,
      value: encodeBasicConstraints(true),
    });
  }
  const nameConstraints = nameConstraintsExtension(spec.nameConstraints);
  if (nameConstraints) extensions.push(nameConstraints);
  return extensions;
}

/** A PEM CSR for `spec`, signed by `key` (spec.signatureAlgorithm, or the key's default algorithm). */
export async function buildCertificateRequest(spec: CertificateRequestSpec, key: KeyObject): Promise<string> {
  const literal = spec.literalSubject ?? '';
  const rdns = literal ? parseLiteralSubject(literal) : subjectRdnSequence(spec.commonName, spec.subject);
  const commonName = literal ? firstCommonName(rdns) : (spec.commonName ?? '');
  const sans = encodeSubjectAltNames(spec);
  if (!commonName && !sans) {
    throw new Error(
      'at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
    );
  }
  const subject = encodeRdnSequence(rdns);
  const extensions = requestExtensions(spec, isEmptyName(subject), sans);
  const algorithm = signatureAlgorithmFor(key, spec.signatureAlgorithm);
  const info = encodeCertificationRequestInfo(subject, subjectPublicKeyInfo(key), extensions);
  return encodePem('CERTIFICATE REQUEST', signDer(info, algorithm, key));
}

/** The raw parts of a CSR, for signers. */
export interface DecodedCertificateRequest {
  der: Buffer;
  /** DER of certificationRequestInfo: what the signature covers. */
  info: Buffer;
  subject: Buffer;
  /** DER SubjectPublicKeyInfo. */
  publicKeyInfo: Buffer;
  extensions: Extension[];
  signatureAlgorithmOid: string;
  signature: Buffer;
}

export function decodeCertificateRequestDer(der: Buffer): DecodedCertificateRequest {
  const [info, algorithm, signature] = readChildren(readOne(der, Tag.SEQUENCE).value);
  if (!info || !algorithm || !signature) throw new Error('malformed DER: CertificationRequest');
  const [version, subject, publicKeyInfo, attributes] = readChildren(expectTag(info, Tag.SEQUENCE).value);
  if (!version || !subject || !publicKeyInfo) throw new Error('malformed DER: CertificationRequestInfo');
  expectTag(version, Tag.INTEGER);
  expectTag(subject, Tag.SEQUENCE);
  expectTag(publicKeyInfo, Tag.SEQUENCE);
  let extensions: Extension[] = [];
  if (attributes) {
    for (const attribute of readChildren(expectTag(attributes, contextTag(0, true)).value)) {
      const [type, values] = readChildren(expectTag(attribute, Tag.SEQUENCE).value);
      if (!type || readOid(type) !== EXTENSION_REQUEST_OID || !values) continue;
      for (const value of readChildren(expectTag(values, Tag.SET).value)) {
        extensions = extensions.concat(decodeExtensions(value.raw));
      }
    }
  }
  return {
    der,
    info: info.raw,
    subject: subject.raw,
    publicKeyInfo: publicKeyInfo.raw,
    extensions,
    signatureAlgorithmOid: readOid(readChildren(expectTag(algorithm, Tag.SEQUENCE).value)[0]),
    signature: bitStringBytes(expectTag(signature, Tag.BIT_STRING).value),
  };
}

export function decodeCertificateRequestPem(pem: string | Buffer): DecodedCertificateRequest {
  return decodeCertificateRequestDer(decodePemBlock(pem, PEM_TYPES).der);
}

/** Whether the CSR is signed by the key it carries (CheckSignature). */
export function verifyCertificateRequest(csr: string | Buffer | DecodedCertificateRequest): boolean {
  const decoded = typeof csr === 'string' || Buffer.isBuffer(csr) ? decodeCertificateRequestPem(csr) : csr;
  return verifySignature(
    decoded.signatureAlgorithmOid,
    decoded.info,
    decoded.publicKeyInfo,
    decoded.signature,
  );
}

/** A CSR seen as the Certificate spec it asks for. */
export interface CertificateRequestView extends SubjectAltNames {
  /** The subject's CN (the last one, as pkix.Name reads it). */
  commonName: string;
  subject: DistinguishedName;
  /** The subject as an RFC 4514 string that literalSubject would parse back to the same attributes. */
  literalSubject: string;
  /** The subject's DER, to compare byte for byte against an encoded literalSubject. */
  subjectDer: Buffer;
  /** Usage names from the KeyUsage and ExtendedKeyUsage extensions; empty when the request has neither. */
  usages: string[];
  /** Whether the request carries KeyUsage or ExtendedKeyUsage at all. */
  hasUsages: boolean;
  /** From BasicConstraints; false when the request has none. */
  isCA: boolean;
  /** The Name Constraints the request asks for, if any. */
  nameConstraints?: DecodedNameConstraints;
  /** cert-manager's name for the signature algorithm, or its OID when cert-manager has no name for it. */
  signatureAlgorithm: string;
  publicKey: KeyObject;
  extensions: Extension[];
}

/** A malformed extension reads as none: the view is for comparisons, and the signer refuses it anyway. */
function readableNameConstraints(extension: Extension): DecodedNameConstraints | undefined {
  try {
    return decodeNameConstraints(extension);
  } catch {
    return undefined;
  }
}

/**
 * Parses a PEM CSR into its spec-shaped view. The signature is not checked (see verifyCertificateRequest).
 * With `{ publicKey: false }` the key is left out, and not parsed: a caller that knows it already (the CSR
 * was built here from a key it holds) saves OpenSSL's parse.
 */
export function parseCertificateRequest(pem: string | Buffer): CertificateRequestView;
export function parseCertificateRequest(
  pem: string | Buffer,
  options: { publicKey: false },
): Omit<CertificateRequestView, 'publicKey'>;
export function parseCertificateRequest(
  pem: string | Buffer,
  options?: { publicKey: false },
): Omit<CertificateRequestView, 'publicKey'> {
  const decoded = decodeCertificateRequestPem(pem);
  const rdns = decodeRdnSequence(decoded.subject);
  const subject = distinguishedName(rdns);
  const sanExtension = findExtension(decoded.extensions, ExtensionOid.subjectAltName);
  const kuExtension = findExtension(decoded.extensions, ExtensionOid.keyUsage);
  const ekuExtension = findExtension(decoded.extensions, ExtensionOid.extKeyUsage);
  const bcExtension = findExtension(decoded.extensions, ExtensionOid.basicConstraints);
  const ncExtension = findExtension(decoded.extensions, ExtensionOid.nameConstraints);
  return {
    ...(sanExtension ? decodeSubjectAltNames(sanExtension.value) : emptySubjectAltNames()),
    commonName: subject.commonName,
    subject,
    literalSubject: formatRdnSequence(rdns),
    subjectDer: decoded.subject,
    usages: [
      ...keyUsageNames(kuExtension ? decodeKeyUsage(kuExtension.value) : 0),
      ...extKeyUsageNames(ekuExtension ? decodeExtKeyUsage(ekuExtension.value) : []),
    ],
    hasUsages: Boolean(kuExtension || ekuExtension),
    isCA: bcExtension ? decodeBasicConstraints(bcExtension.value).isCA : false,
    nameConstraints: ncExtension ? readableNameConstraints(ncExtension) : undefined,
    signatureAlgorithm:
      signatureAlgorithmName(decoded.signatureAlgorithmOid) ?? decoded.signatureAlgorithmOid,
    ...(options
      ? {}
      : { publicKey: createPublicKey({ key: decoded.publicKeyInfo, format: 'der', type: 'spki' }) }),
    extensions: decoded.extensions,
  };
}
