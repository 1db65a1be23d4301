/**
 * X.509 extensions other than names and usages: the generic Extension structure, BasicConstraints, key
 * identifiers, AuthorityInfoAccess and CRL distribution points, encoded as Go's crypto/x509 encodes them.
 */

import { createHash } from 'node:crypto';
import {
  bitStringBytes,
  boolean,
  contextTag,
  expectTag,
  octetString,
  oid,
  readChildren,
  readOid,
  readOne,
  sequence,
  Tag,
  tlv,
} from './der.ts';

export const ExtensionOid = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  extKeyUsage: '2.5.29.37',
  authorityKeyIdentifier: '2.5.29.35',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
} as const;

export interface Extension {
  oid: string;
  critical: boolean;
  /** DER of the extension value (the content of extnValue's OCTET STRING). */
  value: Buffer;
}

export function encodeExtension(ext: Extension): Buffer {
  // DEFAULT FALSE: DER omits `critical` unless it is true.
  return sequence(oid(ext.oid), ...(ext.critical ? [boolean(true)] : []), octetString(ext.value));
}

/** Extensions ::= SEQUENCE OF Extension. */
export function decodeExtensions(der: Buffer): Extension[] {
  return readChildren(readOne(der, Tag.SEQUENCE).value).map((element) => {
    const parts = readChildren(expectTag(element, Tag.SEQUENCE).value);
    const critical = parts.length === 3 && expectTag(parts[1], Tag.BOOLEAN).value[0] !== 0;
    const value = expectTag(parts[parts.length - 1], Tag.OCTET_STRING).value;
    return { oid: readOid(parts[0]), critical, value };
  });
}

export function findExtension(extensions: readonly Extension[], extensionOid: string): Extension | undefined {
  return extensions.find((ext) => ext.oid === extensionOid);
}

/**
 * BasicConstraints without pathLenConstraint (cert-manager never sets one): `SEQUENCE { TRUE }` for a CA,
 * the empty SEQUENCE otherwise.
 */
export function encodeBasicConstraints(isCA: boolean): Buffer {
  return isCA ? sequence(boolean(true)) : sequence();
}

export function decodeBasicConstraints(value: Buffer): { isCA: boolean; maxPathLen?: number } {
  const parts = readChildren(readOne(value, Tag.SEQUENCE).value);
  let index = 0;
  let isCA = false;
  if (parts[index]?.tag === Tag.BOOLEAN) isCA = parts[index++].value[0] !== 0;
  const pathLen = parts[index];
  if (!pathLen) return { isCA };
  const bytes = expectTag(pathLen, Tag.INTEGER).value;
  return {
    isCA,
    maxPathLen: bytes.length <= 6 ? bytes.readUIntBE(0, bytes.length) : Number.MAX_SAFE_INTEGER,
  };
}

/** The subjectPublicKey BIT STRING's bytes inside a SubjectPublicKeyInfo. */
function subjectPublicKeyBits(spki: Buffer): Buffer {
  const [, bits] = readChildren(readOne(spki, Tag.SEQUENCE).value);
  return bitStringBytes(expectTag(bits, Tag.BIT_STRING).value);
}

/**
 * A key identifier by RFC 7093 §2 method 1 (the leftmost 160 bits of SHA-256 of the subjectPublicKey), which
 * is what Go ≥ 1.25 uses when it fills in SubjectKeyId.
 */
export function keyIdentifier(spki: Buffer): Buffer {
  return createHash('sha256').update(subjectPublicKeyBits(spki)).digest().subarray(0, 20);
}

export function encodeSubjectKeyIdentifier(keyId: Buffer): Buffer {
  return octetString(keyId);
}

export function decodeSubjectKeyIdentifier(value: Buffer): Buffer {
  return readOne(value, Tag.OCTET_STRING).value;
}

/** AuthorityKeyIdentifier with only keyIdentifier [0]. */
export function encodeAuthorityKeyIdentifier(keyId: Buffer): Buffer {
  return sequence(tlv(contextTag(0, false), keyId));
}

export function decodeAuthorityKeyIdentifier(value: Buffer): Buffer | undefined {
  const keyId = readChildren(readOne(value, Tag.SEQUENCE).value).find(
    (part) => part.tag === contextTag(0, false),
  );
  return keyId?.value;
}

const ACCESS_METHOD = { ocsp: '1.3.6.1.5.5.7.48.1', caIssuers: '1.3.6.1.5.5.7.48.2' };
const URI_TAG = contextTag(6, false);

function uriName(uri: string): Buffer {
  return tlv(URI_TAG, Buffer.from(uri, 'latin1'));
}

/** AuthorityInfoAccess: every OCSP server, then every CA issuers URL (Go's order). */
export function encodeAuthorityInfoAccess(
  ocspServers: readonly string[],
  issuingCertificateURLs: readonly string[],
): Buffer {
  return sequence(
    ...ocspServers.map((uri) => sequence(oid(ACCESS_METHOD.ocsp), uriName(uri))),
    ...issuingCertificateURLs.map((uri) => sequence(oid(ACCESS_METHOD.caIssuers), uriName(uri))),
  );
}

/** CRLDistributionPoints: one DistributionPoint per URL, each a fullName with one URI. */
export function encodeCrlDistributionPoints(urls: readonly string[]): Buffer {
  return sequence(
    ...urls.map((url) => sequence(tlv(contextTag(0, true), tlv(contextTag(0, true), uriName(url))))),
  );
}

/** The URIs in a CRLDistributionPoints value, in order. */
export function decodeCrlDistributionPoints(value: Buffer): string[] {
  const urls: string[] = [];
  for (const point of readChildren(readOne(value, Tag.SEQUENCE).value)) {
    const name = readChildren(point.value).find((part) => part.tag === contextTag(0, true));
    const fullName = name && readChildren(name.value).find((part) => part.tag === contextTag(0, true));
    for (const general of fullName ? readChildren(fullName.value) : []) {
      if (general.tag === URI_TAG) urls.push(general.value.toString('latin1'));
    }
  }
  return urls;
}

/** The OCSP and CA issuers URIs in an AuthorityInfoAccess value. */
export function decodeAuthorityInfoAccess(value: Buffer): {
  ocspServers: string[];
  issuingCertificateURLs: string[];
} {
  const result = { ocspServers: [] as string[], issuingCertificateURLs: [] as string[] };
  for (const description of readChildren(readOne(value, Tag.SEQUENCE).value)) {
    const [method, location] = readChildren(description.value);
    if (!method || location?.tag !== URI_TAG) continue;
    const uri = location.value.toString('latin1');
    const methodOid = readOid(method);
    if (methodOid === ACCESS_METHOD.ocsp) result.ocspServers.push(uri);
    else if (methodOid === ACCESS_METHOD.caIssuers) result.issuingCertificateURLs.push(uri);
  }
  return result;
}
