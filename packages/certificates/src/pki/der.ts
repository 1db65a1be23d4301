/**
 * A minimal DER reader and writer: just what X.509 names, extensions, CSRs and certificates need.
 *
 * Why not @peculiar/asn1-schema: cert-manager's bytes come from Go's encoding/asn1 (PrintableString vs
 * UTF8String choice, SET OF ordering, otherName SANs of any type), and matching them exactly is easier with
 * explicit TLVs than through a schema library that re-serialises what it parses.
 */

export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  NUMERIC_STRING: 0x12,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** Identifier octet of a context-specific tag `[n]`. */
export function contextTag(n: number, constructed: boolean): number {
  return (constructed ? 0xa0 : 0x80) | n;
}

export interface Tlv {
  /** The identifier octet (class, constructed bit and tag number; only low tag numbers are supported). */
  tag: number;
  /** Content octets. */
  value: Buffer;
  /** The whole element, identifier and length included. */
  raw: Buffer;
}

export class DerError extends Error {
  constructor(message: string) {
    super(`malformed DER: ${message}`);
    this.name = 'DerError';
  }
}

/** Reads the element starting at `offset`. Indefinite lengths and high tag numbers are rejected (not DER). */
export function readTlv(buf: Buffer, offset = 0): Tlv {
  if (offset + 2 > buf.length) throw new DerError('truncated element');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not supported');
  let cursor = offset + 1;
  let length = buf[cursor++];
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0) throw new DerError('indefinite length');
    if (count > 4 || cursor + count > buf.length) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[cursor++];
  }
  const end = cursor + length;
  if (end > buf.length) throw new DerError('element runs past the end of its parent');
  return { tag, value: buf.subarray(cursor, end), raw: buf.subarray(offset, end) };
}

/** Reads exactly one element that fills `buf`, optionally checking its tag. */
export function readOne(buf: Buffer, expectedTag?: number): Tlv {
  const tlv = readTlv(buf, 0);
  if (tlv.raw.length !== buf.length) throw new DerError('trailing data');
  if (expectedTag !== undefined) expectTag(tlv, expectedTag);
  return tlv;
}

/** The elements inside a constructed value (a SEQUENCE's or SET's content octets). */
export function readChildren(value: Buffer): Tlv[] {
  const children: Tlv[] = [];
  let offset = 0;
  while (offset < value.length) {
    const child = readTlv(value, offset);
    children.push(child);
    offset += child.raw.length;
  }
  return children;
}

export function expectTag(tlv: Tlv, tag: number): Tlv {
  if (tlv.tag !== tag) {
    throw new DerError(`expected tag 0x${tag.toString(16)}, got 0x${tlv.tag.toString(16)}`);
  }
  return tlv;
}

/** Octets of a long-form length after its first one (which says how many follow). */
function lengthOctets(length: number): number {
  let count = 0;
  for (let n = length; n > 0; n = Math.floor(n / 256)) count++;
  return count;
}

/**
 * One element: identifier, length, and the concatenated contents, written into one new Buffer. A certificate
 * or CSR is hundreds of nested elements: concatenating the contents, then the identifier, length and value,
 * made four Buffers per element, ~6% of all the controller allocated during issuance (docs/adr/1225).
 */
export function tlv(tag: number, ...contents: Uint8Array[]): Buffer {
  return tlvOf(tag, contents);
}

/**
 * `tlv` over an array. Lists whose length the user chooses (a Certificate's dnsNames, a subject's
 * organizations) go through here: spread into arguments, past about 100,000 members they overflowed the
 * stack (`Maximum call stack size exceeded` for a Certificate of 100,000 dnsNames).
 */
export function tlvOf(tag: number, contents: readonly Uint8Array[]): Buffer {
  let length = 0;
  for (const content of contents) length += content.length;
  const extra = length < 0x80 ? 0 : lengthOctets(length);
  const out = Buffer.allocUnsafe(2 + extra + length);
  out[0] = tag;
  let pos = 1;
  if (extra === 0) out[pos++] = length;
  else {
    out[pos++] = 0x80 | extra;
    for (let shift = extra - 1; shift >= 0; shift--) out[pos++] = Math.floor(length / 256 ** shift) & 0xff;
  }
  for (const content of contents) {
    out.set(content, pos);
    pos += content.length;
  }
  return out;
}

export function sequence(...items: Uint8Array[]): Buffer {
  return tlvOf(Tag.SEQUENCE, items);
}

/** `sequence` over an array (see `tlvOf`). */
export function sequenceOf(items: readonly Uint8Array[]): Buffer {
  return tlvOf(Tag.SEQUENCE, items);
}

/** SET OF in DER order: members sorted by their encodings, as Go's encoding/asn1 does. */
export function setOf(...items: Buffer[]): Buffer {
  return setOfArray(items);
}

/** `setOf` over an array (see `tlvOf`). */
export function setOfArray(items: readonly Buffer[]): Buffer {
  return tlvOf(Tag.SET, [...items].sort(Buffer.compare));
}

export function boolean(value: boolean): Buffer {
  return tlv(Tag.BOOLEAN, Buffer.from([value ? 0xff : 0x00]));
}

/** A non-negative INTEGER from big-endian magnitude bytes, minimally encoded. */
export function unsignedInteger(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let bytes = Buffer.from(magnitude.subarray(start));
  if (bytes.length === 0) bytes = Buffer.from([0]);
  if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(Tag.INTEGER, bytes);
}

export function octetString(value: Uint8Array): Buffer {
  return tlv(Tag.OCTET_STRING, value);
}

export function bitString(bytes: Uint8Array, unusedBits = 0): Buffer {
  return tlv(Tag.BIT_STRING, Buffer.from([unusedBits]), bytes);
}

/** Content octets of a BIT STRING, without the unused-bits octet. */
export function bitStringBytes(tlvValue: Buffer): Buffer {
  if (tlvValue.length === 0) throw new DerError('empty BIT STRING');
  return tlvValue.subarray(1);
}

const OID_PATTERN = /^[0-9]+(\.[0-9]+)+$/;

/** Whether `text` is a dotted OID that DER can encode (X.660: first arc 0–2, second < 40 under 0 and 1). */
export function isValidOid(text: string): boolean {
  if (!OID_PATTERN.test(text)) return false;
  const [first, second] = text.split('.').map((arc) => BigInt(arc));
  return first <= 2n && (first === 2n || second < 40n);
}

function base128(value: bigint): number[] {
  const bytes = [Number(value & 0x7fn)];
  for (let n = value >> 7n; n > 0n; n >>= 7n) bytes.unshift(Number(n & 0x7fn) | 0x80);
  return bytes;
}

/**
 * Encoded OIDs by their text. A controller encodes the same few dozen (attribute types, extensions,
 * algorithms) for every CSR and certificate; users' otherName OIDs are remembered up to the bound.
 */
const encodedOids = new Map<string, Buffer>();
const ENCODED_OIDS_MAX = 512;

/**
 * Content octets of an OBJECT IDENTIFIER; arcs are BigInts because UUID OIDs (2.25.…) exceed 2^53. The Buffer
 * may be shared with other callers: read it, do not write into it.
 */
export function encodeOidValue(text: string): Buffer {
  let encoded = encodedOids.get(text);
  if (encoded === undefined) {
    encoded = encodeOidText(text);
    if (encodedOids.size < ENCODED_OIDS_MAX) encodedOids.set(text, encoded);
  }
  return encoded;
}

function encodeOidText(text: string): Buffer {
  if (!isValidOid(text))
    throw new Error(`asn1: structure error: invalid object identifier ${JSON.stringify(text)}`);
  const arcs = text.split('.').map((arc) => BigInt(arc));
  const bytes = base128(arcs[0] * 40n + arcs[1]);
  for (const arc of arcs.slice(2)) bytes.push(...base128(arc));
  return Buffer.from(bytes);
}

export function oid(text: string): Buffer {
  return tlv(Tag.OID, encodeOidValue(text));
}

/** Arcs below this are read as numbers: seven more bits still fit in 2^53. */
const SAFE_ARC = 2 ** 46;

export function decodeOid(value: Buffer): string {
  if (value.length === 0 || value[value.length - 1] & 0x80) throw new DerError('bad OBJECT IDENTIFIER');
  return decodeSmallOid(value) ?? decodeBigOid(value);
}

/** The OID when every arc fits a number (all but UUID OIDs): no BigInt per byte. */
function decodeSmallOid(value: Buffer): string | undefined {
  let text = '';
  let current = 0;
  let first = true;
  for (const byte of value) {
    if (current >= SAFE_ARC) return undefined;
    current = current * 128 + (byte & 0x7f);
    if (byte & 0x80) continue;
    if (first) {
      const top = current < 80 ? Math.floor(current / 40) : 2;
      text = `${top}.${current - top * 40}`;
      first = false;
    } else text += `.${current}`;
    current = 0;
  }
  return text;
}

function decodeBigOid(value: Buffer): string {
  const arcs: bigint[] = [];
  let current = 0n;
  for (const byte of value) {
    current = (current << 7n) | BigInt(byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(current);
      current = 0n;
    }
  }
  const first = arcs[0] < 80n ? arcs[0] / 40n : 2n;
  return [first, arcs[0] - first * 40n, ...arcs.slice(1)].join('.');
}

/** Reads an OBJECT IDENTIFIER element. */
export function readOid(element: Tlv): string {
  return decodeOid(expectTag(element, Tag.OID).value);
}

/** UTCTime or GeneralizedTime (the forms RFC 5280 allows: whole seconds, `Z`). */
export function decodeTime(element: Tlv): Date {
  const text = element.value.toString('latin1');
  const utc = element.tag === Tag.UTC_TIME;
  if (!utc && element.tag !== Tag.GENERALIZED_TIME) throw new DerError('expected a time');
  const match = (
    utc ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/ : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/
  ).exec(text);
  if (!match) throw new DerError(`bad time ${JSON.stringify(text)}`);
  let year = Number(match[1]);
  if (utc) year += year < 50 ? 2000 : 1900;
  const [month, day, hour, minute, second] = match.slice(2).map(Number);
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  // Date.UTC reads years 0–99 as 1900–1999; GeneralizedTime's four digits mean what they say.
  date.setUTCFullYear(year);
  return date;
}

function digits(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * A certificate validity time as RFC 5280 §4.1.2.5 requires (and Go writes): UTCTime for 1950–2049,
 * GeneralizedTime otherwise, whole seconds (any fraction is dropped), `Z`.
 */
export function encodeTime(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) throw new Error(`cannot encode ${date.toString()} as an X.509 time`);
  const utc = year >= 1950 && year < 2050;
  const text =
    (utc ? digits(year % 100, 2) : digits(year, 4)) +
    digits(date.getUTCMonth() + 1, 2) +
    digits(date.getUTCDate(), 2) +
    digits(date.getUTCHours(), 2) +
    digits(date.getUTCMinutes(), 2) +
    digits(date.getUTCSeconds(), 2) +
    'Z';
  return tlv(utc ? Tag.UTC_TIME : Tag.GENERALIZED_TIME, Buffer.from(text, 'latin1'));
}
