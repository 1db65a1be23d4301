/**
 * An independent reader for the parts of an issued certificate the conformance checks look at: the raw
 * subject and issuer names, the subject alternative names, KeyUsage and BasicConstraints. It deliberately
 * shares no code with `../pki/` (which builds the certificates under test), so an encoding mistake there
 * cannot be hidden by the same mistake when reading back. node:crypto's X509Certificate covers the rest
 * (parsing as a whole, validity, public key, signatures, EKUs).
 */

export interface Tlv {
  /** The identifier octet (class, constructed bit and tag number); only single-octet tags occur here. */
  tag: number;
  /** Content octets. */
  value: Buffer;
  /** Identifier, length and content octets. */
  raw: Buffer;
}

export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

export function readTlv(buf: Buffer, offset = 0): { tlv: Tlv; next: number } {
  if (offset + 2 > buf.length) throw new Error(`DER: truncated at ${offset}`);
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new Error(`DER: high tag number at ${offset}`);
  let length = buf[offset + 1];
  let header = 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new Error(`DER: bad length at ${offset}`);
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + buf[offset + 2 + i];
    header += octets;
  }
  const end = offset + header + length;
  if (end > buf.length) throw new Error(`DER: content overruns at ${offset}`);
  return {
    tlv: { tag, value: buf.subarray(offset + header, end), raw: buf.subarray(offset, end) },
    next: end,
  };
}

/** The TLVs that make up `content` (the inside of a SEQUENCE, SET or constructed tag). */
export function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = 0; offset < content.length;) {
    const { tlv, next } = readTlv(content, offset);
    out.push(tlv);
    offset = next;
  }
  return out;
}

/** Exactly one TLV in `buf`, optionally of an expected tag. */
export function single(buf: Buffer, tag?: number): Tlv {
  const { tlv, next } = readTlv(buf);
  if (next !== buf.length) throw new Error('DER: trailing data');
  if (tag !== undefined && tlv.tag !== tag)
    throw new Error(`DER: tag 0x${tlv.tag.toString(16)}, want 0x${tag.toString(16)}`);
  return tlv;
}

export function decodeOid(value: Buffer): string {
  const arcs: number[] = [];
  let n = 0;
  for (const byte of value) {
    n = n * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      if (arcs.length === 0) arcs.push(n < 80 ? Math.floor(n / 40) : 2, n < 80 ? n % 40 : n - 80);
      else arcs.push(n);
      n = 0;
    }
  }
  return arcs.join('.');
}

export function encodeOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const body: number[] = [];
  const push = (n: number) => {
    const bytes = [n & 0x7f];
    for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) bytes.unshift((n & 0x7f) | 0x80);
    body.push(...bytes);
  };
  push(arcs[0] * 40 + arcs[1]);
  for (const arc of arcs.slice(2)) push(arc);
  return tlv(Tag.OID, Buffer.from(body));
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length =
    n < 0x80
      ? Buffer.from([n])
      : n < 0x100
        ? Buffer.from([0x81, n])
        : n < 0x10000
          ? Buffer.from([0x82, n >> 8, n & 0xff])
          : Buffer.from([0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

export const Oid = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  upn: '1.3.6.1.4.1.311.20.2.3',
} as const;

export interface Attribute {
  oid: string;
  value: string;
}

/** A Name as its RDNSequence, in encoding order (least specific first). */
export type Rdns = Attribute[][];

export interface Extension {
  oid: string;
  critical: boolean;
  value: Buffer;
}

/** A GeneralName as Go's asn1.RawValue sees it: the context tag number and the content octets. */
export interface GeneralName {
  tagNumber: number;
  content: Buffer;
}

export interface CertificateView {
  subjectDer: Buffer;
  issuerDer: Buffer;
  subject: Rdns;
  extensions: Extension[];
  /** The SAN extension's GeneralNames in order (empty without the extension). */
  generalNames: GeneralName[];
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
  otherNames: { oid: string; utf8Value: string }[];
  /** KeyUsage bit names (RFC 5280 order), empty without the extension. */
  keyUsages: string[];
  /** BasicConstraints cA (false without the extension). */
  isCA: boolean;
}

const KEY_USAGE_BITS = [
  'digitalSignature',
  'contentCommitment',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
];

function decodeString(element: Tlv): string {
  switch (element.tag) {
    case Tag.UTF8_STRING:
      return element.value.toString('utf8');
    case Tag.PRINTABLE_STRING:
    case Tag.IA5_STRING:
    case 0x14: // T61String, read as Latin-1 as Go does
      return element.value.toString('latin1');
    case 0x1e: {
      const swapped = Buffer.from(element.value);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    default:
      return `#${element.raw.toString('hex')}`;
  }
}

export function decodeName(der: Buffer): Rdns {
  return children(single(der, Tag.SEQUENCE).value).map((rdn) => {
    if (rdn.tag !== Tag.SET) throw new Error('Name: RDN is not a SET');
    return children(rdn.value).map((atv) => {
      const [type, value] = children(atv.value);
      if (atv.tag !== Tag.SEQUENCE || type?.tag !== Tag.OID || !value)
        throw new Error('Name: bad AttributeTypeAndValue');
      return { oid: decodeOid(type.value), value: decodeString(value) };
    });
  });
}

export function formatIp(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
    return groups.join(':');
  }
  return `#${bytes.toString('hex')}`;
}

/** An IP address in the same canonical text as formatIp (IPv6 fully expanded, lower case, no zero padding). */
export function canonicalIp(text: string): string {
  if (!text.includes(':')) return text.split('.').map(Number).join('.');
  const [head, tail] = text.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16).toString(16)).join(':');
}

export function decodeGeneralNames(value: Buffer): GeneralName[] {
  return children(single(value, Tag.SEQUENCE).value).map((name) => {
    if ((name.tag & 0xc0) !== 0x80) throw new Error('GeneralName is not context-specific');
    return { tagNumber: name.tag & 0x1f, content: name.value };
  });
}

/** Parses one DER certificate. */
export function viewCertificate(der: Buffer): CertificateView {
  const [tbs] = children(single(der, Tag.SEQUENCE).value);
  const fields = children(tbs.value);
  let index = fields[0]?.tag === 0xa0 ? 1 : 0; // [0] EXPLICIT version
  const [, , issuer, , subject] = fields.slice(index, index + 6);
  index += 6;
  const extensionsField = fields.slice(index).find((f) => f.tag === 0xa3);
  const extensions: Extension[] = extensionsField
    ? children(single(extensionsField.value, Tag.SEQUENCE).value).map((ext) => {
        const parts = children(ext.value);
        const critical = parts.length === 3 && parts[1].value[0] !== 0;
        const octets = parts[parts.length - 1];
        if (octets.tag !== Tag.OCTET_STRING) throw new Error('Extension: extnValue is not an OCTET STRING');
        return { oid: decodeOid(parts[0].value), critical, value: octets.value };
      })
    : [];
  const find = (oid: string) => extensions.find((e) => e.oid === oid);

  const san = find(Oid.subjectAltName);
  const generalNames = san ? decodeGeneralNames(san.value) : [];
  const view: CertificateView = {
    subjectDer: subject.raw,
    issuerDer: issuer.raw,
    subject: decodeName(subject.raw),
    extensions,
    generalNames,
    dnsNames: [],
    emailAddresses: [],
    ipAddresses: [],
    uris: [],
    otherNames: [],
    keyUsages: [],
    isCA: false,
  };
  for (const name of generalNames) {
    switch (name.tagNumber) {
      case 0: {
        // otherName ::= SEQUENCE { type-id OID, value [0] EXPLICIT ANY }, with the SEQUENCE tag replaced.
        const [typeId, explicit] = children(name.content);
        const inner = single(explicit.value);
        view.otherNames.push({ oid: decodeOid(typeId.value), utf8Value: decodeString(inner) });
        break;
      }
      case 1:
        view.emailAddresses.push(name.content.toString('latin1'));
        break;
      case 2:
        view.dnsNames.push(name.content.toString('latin1'));
        break;
      case 6:
        view.uris.push(name.content.toString('latin1'));
        break;
      case 7:
        view.ipAddresses.push(formatIp(name.content));
        break;
    }
  }
  const ku = find(Oid.keyUsage);
  if (ku) {
    const bits = single(ku.value, Tag.BIT_STRING).value.subarray(1);
    view.keyUsages = KEY_USAGE_BITS.filter((_, i) => (bits[i >> 3] ?? 0) & (0x80 >> (i & 7)));
  }
  const bc = find(Oid.basicConstraints);
  if (bc) {
    const [first] = children(single(bc.value, Tag.SEQUENCE).value);
    view.isCA = first?.tag === Tag.BOOLEAN && first.value[0] !== 0;
  }
  return view;
}

/** The DER of each CERTIFICATE block of a PEM bundle, in order. */
export function pemCertificates(pem: string): Buffer[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) =>
    Buffer.from(m[1].replace(/\s+/g, ''), 'base64'),
  );
}

/** The first PEM block of any type, as DER. */
export function firstPemBlockDer(pem: string): Buffer | undefined {
  const match = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  return match ? Buffer.from(match[2].replace(/\s+/g, ''), 'base64') : undefined;
}

/**
 * A minimal RFC 4514 reader for the expectations: RDNs most specific first as written, `+` for multi-valued
 * RDNs, backslash escapes (`\,` and `\2C`). Returned in encoding order (reversed), attribute types as written.
 */
export function parseRfc4514(dn: string): { type: string; value: string }[][] {
  const rdns: { type: string; value: string }[][] = [];
  let rdn: { type: string; value: string }[] = [];
  let current = '';
  let type: string | undefined;
  const finishAttribute = () => {
    if (type === undefined) throw new Error(`bad DN ${JSON.stringify(dn)}`);
    rdn.push({ type: type.trim(), value: current });
    type = undefined;
    current = '';
  };
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i];
    if (c === '\\') {
      const hex = dn.slice(i + 1, i + 3);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        current += String.fromCharCode(parseInt(hex, 16));
        i += 2;
      } else {
        current += dn[++i];
      }
    } else if (c === '=' && type === undefined) {
      type = current;
      current = '';
    } else if (c === '+') {
      finishAttribute();
    } else if (c === ',') {
      finishAttribute();
      rdns.push(rdn);
      rdn = [];
    } else {
      current += c;
    }
  }
  finishAttribute();
  rdns.push(rdn);
  return rdns.reverse();
}
