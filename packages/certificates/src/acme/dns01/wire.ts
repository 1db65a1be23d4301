/**
 * The DNS wire format (RFC 1035 §4), as much of it as DNS-01 needs: queries for SOA, NS, CNAME and TXT with an
 * EDNS0 OPT record, RFC 2136 UPDATE messages, and the TSIG record of RFC 8945.
 *
 * Written here rather than taken from `dns-packet` (docs/adr/1002-dns01-rfc2136-own-wire-format.md): that
 * library cannot express class NONE (254), which an UPDATE that deletes one record needs, has no TSIG record
 * data, and re-encodes what it decodes, while TSIG verification needs the exact bytes the server sent.
 *
 * Names are absolute, written with a trailing dot (`_acme-challenge.example.test.`). Encoding never compresses
 * names (RFC 8945 §4.3.3 wants the TSIG names uncompressed anyway); decoding follows compression pointers.
 */

export const RRType = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  TXT: 16,
  AAAA: 28,
  OPT: 41,
  TSIG: 250,
  ANY: 255,
} as const;

export const RRClass = {
  IN: 1,
  /** RFC 2136 §2.4: "delete this RR" in an UPDATE's update section. */
  NONE: 254,
  ANY: 255,
} as const;

export const Opcode = { QUERY: 0, UPDATE: 5 } as const;

/** RCODEs (RFC 1035, 2136) and the TSIG error codes (RFC 8945 §3), by the names `dig` and miekg/dns print. */
const RCODE_NAMES: Record<number, string> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
  16: 'BADSIG',
  17: 'BADKEY',
  18: 'BADTIME',
  22: 'BADTRUNC',
};

export const Rcode = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5, NOTAUTH: 9 } as const;

export function rcodeName(code: number): string {
  return RCODE_NAMES[code] ?? `RCODE${code}`;
}

export class DnsWireError extends Error {
  constructor(message: string) {
    super(`malformed DNS message: ${message}`);
    this.name = 'DnsWireError';
  }
}

/** A record to encode: its data is already in wire form (see txtData, nameData). */
export interface RecordToEncode {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: Buffer;
}

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface SOAData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

export interface TSIGData {
  algorithm: string;
  /** Seconds since the epoch (48 bits). */
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

/** A decoded record: `data` is the record data as sent, the typed fields are filled for the types we read. */
export interface DecodedRecord extends RecordToEncode {
  /** Where the record starts in the message (TSIG verification needs the bytes before it). */
  offset: number;
  /** NS and CNAME targets. */
  target?: string;
  /** TXT character-strings, each as Latin-1 text (byte for byte). */
  texts?: string[];
  soa?: SOAData;
  tsig?: TSIGData;
}

export interface MessageToEncode {
  id: number;
  opcode?: number;
  /** Recursion desired. */
  rd?: boolean;
  /** In an UPDATE, the question section is the zone section (RFC 2136 §2.3). */
  questions?: Question[];
  answers?: RecordToEncode[];
  authorities?: RecordToEncode[];
  additionals?: RecordToEncode[];
}

export interface DecodedMessage {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  rcode: number;
  questions: Question[];
  answers: DecodedRecord[];
  authorities: DecodedRecord[];
  additionals: DecodedRecord[];
}

// ---- names ----

/** Adds the trailing dot if missing (miekg/dns `Fqdn`). */
export function fqdn(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

/** DNS names compare case-insensitively (RFC 4343), with or without the trailing dot. */
export function sameName(a: string, b: string): boolean {
  return fqdn(a).toLowerCase() === fqdn(b).toLowerCase();
}

/** A name in wire form: length-prefixed labels, then the root's zero byte. */
export function encodeName(name: string): Buffer {
  const absolute = fqdn(name);
  if (absolute === '.') return Buffer.from([0]);
  const labels = absolute.slice(0, -1).split('.');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'latin1');
    if (bytes.length === 0) throw new DnsWireError(`empty label in ${JSON.stringify(name)}`);
    if (bytes.length > 63) throw new DnsWireError(`label longer than 63 bytes in ${JSON.stringify(name)}`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const wire = Buffer.concat(parts);
  if (wire.length > 255) throw new DnsWireError(`name longer than 255 bytes: ${JSON.stringify(name)}`);
  return wire;
}

/** RFC 8945 §4.3.3: the key and algorithm names enter the MAC in canonical form: lower case, uncompressed. */
export function canonicalName(name: string): Buffer {
  return encodeName(fqdn(name).toLowerCase());
}

function readName(buf: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let offset = start;
  let end = -1;
  let jumps = 0;
  for (;;) {
    if (offset >= buf.length) throw new DnsWireError('name runs past the end');
    const length = buf[offset];
    if ((length & 0xc0) === 0xc0) {
      if (offset + 1 >= buf.length) throw new DnsWireError('truncated compression pointer');
      if (++jumps > 64) throw new DnsWireError('compression pointer loop');
      if (end < 0) end = offset + 2;
      offset = ((length & 0x3f) << 8) | buf[offset + 1];
      continue;
    }
    if ((length & 0xc0) !== 0) throw new DnsWireError(`unknown label type 0x${length.toString(16)}`);
    if (length === 0) {
      if (end < 0) end = offset + 1;
      break;
    }
    if (offset + 1 + length > buf.length) throw new DnsWireError('label runs past the end');
    labels.push(buf.toString('latin1', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  return { name: labels.length === 0 ? '.' : `${labels.join('.')}.`, end };
}

// ---- record data ----

/** TXT data: the value as character-strings of at most 255 bytes each (RFC 1035 §3.3.14). */
export function txtData(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  if (bytes.length === 0) return Buffer.from([0]);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

export function nameData(name: string): Buffer {
  return encodeName(name);
}

/** TSIG record data (RFC 8945 §4.2). */
export function tsigData(tsig: TSIGData): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUIntBE(tsig.timeSigned, 0, 6);
  fixed.writeUInt16BE(tsig.fudge, 6);
  fixed.writeUInt16BE(tsig.mac.length, 8);
  const tail = Buffer.alloc(6);
  tail.writeUInt16BE(tsig.originalId, 0);
  tail.writeUInt16BE(tsig.error, 2);
  tail.writeUInt16BE(tsig.other.length, 4);
  return Buffer.concat([encodeName(tsig.algorithm), fixed, tsig.mac, tail, tsig.other]);
}

/** The EDNS0 OPT pseudo-record advertising a UDP payload size (RFC 6891 §6.1.2), as cert-manager sends. */
export function ednsRecord(udpPayloadSize = 4096): RecordToEncode {
  return { name: '.', type: RRType.OPT, class: udpPayloadSize, ttl: 0, data: Buffer.alloc(0) };
}

// ---- messages ----

export function encodeRecord(rr: RecordToEncode): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(rr.type, 0);
  fixed.writeUInt16BE(rr.class, 2);
  fixed.writeUInt32BE(rr.ttl >>> 0, 4);
  fixed.writeUInt16BE(rr.data.length, 8);
  return Buffer.concat([encodeName(rr.name), fixed, rr.data]);
}

export function encodeMessage(message: MessageToEncode): Buffer {
  const questions = message.questions ?? [];
  const answers = message.answers ?? [];
  const authorities = message.authorities ?? [];
  const additionals = message.additionals ?? [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(message.id, 0);
  header.writeUInt16BE((((message.opcode ?? Opcode.QUERY) & 0xf) << 11) | (message.rd ? 0x0100 : 0), 2);
  header.writeUInt16BE(questions.length, 4);
  header.writeUInt16BE(answers.length, 6);
  header.writeUInt16BE(authorities.length, 8);
  header.writeUInt16BE(additionals.length, 10);
  const parts: Buffer[] = [header];
  for (const q of questions) {
    const fixed = Buffer.alloc(4);
    fixed.writeUInt16BE(q.type, 0);
    fixed.writeUInt16BE(q.class, 2);
    parts.push(encodeName(q.name), fixed);
  }
  for (const rr of [...answers, ...authorities, ...additionals]) parts.push(encodeRecord(rr));
  return Buffer.concat(parts);
}

function decodeRecord(buf: Buffer, start: number): { record: DecodedRecord; end: number } {
  const { name, end: afterName } = readName(buf, start);
  if (afterName + 10 > buf.length) throw new DnsWireError('truncated record header');
  const type = buf.readUInt16BE(afterName);
  const klass = buf.readUInt16BE(afterName + 2);
  const ttl = buf.readUInt32BE(afterName + 4);
  const length = buf.readUInt16BE(afterName + 8);
  const dataStart = afterName + 10;
  const dataEnd = dataStart + length;
  if (dataEnd > buf.length) throw new DnsWireError('record data runs past the end');
  const record: DecodedRecord = {
    name,
    type,
    class: klass,
    ttl,
    data: buf.subarray(dataStart, dataEnd),
    offset: start,
  };
  switch (type) {
    case RRType.NS:
    case RRType.CNAME:
      record.target = readName(buf, dataStart).name;
      break;
    case RRType.TXT: {
      const texts: string[] = [];
      for (let at = dataStart; at < dataEnd;) {
        const n = buf[at];
        if (at + 1 + n > dataEnd) throw new DnsWireError('TXT string runs past its record');
        texts.push(buf.toString('latin1', at + 1, at + 1 + n));
        at += 1 + n;
      }
      record.texts = texts;
      break;
    }
    case RRType.SOA: {
      const mname = readName(buf, dataStart);
      const rname = readName(buf, mname.end);
      if (rname.end + 20 > dataEnd) throw new DnsWireError('truncated SOA record');
      record.soa = {
        mname: mname.name,
        rname: rname.name,
        serial: buf.readUInt32BE(rname.end),
        refresh: buf.readUInt32BE(rname.end + 4),
        retry: buf.readUInt32BE(rname.end + 8),
        expire: buf.readUInt32BE(rname.end + 12),
        minimum: buf.readUInt32BE(rname.end + 16),
      };
      break;
    }
    case RRType.TSIG: {
      const algorithm = readName(buf, dataStart);
      let at = algorithm.end;
      if (at + 10 > dataEnd) throw new DnsWireError('truncated TSIG record');
      const timeSigned = buf.readUIntBE(at, 6);
      const fudge = buf.readUInt16BE(at + 6);
      const macSize = buf.readUInt16BE(at + 8);
      at += 10;
      if (at + macSize + 6 > dataEnd) throw new DnsWireError('truncated TSIG record');
      const mac = buf.subarray(at, at + macSize);
      at += macSize;
      const originalId = buf.readUInt16BE(at);
      const error = buf.readUInt16BE(at + 2);
      const otherLength = buf.readUInt16BE(at + 4);
      at += 6;
      if (at + otherLength > dataEnd) throw new DnsWireError('truncated TSIG record');
      record.tsig = {
        algorithm: algorithm.name,
        timeSigned,
        fudge,
        mac,
        originalId,
        error,
        other: buf.subarray(at, at + otherLength),
      };
      break;
    }
  }
  return { record, end: dataEnd };
}

export function decodeMessage(buf: Buffer): DecodedMessage {
  if (buf.length < 12) throw new DnsWireError(`${buf.length} bytes is shorter than a header`);
  const flags = buf.readUInt16BE(2);
  const counts = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)];
  let offset = 12;
  const questions: Question[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const { name, end } = readName(buf, offset);
    if (end + 4 > buf.length) throw new DnsWireError('truncated question');
    questions.push({ name, type: buf.readUInt16BE(end), class: buf.readUInt16BE(end + 2) });
    offset = end + 4;
  }
  const sections: DecodedRecord[][] = [[], [], []];
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s + 1]; i++) {
      const { record, end } = decodeRecord(buf, offset);
      sections[s].push(record);
      offset = end;
    }
  }
  // The extended RCODE's upper 8 bits live in the OPT record's TTL (RFC 6891 §6.1.3).
  const opt = sections[2].find((rr) => rr.type === RRType.OPT);
  const extended = opt ? (opt.ttl >>> 24) << 4 : 0;
  return {
    id: buf.readUInt16BE(0),
    qr: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0xf,
    aa: (flags & 0x0400) !== 0,
    tc: (flags & 0x0200) !== 0,
    rd: (flags & 0x0100) !== 0,
    ra: (flags & 0x0080) !== 0,
    rcode: extended | (flags & 0xf),
    questions,
    answers: sections[0],
    authorities: sections[1],
    additionals: sections[2],
  };
}
