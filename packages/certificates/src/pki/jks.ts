/**
 * Java KeyStore (JKS, version 2) encoding for `spec.keystores.jks`, readable by Java's own "JKS" provider.
 *
 * cert-manager writes these files with github.com/pavlo-v-chernykh/keystore-go; the layout here is the same
 * (magic, version, entries, trailing keyed SHA-1), but where keystore-go and Java disagree we follow Java,
 * since a JVM is the only consumer: the password is hashed as UTF-16BE code units (keystore-go widens each
 * UTF-8 byte, so a non-ASCII password doesn't open in Java) and aliases are modified UTF-8 (keystore-go writes
 * plain UTF-8, which Java's readUTF rejects for characters outside the BMP).
 */

import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import { octetString, oid, sequence, Tag, tlv } from './der.ts';

const MAGIC = 0xfeedfeed;
const VERSION = 2;
const PRIVATE_KEY_ENTRY = 1;
const TRUSTED_CERTIFICATE_ENTRY = 2;
/** What Java itself writes; Java loads the store through CertificateFactory.getInstance(type). */
const CERTIFICATE_TYPE = 'X.509';
/** Sun's proprietary JKS key protection algorithm (sun.security.provider.KeyProtector). */
const KEY_PROTECTOR_OID = '1.3.6.1.4.1.42.2.17.1.1';
const SALT_LENGTH = 20;
const SHA1_LENGTH = 20;
/** Mixed into the store digest after the password; Java rejects the store without it. */
const WHITENER = Buffer.from('Mighty Aphrodite', 'latin1');

type Entry =
  | { kind: 'key'; created: Date; protectedKey: Buffer; chain: Buffer[] }
  | { kind: 'certificate'; created: Date; certificate: Buffer };

/**
 * keystore.jks: a PrivateKeyEntry `alias` (key as PKCS#8, chain leaf first), plus trusted certificate entries
 * "ca", "ca-1", … for cas.
 */
export function encodeJksKeystore(
  password: string,
  alias: string,
  key: KeyObject,
  chain: Buffer[] /* DER, leaf first */,
  cas: Buffer[] /* DER */,
  now: Date = new Date(),
): Buffer {
  if (key.type !== 'private') throw new Error('JKS keystore: expected a private key');
  if (chain.length === 0) throw new Error('JKS keystore: the certificate chain is empty');
  chain.forEach((cert, i) => checkCertificate(cert, `chain[${i}]`));
  const pkcs8 = key.export({ format: 'der', type: 'pkcs8' });
  const entries = new Map<string, Entry>();
  setEntry(entries, alias, { kind: 'key', created: now, protectedKey: protectKey(pkcs8, password), chain });
  addCas(entries, cas, now);
  return writeStore(entries, password);
}

/** truststore.jks: trusted certificate entries "ca", "ca-1", … */
export function encodeJksTruststore(password: string, cas: Buffer[], now: Date = new Date()): Buffer {
  const entries = new Map<string, Entry>();
  addCas(entries, cas, now);
  return writeStore(entries, password);
}

function addCas(entries: Map<string, Entry>, cas: Buffer[], now: Date): void {
  cas.forEach((certificate, i) => {
    checkCertificate(certificate, `cas[${i}]`);
    setEntry(entries, i === 0 ? 'ca' : `ca-${i}`, { kind: 'certificate', created: now, certificate });
  });
}

/**
 * Java's JKS looks aliases up lower-cased (Locale.ENGLISH), so a mixed-case alias in the file could be listed
 * but never retrieved. As in cert-manager, a later entry replaces an earlier one with the same alias: a key
 * alias of "ca" loses the key to the first CA.
 */
function setEntry(entries: Map<string, Entry>, alias: string, entry: Entry): void {
  entries.set(alias.toLowerCase(), entry);
}

function checkCertificate(der: Buffer, what: string): void {
  // Java would fail to load the whole store on an unparsable certificate; catch the obvious case early.
  if (der.length === 0 || der[0] !== Tag.SEQUENCE) throw new Error(`JKS: ${what} is not a DER certificate`);
}

/** Java turns the char[] password into bytes two per UTF-16 code unit, high byte first. */
function passwordBytes(password: string): Buffer {
  return Buffer.from(password, 'utf16le').swap16();
}

/**
 * Sun's KeyProtector: XOR with a SHA-1 keystream (block n = SHA-1(password ‖ block n-1), block 0 being a random
 * salt), then SHA-1(password ‖ plaintext) as an integrity check, wrapped in an EncryptedPrivateKeyInfo.
 */
function protectKey(pkcs8: Buffer, password: string): Buffer {
  const pw = passwordBytes(password);
  const salt = randomBytes(SALT_LENGTH);
  const blocks: Buffer[] = [];
  let previous = salt;
  for (let produced = 0; produced < pkcs8.length; produced += SHA1_LENGTH) {
    previous = createHash('sha1').update(pw).update(previous).digest();
    blocks.push(previous);
  }
  const keystream = Buffer.concat(blocks);
  const encrypted = Buffer.alloc(pkcs8.length);
  for (let i = 0; i < pkcs8.length; i++) encrypted[i] = pkcs8[i] ^ keystream[i];
  const check = createHash('sha1').update(pw).update(pkcs8).digest();
  return sequence(
    sequence(oid(KEY_PROTECTOR_OID), tlv(Tag.NULL)),
    octetString(Buffer.concat([salt, encrypted, check])),
  );
}

/** Java's DataOutput.writeUTF: modified UTF-8 of the UTF-16 code units (NUL as C0 80, surrogates one by one). */
function writeUtf(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) bytes.push(c);
    else if (c <= 0x7ff) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  if (bytes.length > 0xffff) throw new Error(`JKS: alias is ${bytes.length} bytes long, at most 65535 fit`);
  return Buffer.concat([uint16(bytes.length), Buffer.from(bytes)]);
}

function uint16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

function uint32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

/** Creation time as Java's Date.getTime(): signed milliseconds since the epoch. */
function timestamp(date: Date): Buffer {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new Error('JKS: invalid creation time');
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(ms));
  return b;
}

function certificate(der: Buffer): Buffer[] {
  return [writeUtf(CERTIFICATE_TYPE), uint32(der.length), der];
}

/** Entries in insertion order (keystore-go's follows Go map iteration, i.e. random), then the keyed digest. */
function writeStore(entries: Map<string, Entry>, password: string): Buffer {
  const parts: Buffer[] = [uint32(MAGIC), uint32(VERSION), uint32(entries.size)];
  for (const [alias, entry] of entries) {
    if (entry.kind === 'key') {
      parts.push(uint32(PRIVATE_KEY_ENTRY), writeUtf(alias), timestamp(entry.created));
      parts.push(uint32(entry.protectedKey.length), entry.protectedKey, uint32(entry.chain.length));
      for (const der of entry.chain) parts.push(...certificate(der));
    } else {
      parts.push(uint32(TRUSTED_CERTIFICATE_ENTRY), writeUtf(alias), timestamp(entry.created));
      parts.push(...certificate(entry.certificate));
    }
  }
  const body = Buffer.concat(parts);
  const digest = createHash('sha1').update(passwordBytes(password)).update(WHITENER).update(body).digest();
  return Buffer.concat([body, digest]);
}
