/**
 * The signed structures themselves: TBSCertificate (RFC 5280 §4.1) and CertificationRequestInfo (RFC 2986 §4),
 * laid out as Go's crypto/x509 lays them out, and signed with node:crypto's one-shot sign().
 */

import type { KeyObject } from 'node:crypto';
import { signatureAlgorithmIdentifier, signData, type SignatureAlgorithm } from './algorithms.ts';
import {
  bitString,
  contextTag,
  encodeTime,
  oid,
  sequence,
  sequenceOf,
  tlv,
  Tag,
  unsignedInteger,
} from './der.ts';
import { encodeExtension, type Extension } from './extensions.ts';

export const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14';
/** v3: RFC 5280 §4.1.2.1 requires it whenever extensions are present, and Go writes it always. */
const VERSION_3 = tlv(contextTag(0, true), unsignedInteger(Buffer.from([2])));
const CSR_VERSION_1 = unsignedInteger(Buffer.from([0]));

export interface CertificateFields {
  /** Big-endian magnitude of a positive serial number. */
  serialNumber: Uint8Array;
  /** DER Names, written as they are. */
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** DER SubjectPublicKeyInfo. */
  publicKeyInfo: Buffer;
  extensions: readonly Extension[];
}

export function encodeExtensions(extensions: readonly Extension[]): Buffer {
  return sequenceOf(extensions.map(encodeExtension));
}

/** TBSCertificate; `algorithm` goes into its signature field and must be the one the certificate is signed with. */
export function encodeTbsCertificate(fields: CertificateFields, algorithm: SignatureAlgorithm): Buffer {
  return sequence(
    VERSION_3,
    unsignedInteger(fields.serialNumber),
    signatureAlgorithmIdentifier(algorithm),
    fields.issuer,
    sequence(encodeTime(fields.notBefore), encodeTime(fields.notAfter)),
    fields.subject,
    fields.publicKeyInfo,
    // RFC 5280 §4.1: extensions "MUST NOT" be an empty SEQUENCE when present, so no extensions means no [3].
    ...(fields.extensions.length ? [tlv(contextTag(3, true), encodeExtensions(fields.extensions))] : []),
  );
}

/**
 * CertificationRequestInfo. `attributes` is not OPTIONAL in RFC 2986, so a request without extensions still
 * carries an empty [0] (as Go writes it); extensions travel in one extensionRequest attribute (RFC 2985 §5.4.2).
 */
export function encodeCertificationRequestInfo(
  subject: Buffer,
  publicKeyInfo: Buffer,
  extensions: readonly Extension[],
): Buffer {
  const attributes = extensions.length
    ? [sequence(oid(EXTENSION_REQUEST_OID), tlv(Tag.SET, encodeExtensions(extensions)))]
    : [];
  return sequence(CSR_VERSION_1, subject, publicKeyInfo, tlv(contextTag(0, true), ...attributes));
}

/**
 * Signs `toBeSigned` and wraps it as Certificate and CertificationRequest both are:
 * SEQUENCE { toBeSigned, AlgorithmIdentifier, BIT STRING signature }.
 */
export function signDer(toBeSigned: Buffer, algorithm: SignatureAlgorithm, key: KeyObject): Buffer {
  return sequence(
    toBeSigned,
    signatureAlgorithmIdentifier(algorithm),
    bitString(signData(algorithm, key, toBeSigned)),
  );
}
