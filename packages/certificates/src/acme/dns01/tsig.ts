/**
 * TSIG (RFC 8945): signing a request and verifying the signed response, with HMAC from `node:crypto`.
 *
 * Two lists of algorithms, on purpose. Admission accepts cert-manager's four, `RFC2136_TSIG_ALGORITHMS` in
 * api/acme-constants.ts (`HMACMD5`, its default, `HMACSHA1`, `HMACSHA256`, `HMACSHA512`, case-insensitive;
 * pkg/issuer/acme/dns/rfc2136/rfc2136.go), so that an Issuer certkit admits is one cert-manager admits. The
 * provider signs with those and with `HMACSHA224` and `HMACSHA384` (`TSIG_ALGORITHMS` here), which
 * cert-manager's TSIG code (tsig.go there, after miekg/dns) also computes: BIND's `tsig-keygen` makes such keys,
 * and an Issuer that reached the store without our admission (written before it, or with admission off) then
 * still works. The type below makes the second list a superset of the first.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RFC2136_TSIG_ALGORITHMS } from '../../api/acme-constants.ts';
import {
  canonicalName,
  type DecodedMessage,
  fqdn,
  RRClass,
  RRType,
  rcodeName,
  sameName,
  tsigData,
} from './wire.ts';

/** A name admission accepts: every one of them must be signable. */
type AdmittedTsigAlgorithm = (typeof RFC2136_TSIG_ALGORITHMS)[number];

export interface TsigAlgorithm {
  /** The algorithm's domain name on the wire (RFC 8945 §6). */
  readonly wireName: string;
  /** The `node:crypto` hash. */
  readonly hash: string;
}

/** The algorithms the provider signs with, by cert-manager's spelling (see the list admission accepts above). */
export const TSIG_ALGORITHMS: Readonly<Record<AdmittedTsigAlgorithm, TsigAlgorithm>> &
  Readonly<Record<string, TsigAlgorithm | undefined>> = {
  HMACMD5: { wireName: 'hmac-md5.sig-alg.reg.int.', hash: 'md5' },
  HMACSHA1: { wireName: 'hmac-sha1.', hash: 'sha1' },
  HMACSHA224: { wireName: 'hmac-sha224.', hash: 'sha224' },
  HMACSHA256: { wireName: 'hmac-sha256.', hash: 'sha256' },
  HMACSHA384: { wireName: 'hmac-sha384.', hash: 'sha384' },
  HMACSHA512: { wireName: 'hmac-sha512.', hash: 'sha512' },
};

/** cert-manager's default when `tsigAlgorithm` is empty. */
export const DEFAULT_TSIG_ALGORITHM = 'HMACMD5';

/** The fudge cert-manager signs with: the server accepts a clock skew of five minutes either way. */
export const DEFAULT_FUDGE_SECONDS = 300;

export interface TsigKey {
  /** The key's name as configured on the server (`key "certkit" { ... }`). */
  name: string;
  algorithm: TsigAlgorithm;
  secret: Buffer;
}

export class TsigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TsigError';
  }
}

/** Looks up an algorithm by cert-manager's spelling, case-insensitively; empty means HMACMD5. */
export function tsigAlgorithm(name: string | undefined): TsigAlgorithm {
  const key = (name || DEFAULT_TSIG_ALGORITHM).toUpperCase();
  const algorithm = TSIG_ALGORITHMS[key];
  if (!algorithm) {
    throw new TsigError(
      `TSIG algorithm '${name}' is not supported (supported: ${Object.keys(TSIG_ALGORITHMS).join(', ')})`,
    );
  }
  return algorithm;
}

/**
 * Decodes a TSIG secret as `tsig-keygen` prints it and cert-manager reads it from the Secret: standard
 * base64. Surrounding whitespace (a trailing newline from `echo`) is ignored; anything else that is not
 * base64 is an error rather than a silently different key.
 */
export function decodeTsigSecret(text: string): Buffer {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) {
    throw new TsigError('error decoding the provided TSIG secret: it is not standard base64');
  }
  return Buffer.from(trimmed, 'base64');
}

interface TsigVariables {
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  error: number;
  other: Buffer;
}

/** The TSIG variables that follow the message in the MAC input (RFC 8945 §4.3.3). */
function variables(v: TsigVariables): Buffer {
  const classTtl = Buffer.alloc(6);
  classTtl.writeUInt16BE(RRClass.ANY, 0);
  const times = Buffer.alloc(8);
  times.writeUIntBE(v.timeSigned, 0, 6);
  times.writeUInt16BE(v.fudge, 6);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(v.error, 0);
  tail.writeUInt16BE(v.other.length, 2);
  return Buffer.concat([
    canonicalName(v.keyName),
    classTtl,
    canonicalName(v.algorithm),
    times,
    tail,
    v.other,
  ]);
}

function hmac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac(key.algorithm.hash, key.secret);
  for (const part of parts) h.update(part);
  return h.digest();
}

export interface SignedMessage {
  /** The message with the TSIG record appended and ARCOUNT raised by one. */
  message: Buffer;
  /** The request MAC, which the response's MAC covers. */
  mac: Buffer;
}

/**
 * Signs an encoded message: the MAC covers the message as it is plus the TSIG variables; the TSIG record goes
 * last in the additional section (RFC 8945 §5.1).
 */
export function signMessage(
  message: Buffer,
  key: TsigKey,
  options: { timeSigned?: number; fudge?: number } = {},
): SignedMessage {
  const timeSigned = options.timeSigned ?? Math.floor(Date.now() / 1000);
  const fudge = options.fudge ?? DEFAULT_FUDGE_SECONDS;
  const vars: TsigVariables = {
    keyName: key.name,
    algorithm: key.algorithm.wireName,
    timeSigned,
    fudge,
    error: 0,
    other: Buffer.alloc(0),
  };
  const mac = hmac(key, [message, variables(vars)]);
  const data = tsigData({
    algorithm: key.algorithm.wireName,
    timeSigned,
    fudge,
    mac,
    originalId: message.readUInt16BE(0),
    error: 0,
    other: vars.other,
  });
  const owner = canonicalName(key.name);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(RRType.TSIG, 0);
  fixed.writeUInt16BE(RRClass.ANY, 2);
  fixed.writeUInt32BE(0, 4);
  fixed.writeUInt16BE(data.length, 8);
  const signed = Buffer.concat([message, owner, fixed, data]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { message: signed, mac };
}

/**
 * Verifies the TSIG of a response to a request signed with `key` whose MAC was `requestMac` (RFC 8945 §5.3.2
 * and §5.4). Throws a TsigError naming what failed: no signature, another key or algorithm, a TSIG error the
 * server reported (BADSIG, BADKEY, BADTIME), a wrong MAC, or a time outside the fudge.
 */
export function verifyResponse(
  raw: Buffer,
  response: DecodedMessage,
  key: TsigKey,
  requestMac: Buffer,
  now: number = Math.floor(Date.now() / 1000),
): void {
  const tsigIndex = response.additionals.findIndex((rr) => rr.type === RRType.TSIG);
  if (tsigIndex < 0) {
    throw new TsigError(
      `the server's ${rcodeName(response.rcode)} response is not signed with TSIG key ${fqdn(key.name)}`,
    );
  }
  if (tsigIndex !== response.additionals.length - 1) {
    throw new TsigError('the TSIG record is not the last record of the response');
  }
  const record = response.additionals[tsigIndex];
  const tsig = record.tsig!;
  if (tsig.error !== 0) {
    throw new TsigError(
      `the server rejected the TSIG signature: ${rcodeName(tsig.error)} (key ${fqdn(key.name)}, ` +
        `algorithm ${key.algorithm.wireName})`,
    );
  }
  if (!sameName(record.name, key.name) || !sameName(tsig.algorithm, key.algorithm.wireName)) {
    throw new TsigError(
      `the response is signed with key ${record.name} (${tsig.algorithm}), not ${fqdn(key.name)} ` +
        `(${key.algorithm.wireName})`,
    );
  }
  // The MAC covers the message without its TSIG record, with ARCOUNT as it was before the record was added
  // and the ID the server signed (a forwarder may have changed it).
  const unsigned = Buffer.from(raw.subarray(0, record.offset));
  unsigned.writeUInt16BE(tsig.originalId, 0);
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  const requestMacLength = Buffer.alloc(2);
  requestMacLength.writeUInt16BE(requestMac.length, 0);
  const expected = hmac(key, [
    requestMacLength,
    requestMac,
    unsigned,
    variables({
      keyName: key.name,
      algorithm: key.algorithm.wireName,
      timeSigned: tsig.timeSigned,
      fudge: tsig.fudge,
      error: tsig.error,
      other: tsig.other,
    }),
  ]);
  if (tsig.mac.length !== expected.length || !timingSafeEqual(tsig.mac, expected)) {
    throw new TsigError(`the response's TSIG MAC does not verify with key ${fqdn(key.name)}`);
  }
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) {
    throw new TsigError(
      `the response's TSIG time ${tsig.timeSigned} is more than ${tsig.fudge} s from ours (${now})`,
    );
  }
}
