/**
 * cert-manager's 23 usage strings ↔ X.509 KeyUsage bits and ExtendedKeyUsage OIDs (pkg/api/util/usages.go,
 * pkg/util/pki/keyusage.go), and the two extensions' DER values as Go writes them.
 */

import { bitString, bitStringBytes, oid, readChildren, readOid, readOne, sequence, Tag } from './der.ts';

/**
 * KeyUsage bit numbers (RFC 5280 §4.2.1.3; also Go's x509.KeyUsage bit positions). "signing" and "digital
 * signature" are the same bit.
 */
const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

/** ExtendedKeyUsage OIDs; "s/mime" and "email protection" are the same OID. */
const EXT_KEY_USAGE_OIDS: Readonly<Record<string, string>> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** The EKU OIDs Go's x509 knows by name; others are "unknown" EKUs, carried but not named. */
const KNOWN_EKU_OIDS = new Set([
  ...Object.values(EXT_KEY_USAGE_OIDS),
  '1.3.6.1.4.1.311.2.1.22', // Microsoft commercial code signing
  '1.3.6.1.4.1.311.61.1.1', // Microsoft kernel code signing
]);

export const DEFAULT_USAGES: readonly string[] = ['digital signature', 'key encipherment'];

export interface KeyUsages {
  /** KeyUsage bit mask (bit n = RFC 5280 bit n); 0 means no KeyUsage extension. */
  keyUsage: number;
  /** ExtendedKeyUsage OIDs in the order the usages were given (duplicates kept, as Go keeps them). */
  extKeyUsages: string[];
}

/**
 * KeyUsagesForCertificateOrCertificateRequest: an empty list means the default usages, and isCA adds
 * "cert sign". Throws for strings cert-manager does not know.
 */
export function keyUsagesFor(usages: readonly string[] | undefined, isCA: boolean | undefined): KeyUsages {
  let keyUsage = isCA ? 1 << KEY_USAGE_BITS['cert sign'] : 0;
  const extKeyUsages: string[] = [];
  const unknown: string[] = [];
  for (const usage of usages?.length ? usages : DEFAULT_USAGES) {
    if (Object.hasOwn(KEY_USAGE_BITS, usage)) keyUsage |= 1 << KEY_USAGE_BITS[usage];
    else if (Object.hasOwn(EXT_KEY_USAGE_OIDS, usage)) extKeyUsages.push(EXT_KEY_USAGE_OIDS[usage]);
    else unknown.push(usage);
  }
  if (unknown.length) throw new Error(`unknown key usages: [${unknown.join(' ')}]`);
  return { keyUsage, extKeyUsages };
}

function reverseBits(byte: number): number {
  let out = 0;
  for (let i = 0; i < 8; i++) out |= ((byte >> i) & 1) << (7 - i);
  return out;
}

/** The KeyUsage extension value: a BIT STRING trimmed to its last set bit (Go's MarshalKeyUsage). */
export function encodeKeyUsage(mask: number): Buffer {
  const bytes = [reverseBits(mask & 0xff), reverseBits((mask >> 8) & 0xff)];
  const used = bytes[1] !== 0 ? bytes.slice(0, 2) : bytes.slice(0, 1);
  const last = used[used.length - 1];
  let unusedBits = 0;
  if (last !== 0) while (!((last >> unusedBits) & 1)) unusedBits++;
  return bitString(Buffer.from(used), last === 0 ? 0 : unusedBits);
}

/** KeyUsage bits 0–8 from the extension value (UnmarshalKeyUsage). */
export function decodeKeyUsage(value: Buffer): number {
  const bytes = bitStringBytes(readOne(value, Tag.BIT_STRING).value);
  let mask = 0;
  for (let bit = 0; bit < 9; bit++) {
    const byte = bytes[bit >> 3] ?? 0;
    if ((byte >> (7 - (bit & 7))) & 1) mask |= 1 << bit;
  }
  return mask;
}

/** The ExtendedKeyUsage extension value: SEQUENCE OF OID. */
export function encodeExtKeyUsage(oids: readonly string[]): Buffer {
  return sequence(...oids.map(oid));
}

export function decodeExtKeyUsage(value: Buffer): string[] {
  return readChildren(readOne(value, Tag.SEQUENCE).value).map(readOid);
}

/** Only the EKU OIDs Go parses into ExtKeyUsage values; the rest are UnknownExtKeyUsage. */
export function isKnownExtKeyUsage(eku: string): boolean {
  return KNOWN_EKU_OIDS.has(eku);
}

/** cert-manager names for KeyUsage bits, lowest bit first (KeyUsageStrings). */
export function keyUsageNames(mask: number): string[] {
  const names: string[] = [];
  for (let bit = 0; bit < 9; bit++) {
    if (!(mask & (1 << bit))) continue;
    // "digital signature" rather than "signing": cert-manager parses bit 0 to the former.
    names.push(
      Object.keys(KEY_USAGE_BITS).find((name) => name !== 'signing' && KEY_USAGE_BITS[name] === bit)!,
    );
  }
  return names;
}

/** cert-manager names for EKU OIDs ("email protection" rather than "s/mime"); unknown OIDs stay dotted. */
export function extKeyUsageNames(oids: readonly string[]): string[] {
  return oids.map(
    (eku) =>
      Object.keys(EXT_KEY_USAGE_OIDS).find((name) => name !== 's/mime' && EXT_KEY_USAGE_OIDS[name] === eku) ??
      eku,
  );
}

/**
 * The usages as a Kubernetes CertificateSigningRequest lists them (apiutil.KubeKeyUsageStrings and
 * KubeExtKeyUsageStrings of keyUsagesFor's result): one name per KeyUsage bit, in bit order, then one per
 * ExtendedKeyUsage, in the order given; aliases ("signing", "s/mime") come out under their kube names.
 */
export function kubeUsageStrings(usages: readonly string[] | undefined, isCA: boolean | undefined): string[] {
  const { keyUsage, extKeyUsages } = keyUsagesFor(usages, isCA);
  const names: string[] = [];
  for (const [name, bit] of Object.entries(KEY_USAGE_BITS)) {
    if (name !== 'signing' && keyUsage & (1 << bit)) names[bit] = name;
  }
  const extNames = new Map<string, string>();
  for (const [name, id] of Object.entries(EXT_KEY_USAGE_OIDS)) if (!extNames.has(id)) extNames.set(id, name);
  return [...names.filter(Boolean), ...extKeyUsages.map((id) => extNames.get(id)!)];
}
