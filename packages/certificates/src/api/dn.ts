/**
 * RFC 4514 distinguished names as cert-manager reads `spec.literalSubject`: parsed by go-ldap's ParseDN
 * (whose error texts users see in the webhook's answer), then attribute types mapped to OIDs by
 * pki.UnmarshalSubjectStringToRDNSequence. The mapping is case-sensitive there (`cn=foo` is an unknown
 * key), and we keep it so: a subject the webhook would reject must be rejected here too.
 */

export interface Attribute {
  /** The attribute type as written (`CN`, `2.5.4.3`). */
  type: string;
  value: string;
}

/** One relative distinguished name: usually one attribute, several when joined with `+`. */
export type RelativeDN = Attribute[];

/** Short names cert-manager knows (pkix's names plus DC and UID), with their OIDs. */
export const ATTRIBUTE_OIDS: Readonly<Record<string, string>> = {
  C: '2.5.4.6',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  CN: '2.5.4.3',
  SERIALNUMBER: '2.5.4.5',
  L: '2.5.4.7',
  ST: '2.5.4.8',
  STREET: '2.5.4.9',
  DC: '0.9.2342.19200300.100.1.25',
  UID: '0.9.2342.19200300.100.1.1',
};

export const COMMON_NAME_OID = '2.5.4.3';

/** Go's `%#U` for a byte that is not a hex digit, as encoding/hex.InvalidByteError prints it. */
function invalidByte(char: string): string {
  const code = (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  return `encoding/hex: invalid byte: U+${code} '${char}'`;
}

const HEX = /^[0-9a-fA-F]$/;

/** Trims unescaped spaces at both ends; a trailing space preceded by an odd number of backslashes stays. */
function stripSpaces(text: string): string {
  const trimmed = text.replace(/^ +| +$/g, '');
  if (trimmed.length > 0 && text.endsWith(' ')) {
    let backslashes = 0;
    for (let i = trimmed.length - 1; i >= 0 && trimmed[i] === '\\'; i--) backslashes++;
    if (backslashes % 2 === 1) return `${trimmed} `;
  }
  return trimmed;
}

/** Unescapes a type or string value (`\,`, `\2C`), building bytes so that `\C4\8D` becomes `č`. */
function decodeString(text: string): string {
  const s = [...stripSpaces(text)];
  const bytes: number[] = [];
  const push = (char: string) => bytes.push(...Buffer.from(char, 'utf8'));
  for (let i = 0; i < s.length; i++) {
    const char = s[i];
    if (char !== '\\') {
      // RFC 4514 §2.4: these must appear escaped inside a value.
      if (char === '"' || char === ';' || char === '<' || char === '>')
        throw new Error(`got unescaped character: '${char}'`);
      if (char === '\0') throw new Error('got unescaped NULL character');
      push(char);
      continue;
    }
    if (i + 1 >= s.length) throw new Error(`got corrupted escaped character: '${s.join('')}'`);
    const next = s[i + 1];
    if (' "#+,;<=>\\'.includes(next)) {
      push(next);
      i++;
      continue;
    }
    if (i + 2 >= s.length)
      throw new Error(`failed to decode escaped character: encoding/hex: invalid byte: ${next}`);
    const pair = s[i + 1] + s[i + 2];
    if (Buffer.byteLength(pair, 'utf8') !== 2)
      throw new Error(`failed to decode escaped character: invalid byte: ${pair}`);
    for (const digit of pair) {
      if (!HEX.test(digit)) throw new Error(`failed to decode escaped character: ${invalidByte(digit)}`);
    }
    bytes.push(Number.parseInt(pair, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A `#`-prefixed value: hex of one BER element, whose content octets become the value. */
function decodeBerValue(hex: string): string {
  if (hex.length % 2 === 1)
    throw new Error('failed to decode BER encoding: encoding/hex: odd length hex string');
  for (const digit of hex) {
    if (!HEX.test(digit)) throw new Error(`failed to decode BER encoding: ${invalidByte(digit)}`);
  }
  const der = Buffer.from(hex, 'hex');
  const truncated = () => new Error('failed to decode BER encoding: unexpected EOF');
  let offset = 1;
  if (der.length < 2) throw truncated();
  // High-tag-number form: the tag continues while the top bit is set.
  if ((der[0] & 0x1f) === 0x1f) {
    while (offset < der.length && der[offset] & 0x80) offset++;
    offset++;
  }
  if (offset >= der.length) throw truncated();
  let length = der[offset++];
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || offset + count > der.length) throw truncated();
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[offset++];
  }
  if (offset + length > der.length) throw truncated();
  if (offset + length < der.length)
    throw new Error('failed to decode BER encoding: trailing bytes after value');
  return der.subarray(offset, offset + length).toString('utf8');
}

function decodeValue(text: string): string {
  return text.startsWith('#') ? decodeBerValue(text.slice(1)) : decodeString(text);
}

/**
 * Parses a DN as go-ldap's ParseDN, in written order (most specific first). An empty or blank string is
 * an empty DN. Throws with go-ldap's error text.
 */
export function parseDN(text: string): RelativeDN[] {
  const rdns: RelativeDN[] = [];
  if (text.trim() === '') return rdns;
  let rdn: RelativeDN = [];
  let type = '';
  let escaping = false;
  let start = 0;
  const finishAttribute = (value: string, endsRdn: boolean) => {
    rdn.push({ type, value: decodeValue(value) });
    type = '';
    if (endsRdn) {
      rdns.push(rdn);
      rdn = [];
    }
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (escaping) escaping = false;
    else if (char === '\\') escaping = true;
    else if (char === '=' && type === '') {
      type = decodeString(text.slice(start, i));
      start = i + 1;
    } else if (char === ',' || char === '+' || char === ';') {
      if (type === '') throw new Error('incomplete type, value pair');
      finishAttribute(text.slice(start, i), char !== '+');
      start = i + 1;
    }
  }
  if (type === '') throw new Error('DN ended with incomplete type, value pair');
  finishAttribute(text.slice(start), true);
  return rdns;
}

/** pki.ParseObjectIdentifier: dot-separated integers (strconv.Atoi, so a sign is allowed). */
export function isObjectIdentifier(text: string): boolean {
  return text !== '' && text.split('.').every((part) => /^[+-]?[0-9]+$/.test(part));
}

/** The OID an attribute type stands for, or undefined when cert-manager would not recognise it. */
export function attributeOid(type: string): string | undefined {
  if (Object.hasOwn(ATTRIBUTE_OIDS, type)) return ATTRIBUTE_OIDS[type];
  return isObjectIdentifier(type) ? type : undefined;
}
