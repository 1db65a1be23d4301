/**
 * The raw fields of an X.509 certificate (RFC 5280 §4.1). node:crypto's X509Certificate parses and verifies
 * certificates but exposes neither raw names (which chains must match byte for byte) nor most extensions.
 */

import {
  bitStringBytes,
  contextTag,
  decodeTime,
  expectTag,
  readChildren,
  readOid,
  readOne,
  Tag,
} from './der.ts';
import { decodeExtensions, type Extension } from './extensions.ts';
import { decodePemBlocks, encodePem } from './pem.ts';

export interface DecodedCertificate {
  der: Buffer;
  /** 1, 2 or 3. */
  version: number;
  /** DER of tbsCertificate: what the signature covers. */
  tbs: Buffer;
  /** The serial number INTEGER's content octets (two's complement, big-endian). */
  serial: Buffer;
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** DER SubjectPublicKeyInfo. */
  publicKeyInfo: Buffer;
  extensions: Extension[];
  signatureAlgorithmOid: string;
  signature: Buffer;
}

export function decodeCertificateDer(der: Buffer): DecodedCertificate {
  const [tbs, algorithm, signature] = readChildren(readOne(der, Tag.SEQUENCE).value);
  if (!tbs || !algorithm || !signature) throw new Error('malformed DER: Certificate');
  const fields = readChildren(expectTag(tbs, Tag.SEQUENCE).value);
  const explicitVersion = fields[0]?.tag === contextTag(0, true) ? fields[0] : undefined;
  let index = explicitVersion ? 1 : 0;
  const [serial, , issuer, validity, subject, publicKeyInfo] = fields.slice(index, index + 6);
  if (!publicKeyInfo) throw new Error('malformed DER: TBSCertificate');
  index += 6;
  const [notBefore, notAfter] = readChildren(expectTag(validity, Tag.SEQUENCE).value);
  const extensionsField = fields.slice(index).find((field) => field.tag === contextTag(3, true));
  return {
    der,
    version: explicitVersion ? readOne(explicitVersion.value, Tag.INTEGER).value[0] + 1 : 1,
    tbs: tbs.raw,
    serial: expectTag(serial, Tag.INTEGER).value,
    issuer: expectTag(issuer, Tag.SEQUENCE).raw,
    subject: expectTag(subject, Tag.SEQUENCE).raw,
    notBefore: decodeTime(notBefore),
    notAfter: decodeTime(notAfter),
    publicKeyInfo: expectTag(publicKeyInfo, Tag.SEQUENCE).raw,
    extensions: extensionsField ? decodeExtensions(readOne(extensionsField.value).raw) : [],
    signatureAlgorithmOid: readOid(readChildren(expectTag(algorithm, Tag.SEQUENCE).value)[0]),
    signature: bitStringBytes(expectTag(signature, Tag.BIT_STRING).value),
  };
}

/** Every CERTIFICATE block in a PEM bundle, in order; other block types are ignored. */
export function decodeCertificatePems(pem: string | Buffer): DecodedCertificate[] {
  return decodePemBlocks(pem)
    .filter((block) => block.type === 'CERTIFICATE')
    .map((block) => decodeCertificateDer(block.der));
}

export function certificatePem(cert: DecodedCertificate): string {
  return encodePem('CERTIFICATE', cert.der);
}
