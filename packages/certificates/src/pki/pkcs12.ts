/**
 * PKCS#12 (RFC 7292) keystores and truststores as cert-manager writes them for `spec.keystores.pkcs12`: the
 * layout of software.sslmate.com/src/go-pkcs12's Encoder.Encode and Encoder.EncodeTrustStore with the
 * profile's encoder, down to Go's encoding/asn1 quirks, so that only the random salts and IVs differ.
 *
 * A keystore's authenticated safe holds two SafeContents, as OpenSSL's PKCS12_create lays them out: the
 * certificates, encrypted; then the private key in a plain SafeContents, shrouded on its own. A truststore
 * holds one encrypted SafeContents of certificates marked as Java trust anchors.
 */

import {
  createCipheriv,
  createHash,
  createHmac,
  hash as digest,
  pbkdf2Sync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { decodeCertificateDer } from './certificate-der.ts';
import { contextTag, octetString, oid, sequence, setOf, Tag, tlv, unsignedInteger } from './der.ts';
import { decodeRdnSequence, distinguishedName, STRING_TAGS, type AttributeTypeAndValue } from './names.ts';
import { rc2CbcEncrypt } from './rc2.ts';

export type Pkcs12Profile = 'LegacyRC2' | 'LegacyDES' | 'Modern2023' | 'Modern2026';

export type HashName = 'sha1' | 'sha256' | 'sha512';

type Pbe = 'RC2-40' | '3DES' | 'PBES2';

interface EncoderParams {
  mac: 'sha1' | 'sha256' | 'PBMAC1';
  certs: Pbe;
  key: Pbe;
  macIterations: number;
  encryptionIterations: number;
  saltLength: number;
}

/** go-pkcs12's encoders of the same names. */
const PROFILES: Readonly<Record<Pkcs12Profile, EncoderParams>> = {
  LegacyRC2: {
    mac: 'sha1',
    certs: 'RC2-40',
    key: '3DES',
    macIterations: 1,
    encryptionIterations: 2048,
    saltLength: 8,
  },
  LegacyDES: {
    mac: 'sha1',
    certs: '3DES',
    key: '3DES',
    macIterations: 1,
    encryptionIterations: 2048,
    saltLength: 8,
  },
  Modern2023: {
    mac: 'sha256',
    certs: 'PBES2',
    key: 'PBES2',
    macIterations: 2048,
    encryptionIterations: 2048,
    saltLength: 16,
  },
  Modern2026: {
    mac: 'PBMAC1',
    certs: 'PBES2',
    key: 'PBES2',
    macIterations: 2048,
    encryptionIterations: 2048,
    saltLength: 16,
  },
};

const Oid = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  pbeWithSHAAnd3KeyTripleDESCBC: '1.2.840.113549.1.12.1.3',
  pbeWithSHAAnd40BitRC2CBC: '1.2.840.113549.1.12.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
  hmacWithSHA256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  /** Oracle's trusted-key-usage attribute: Java imports a certificate bag carrying it as a trustedCertEntry. */
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
} as const;

const HMAC_OIDS: Readonly<Record<HashName, string>> = {
  sha1: '1.2.840.113549.2.7',
  sha256: Oid.hmacWithSHA256,
  sha512: '1.2.840.113549.2.11',
};

// --- passwords and key derivation -------------------------------------------------------------------------

/** UCS-2, big-endian. Go refuses characters outside the BMP rather than writing UTF-16 surrogate pairs. */
function bmpString(text: string): Buffer {
  const out = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdfff) {
      throw new Error('pkcs12: string contains characters that cannot be encoded in UCS-2');
    }
    out.writeUInt16BE(unit, 2 * i);
  }
  return out;
}

/** The password as RFC 7292's own KDF takes it (appendix B.1): a BMPString with a two-byte NUL terminator. */
export function bmpPassword(password: string): Buffer {
  return Buffer.concat([bmpString(password), Buffer.alloc(2)]);
}

/** Input block sizes (v in RFC 7292 appendix B.2), in bytes. */
const HASH_BLOCK_BYTES: Readonly<Record<HashName, number>> = { sha1: 64, sha256: 64, sha512: 128 };

/** Copies of `data` filling v·⌈len/v⌉ bytes (the last copy truncated); empty stays empty. */
function repeatToBlocks(data: Buffer, v: number): Buffer {
  return data.length === 0 ? Buffer.alloc(0) : Buffer.alloc(v * Math.ceil(data.length / v), data);
}

/**
 * RFC 7292 appendix B.2: `size` pseudorandom bytes for key material (id 1), an IV (id 2) or a MAC key (id 3),
 * from a BMP password (see bmpPassword), a salt and an iteration count.
 */
export function pkcs12Kdf(
  hash: HashName,
  password: Buffer,
  salt: Buffer,
  iterations: number,
  id: 1 | 2 | 3,
  size: number,
): Buffer {
  const v = HASH_BLOCK_BYTES[hash];
  const diversifier = Buffer.alloc(v, id);
  const I = Buffer.concat([repeatToBlocks(salt, v), repeatToBlocks(password, v)]);
  const output: Buffer[] = [];
  for (let produced = 0; ;) {
    let A = createHash(hash).update(diversifier).update(I).digest();
    // One-shot hashing: these 2048-fold loops are most of a keystore's cost, and createHash's object per
    // round nearly doubles it.
    for (let r = 1; r < iterations; r++) A = digest(hash, A, 'buffer');
    output.push(A);
    produced += A.length;
    if (produced >= size) break;
    // I_j = (I_j + B + 1) mod 2^v for each v-byte block of I, where B is A repeated to v bytes.
    const B = Buffer.alloc(v, A);
    for (let block = 0; block < I.length; block += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[block + k] + B[k] + carry;
        I[block + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(output).subarray(0, size);
}

// --- encryption -------------------------------------------------------------------------------------------

function integer(value: number): Buffer {
  const bytes: number[] = [];
  for (let n = value; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return unsignedInteger(Buffer.from(bytes));
}

/**
 * An AlgorithmIdentifier. Without parameters it has no NULL either: Go leaves out an optional RawValue it
 * was not given (so hmacWithSHA256 and the MAC's sha1/sha256 go out as a bare OID, as in go-pkcs12's files).
 */
function algorithmIdentifier(algorithm: string, parameters?: Buffer): Buffer {
  return parameters ? sequence(oid(algorithm), parameters) : sequence(oid(algorithm));
}

function cbcEncrypt(cipher: string, key: Buffer, iv: Buffer, plaintext: Buffer): Buffer {
  const encryptor = createCipheriv(cipher, key, iv);
  return Buffer.concat([encryptor.update(plaintext), encryptor.final()]);
}

interface Encrypted {
  algorithm: Buffer;
  ciphertext: Buffer;
}

/**
 * Password-based encryption. The PKCS#12 PBEs (RFC 7292 appendix C) take the BMP password through the
 * appendix B KDF; PBES2 (RFC 8018) takes it as UTF-8, as go-pkcs12, OpenSSL and Windows do.
 */
function pbeEncrypt(pbe: Pbe, params: EncoderParams, password: string, plaintext: Buffer): Encrypted {
  const iterations = params.encryptionIterations;
  const salt = randomBytes(params.saltLength);
  if (pbe === 'PBES2') {
    const iv = randomBytes(16);
    const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
    const kdf = algorithmIdentifier(
      Oid.pbkdf2,
      sequence(octetString(salt), integer(iterations), algorithmIdentifier(Oid.hmacWithSHA256)),
    );
    const scheme = algorithmIdentifier(Oid.aes256Cbc, octetString(iv));
    return {
      algorithm: algorithmIdentifier(Oid.pbes2, sequence(kdf, scheme)),
      ciphertext: cbcEncrypt('aes-256-cbc', key, iv, plaintext),
    };
  }
  const bmp = bmpPassword(password);
  const iv = pkcs12Kdf('sha1', bmp, salt, iterations, 2, 8);
  const pbeParams = sequence(octetString(salt), integer(iterations));
  if (pbe === '3DES') {
    return {
      algorithm: algorithmIdentifier(Oid.pbeWithSHAAnd3KeyTripleDESCBC, pbeParams),
      ciphertext: cbcEncrypt('des-ede3-cbc', pkcs12Kdf('sha1', bmp, salt, iterations, 1, 24), iv, plaintext),
    };
  }
  return {
    algorithm: algorithmIdentifier(Oid.pbeWithSHAAnd40BitRC2CBC, pbeParams),
    ciphertext: rc2CbcEncrypt(pkcs12Kdf('sha1', bmp, salt, iterations, 1, 5), 40, iv, plaintext),
  };
}

// --- MACs -------------------------------------------------------------------------------------------------

/** The classic MacData MAC (RFC 7292 §5, appendix B): HMAC keyed by the appendix B KDF with id 3. */
export function pkcs12Mac(
  hash: HashName,
  password: string,
  salt: Buffer,
  iterations: number,
  message: Buffer,
): Buffer {
  const keyLength = createHash(hash).digest().length;
  const key = pkcs12Kdf(hash, bmpPassword(password), salt, iterations, 3, keyLength);
  return createHmac(hash, key).update(message).digest();
}

/** PBMAC1 parameters (RFC 8018 §7.1 with PBKDF2, as RFC 9579 profiles them for PKCS#12). */
export interface Pbmac1Params {
  salt: Buffer;
  iterations: number;
  keyLength: number;
  /** PBKDF2's PRF, HMAC with this hash. */
  prf: HashName;
  /** The MAC, HMAC with this hash. */
  mac: HashName;
}

/** PBMAC1 (RFC 9579): HMAC keyed by PBKDF2 of the UTF-8 password, not the BMP one (RFC 9579 §5, erratum 7974). */
export function pbmac1Mac(params: Pbmac1Params, password: string, message: Buffer): Buffer {
  const key = pbkdf2Sync(
    Buffer.from(password, 'utf8'),
    params.salt,
    params.iterations,
    params.keyLength,
    params.prf,
  );
  return createHmac(params.mac, key).update(message).digest();
}

function pbmac1AlgorithmIdentifier(params: Pbmac1Params): Buffer {
  const kdfParams = sequence(
    octetString(params.salt),
    integer(params.iterations),
    integer(params.keyLength),
    algorithmIdentifier(HMAC_OIDS[params.prf]),
  );
  return algorithmIdentifier(
    Oid.pbmac1,
    sequence(algorithmIdentifier(Oid.pbkdf2, kdfParams), algorithmIdentifier(HMAC_OIDS[params.mac])),
  );
}

/** MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }. */
function macData(params: EncoderParams, password: string, authSafe: Buffer): Buffer {
  const salt = randomBytes(params.saltLength);
  if (params.mac === 'PBMAC1') {
    const pbmac1: Pbmac1Params = {
      salt,
      iterations: params.macIterations,
      keyLength: 32,
      prf: 'sha256',
      mac: 'sha256',
    };
    const digestInfo = sequence(
      pbmac1AlgorithmIdentifier(pbmac1),
      octetString(pbmac1Mac(pbmac1, password, authSafe)),
    );
    // RFC 9579 has readers ignore macSalt and iterations under PBMAC1; go-pkcs12 leaves them at Go's zero
    // values, an empty OCTET STRING and 0 (not the DEFAULT 1, so DER keeps it).
    return sequence(digestInfo, octetString(Buffer.alloc(0)), integer(0));
  }
  const digest = pkcs12Mac(params.mac, password, salt, params.macIterations, authSafe);
  return sequence(
    sequence(algorithmIdentifier(Oid[params.mac]), octetString(digest)),
    octetString(salt),
    // DER omits a value equal to its DEFAULT: the legacy profiles' single iteration is not written.
    ...(params.macIterations === 1 ? [] : [integer(params.macIterations)]),
  );
}

// --- bags and safes ---------------------------------------------------------------------------------------

function explicit0(content: Buffer): Buffer {
  return tlv(contextTag(0, true), content);
}

function attribute(type: string, value: Buffer): Buffer {
  return sequence(oid(type), tlv(Tag.SET, value));
}

/** A SafeBag; `attributes` undefined leaves the SET out, an empty array writes an empty SET. */
function safeBag(type: string, value: Buffer, attributes: Buffer[] | undefined): Buffer {
  return sequence(oid(type), explicit0(value), ...(attributes ? [setOf(...attributes)] : []));
}

function certBag(der: Buffer, attributes: Buffer[]): Buffer {
  return safeBag(Oid.certBag, sequence(oid(Oid.x509Certificate), explicit0(octetString(der))), attributes);
}

function contentInfo(type: string, content: Buffer): Buffer {
  return sequence(oid(type), explicit0(content));
}

function plainSafe(bags: Buffer[]): Buffer {
  return contentInfo(Oid.data, octetString(sequence(...bags)));
}

/** EncryptedData (version 0) whose EncryptedContentInfo carries the ciphertext as [0] IMPLICIT. */
function encryptedSafe(params: EncoderParams, password: string, bags: Buffer[]): Buffer {
  const { algorithm, ciphertext } = pbeEncrypt(params.certs, params, password, sequence(...bags));
  const encryptedContentInfo = sequence(oid(Oid.data), algorithm, tlv(contextTag(0, false), ciphertext));
  return contentInfo(Oid.encryptedData, sequence(integer(0), encryptedContentInfo));
}

function pfx(params: EncoderParams, password: string, safes: Buffer[]): Buffer {
  const authSafe = sequence(...safes);
  return sequence(
    integer(3),
    contentInfo(Oid.data, octetString(authSafe)),
    macData(params, password, authSafe),
  );
}

function profileParams(profile: Pkcs12Profile): EncoderParams {
  const params = PROFILES[profile];
  if (!params) throw new Error(`pkcs12: unknown profile ${JSON.stringify(profile)}`);
  return params;
}

/** keystore.p12: the private key, the leaf certificate, then chain[1..] followed by cas as extra certificates. */
export function encodePkcs12Keystore(
  profile: Pkcs12Profile,
  password: string,
  key: KeyObject,
  chain: Buffer[] /* DER certs, leaf first */,
  cas: Buffer[] /* DER */,
): Buffer {
  const params = profileParams(profile);
  const [leaf, ...intermediates] = chain;
  if (!leaf) throw new Error('pkcs12: no certificate to put in the keystore');
  // The key and its certificate are paired by localKeyId, the SHA-1 of the certificate; other certificates
  // get an empty attribute SET (go-pkcs12 passes an empty, non-nil slice, which Go writes rather than omits).
  const localKeyId = attribute(Oid.localKeyId, octetString(createHash('sha1').update(leaf).digest()));
  const certBags = [
    certBag(leaf, [localKeyId]),
    ...[...intermediates, ...cas].map((der) => certBag(der, [])),
  ];
  const pkcs8 = key.export({ format: 'der', type: 'pkcs8' });
  const shrouded = pbeEncrypt(params.key, params, password, pkcs8);
  const keyBag = safeBag(
    Oid.pkcs8ShroudedKeyBag,
    sequence(shrouded.algorithm, octetString(shrouded.ciphertext)),
    [localKeyId],
  );
  return pfx(params, password, [encryptedSafe(params, password, certBags), plainSafe([keyBag])]);
}

/** truststore.p12: the CA certificates as trusted certificate entries (Java's trusted-key-usage attribute). */
export function encodePkcs12Truststore(profile: Pkcs12Profile, password: string, cas: Buffer[]): Buffer {
  const params = profileParams(profile);
  // Trusted for any purpose; Java shows the friendly name (the subject, as Go prints it) as the alias.
  const trusted = attribute(Oid.javaTrustedKeyUsage, oid(Oid.anyExtendedKeyUsage));
  const bags = cas.map((der) => {
    const alias = pkixNameString(decodeCertificateDer(der).subject);
    return certBag(der, [trusted, attribute(Oid.friendlyName, tlv(Tag.BMP_STRING, bmpString(alias)))]);
  });
  return pfx(params, password, [encryptedSafe(params, password, bags)]);
}

// --- Go's pkix.Name.String --------------------------------------------------------------------------------

/** crypto/x509/pkix's attributeTypeNames: the only types Go prints by name. */
const GO_TYPE_NAMES: Readonly<Record<string, string>> = {
  '2.5.4.6': 'C',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.3': 'CN',
  '2.5.4.5': 'SERIALNUMBER',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.17': 'POSTALCODE',
};

/** encoding/asn1's default string type: PrintableString when the alphabet allows, else UTF8String. */
function goMarshalString(value: string): Buffer {
  return /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value)
    ? tlv(Tag.PRINTABLE_STRING, Buffer.from(value, 'latin1'))
    : tlv(Tag.UTF8_STRING, Buffer.from(value, 'utf8'));
}

function goEscape(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    const escape =
      ',+"\\<>;'.includes(char) ||
      (char === ' ' && (i === 0 || i === value.length - 1)) ||
      (char === '#' && i === 0);
    out += escape ? `\\${char}` : char;
  }
  return out;
}

function goFormatAttribute(atv: AttributeTypeAndValue): string {
  const name = GO_TYPE_NAMES[atv.type];
  if (name) return `${name}=${goEscape(atv.value)}`;
  // Go re-marshals the parsed string and prints its DER in hex; decodeRdnSequence already gives a value of
  // another type (which Go's parser would have refused) as `#hex`.
  const isString = atv.tag === undefined || STRING_TAGS.has(atv.tag);
  return `${atv.type}=${isString ? `#${goMarshalString(atv.value).toString('hex')}` : atv.value}`;
}

/**
 * pkix.Name.String() of a parsed certificate name, which go-pkcs12 uses as a truststore entry's friendly
 * name: the attributes Go keeps in named fields, rebuilt in ToRDNSequence's order (one RDN per type, so all
 * OUs share one), then the other attributes, and the whole sequence printed most specific first.
 */
export function pkixNameString(nameDer: Buffer): string {
  const rdns = decodeRdnSequence(nameDer);
  const name = distinguishedName(rdns);
  const sequenceOut: AttributeTypeAndValue[][] = [];
  for (const atv of rdns.flat()) if (!(atv.type in GO_TYPE_NAMES)) sequenceOut.push([atv]);
  const fields: [string, string[]][] = [
    ['2.5.4.6', name.countries],
    ['2.5.4.10', name.organizations],
    ['2.5.4.11', name.organizationalUnits],
    ['2.5.4.7', name.localities],
    ['2.5.4.8', name.provinces],
    ['2.5.4.9', name.streetAddresses],
    ['2.5.4.17', name.postalCodes],
    ['2.5.4.5', name.serialNumber ? [name.serialNumber] : []],
    ['2.5.4.3', name.commonName ? [name.commonName] : []],
  ];
  for (const [type, values] of fields) {
    if (values.length) sequenceOut.push(values.map((value) => ({ type, value })));
  }
  return sequenceOut
    .reverse()
    .map((rdn) => rdn.map(goFormatAttribute).join('+'))
    .join(',');
}
