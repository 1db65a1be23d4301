/**
 * X.509 distinguished names: built from a Certificate's subject fields or its literalSubject exactly as
 * cert-manager's GenerateCSR builds them, encoded as Go's encoding/asn1 encodes them, and read back with
 * crypto/x509/pkix's rules.
 */

import { attributeOid, parseDN } from '../api/dn.ts';
import type { X509Subject } from '../api/types.ts';
import {
  expectTag,
  oid,
  readChildren,
  readOid,
  readOne,
  sequence,
  sequenceOf,
  setOfArray,
  Tag,
  tlv,
  type Tlv,
} from './der.ts';

export const NameOid = {
  commonName: '2.5.4.3',
  serialNumber: '2.5.4.5',
  country: '2.5.4.6',
  locality: '2.5.4.7',
  province: '2.5.4.8',
  streetAddress: '2.5.4.9',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  postalCode: '2.5.4.17',
  domainComponent: '0.9.2342.19200300.100.1.25',
  userId: '0.9.2342.19200300.100.1.1',
} as const;

/** The Certificate's `spec.subject` (commonName is a separate field), as the API defines it. */
export type { X509Subject };

export interface AttributeTypeAndValue {
  /** Dotted OID. */
  type: string;
  /** The string value; for a value that is not a string type, `#` and the hex of its DER (RFC 4514). */
  value: string;
  /** The ASN.1 tag the value was read with; absent on names built here (Go's string type rule applies). */
  tag?: number;
}

/** An RDNSequence in encoding order (least specific first, the reverse of an RFC 4514 string). */
export type RdnSequence = AttributeTypeAndValue[][];

/** A name as pkix.Name sees it: the subject fields, the common name, and every attribute in order. */
export interface DistinguishedName extends Required<Omit<X509Subject, 'serialNumber'>> {
  commonName: string;
  serialNumber: string;
  rdns: RdnSequence;
}

/**
 * pkix.Name.ToRDNSequence: one RDN per attribute type, in Go's fixed order, all values of a type in the same
 * (multi-valued) RDN.
 */
export function subjectRdnSequence(
  commonName: string | undefined,
  subject: X509Subject | undefined,
): RdnSequence {
  const s = subject ?? {};
  const groups: [string, readonly string[] | undefined][] = [
    [NameOid.country, s.countries],
    [NameOid.province, s.provinces],
    [NameOid.locality, s.localities],
    [NameOid.streetAddress, s.streetAddresses],
    [NameOid.postalCode, s.postalCodes],
    [NameOid.organization, s.organizations],
    [NameOid.organizationalUnit, s.organizationalUnits],
    [NameOid.commonName, commonName ? [commonName] : undefined],
    [NameOid.serialNumber, s.serialNumber ? [s.serialNumber] : undefined],
  ];
  return groups
    .filter(([, values]) => values?.length)
    .map(([type, values]) => values!.map((value) => ({ type, value })));
}

/**
 * UnmarshalSubjectStringToRDNSequence: an RFC 4514 string, whose RDNs are written most specific first, in
 * encoding order (reversed). Only cert-manager's short names (C, O, OU, CN, SERIALNUMBER, L, ST, STREET, DC,
 * UID) and dotted OIDs are accepted; the error text is the webhook's.
 */
export function parseLiteralSubject(literal: string): RdnSequence {
  return parseDN(literal)
    .reverse()
    .map((rdn) =>
      rdn.map(({ type, value }) => {
        const attributeType = attributeOid(type);
        if (attributeType === undefined) {
          throw new Error(`Literal subject contains unrecognized key with value [${value}]`);
        }
        return { type: attributeType, value };
      }),
    );
}

/** The first CN in the sequence (ExtractCommonNameFromRDNSequence), or "". */
export function firstCommonName(rdns: RdnSequence): string {
  for (const rdn of rdns) for (const atv of rdn) if (atv.type === NameOid.commonName) return atv.value;
  return '';
}

/**
 * Go's PrintableString alphabet (encoding/asn1 isPrintable without the `*` and `&` leniencies): a string
 * made only of these is a PrintableString, anything else a UTF8String.
 */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

function encodeStringValue(value: string): Buffer {
  if (PRINTABLE.test(value)) return tlv(Tag.PRINTABLE_STRING, Buffer.from(value, 'latin1'));
  if (!value.isWellFormed()) throw new Error('asn1: string not valid UTF-8');
  return tlv(Tag.UTF8_STRING, Buffer.from(value, 'utf8'));
}

/** DER of a Name; multi-valued RDNs are SET OF, so their members are sorted as DER requires. */
export function encodeRdnSequence(rdns: RdnSequence): Buffer {
  return sequenceOf(
    rdns.map((rdn) => setOfArray(rdn.map((atv) => sequence(oid(atv.type), encodeStringValue(atv.value))))),
  );
}

export const EMPTY_NAME_DER: Buffer = sequence();

/** Whether a Name's DER is the empty SEQUENCE (IsASN1SubjectEmpty). */
export function isEmptyName(der: Buffer): boolean {
  return der.equals(EMPTY_NAME_DER);
}

function decodeBmpString(bytes: Buffer): string {
  const swapped = Buffer.from(bytes);
  swapped.swap16();
  return swapped.toString('utf16le');
}

/** String types Go's parser accepts in names; other types keep their DER as `#hex`. */
function decodeAttributeValue(element: Tlv): string {
  switch (element.tag) {
    case Tag.UTF8_STRING:
      return new TextDecoder('utf-8', { fatal: true }).decode(element.value);
    case Tag.PRINTABLE_STRING:
    case Tag.IA5_STRING:
    case Tag.NUMERIC_STRING:
      return element.value.toString('latin1');
    case Tag.T61_STRING:
      return element.value.toString('latin1');
    case Tag.BMP_STRING:
      return decodeBmpString(element.value);
    default:
      return `#${element.raw.toString('hex')}`;
  }
}

/** The ASN.1 string types a name attribute's value may have. */
export const STRING_TAGS: ReadonlySet<number> = new Set([
  Tag.UTF8_STRING,
  Tag.PRINTABLE_STRING,
  Tag.IA5_STRING,
  Tag.NUMERIC_STRING,
  Tag.T61_STRING,
  Tag.BMP_STRING,
]);

export function decodeRdnSequence(der: Buffer): RdnSequence {
  return readChildren(readOne(der, Tag.SEQUENCE).value).map((rdn) =>
    readChildren(expectTag(rdn, Tag.SET).value).map((atv) => {
      const [type, value] = readChildren(expectTag(atv, Tag.SEQUENCE).value);
      if (!type || !value) throw new Error('malformed DER: AttributeTypeAndValue');
      return { type: readOid(type), value: decodeAttributeValue(value), tag: value.tag };
    }),
  );
}

/** pkix.Name.FillFromRDNSequence: the last CN and serialNumber win, other attributes accumulate. */
export function distinguishedName(rdns: RdnSequence): DistinguishedName {
  const name: DistinguishedName = {
    commonName: '',
    serialNumber: '',
    countries: [],
    organizations: [],
    organizationalUnits: [],
    localities: [],
    provinces: [],
    streetAddresses: [],
    postalCodes: [],
    rdns,
  };
  const lists: Readonly<Record<string, string[]>> = {
    [NameOid.country]: name.countries,
    [NameOid.organization]: name.organizations,
    [NameOid.organizationalUnit]: name.organizationalUnits,
    [NameOid.locality]: name.localities,
    [NameOid.province]: name.provinces,
    [NameOid.streetAddress]: name.streetAddresses,
    [NameOid.postalCode]: name.postalCodes,
  };
  for (const atv of rdns.flat()) {
    if (atv.tag !== undefined && !STRING_TAGS.has(atv.tag)) continue;
    if (atv.type === NameOid.commonName) name.commonName = atv.value;
    else if (atv.type === NameOid.serialNumber) name.serialNumber = atv.value;
    else lists[atv.type]?.push(atv.value);
  }
  return name;
}

/** Short names, limited to those parseLiteralSubject accepts so that a formatted name parses back. */
const SHORT_NAMES: Readonly<Record<string, string>> = {
  [NameOid.country]: 'C',
  [NameOid.organization]: 'O',
  [NameOid.organizationalUnit]: 'OU',
  [NameOid.commonName]: 'CN',
  [NameOid.serialNumber]: 'SERIALNUMBER',
  [NameOid.locality]: 'L',
  [NameOid.province]: 'ST',
  [NameOid.streetAddress]: 'STREET',
  [NameOid.domainComponent]: 'DC',
  [NameOid.userId]: 'UID',
};

function escapeValue(value: string): string {
  if (value.startsWith('#') && /^#([0-9a-f]{2})+$/.test(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if ((i === 0 && (char === ' ' || char === '#')) || (i === value.length - 1 && char === ' '))
      out += `\\${char}`;
    else if ('"+,;<>\\'.includes(char)) out += `\\${char}`;
    else if (char < ' ' || char === '\x7f') out += `\\${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return out;
}

/** RFC 4514 string (most specific RDN first), in the form cert-manager's literalSubject parser reads back. */
export function formatRdnSequence(rdns: RdnSequence): string {
  return [...rdns]
    .reverse()
    .map((rdn) =>
      rdn.map((atv) => `${SHORT_NAMES[atv.type] ?? atv.type}=${escapeValue(atv.value)}`).join('+'),
    )
    .join(',');
}
