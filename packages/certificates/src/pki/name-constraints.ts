/**
 * The X.509 Name Constraints extension (RFC 5280 §4.2.1.10) for CA certificates, encoded as cert-manager's
 * MarshalNameConstraints encodes it into the CSR and Go's crypto/x509 into the certificate: permitted
 * subtrees [0] then excluded [1], each listing DNS domains, IP ranges (address and mask), email addresses,
 * then URI domains, with neither minimum nor maximum; critical as the Certificate's `critical` says.
 */

import { contextTag, expectTag, readChildren, readOne, sequence, Tag, tlv } from './der.ts';
import { ExtensionOid, type Extension } from './extensions.ts';
import { formatIpAddress, parseIpAddress } from './ip.ts';
import { GeneralNameTag, ia5GeneralName } from './sans.ts';

/** One side of the constraints, as the Certificate spec writes it (ipRanges are CIDRs). */
export interface NameConstraintSubtrees {
  dnsDomains?: readonly string[];
  ipRanges?: readonly string[];
  emailAddresses?: readonly string[];
  uriDomains?: readonly string[];
}

/** `spec.nameConstraints`. */
export interface NameConstraintsSpec {
  critical?: boolean;
  permitted?: NameConstraintSubtrees;
  excluded?: NameConstraintSubtrees;
}

/** Decoded constraints; ipRanges in canonical CIDR form (the masked network, Go's IPNet.String). */
export interface DecodedNameConstraints {
  critical: boolean;
  permitted: Required<NameConstraintSubtrees>;
  excluded: Required<NameConstraintSubtrees>;
}

/** net.ParseCIDR: the network address (host bits cleared) followed by its mask, 8 or 32 bytes. */
export function cidrAddressAndMask(cidr: string): Buffer {
  const slash = cidr.indexOf('/');
  const bitsText = slash < 0 ? '' : cidr.slice(slash + 1);
  let address: Buffer;
  try {
    address = parseIpAddress(slash < 0 ? cidr : cidr.slice(0, slash));
  } catch {
    throw new Error(`invalid CIDR address: ${cidr}`);
  }
  const bits = Number(bitsText);
  if (!/^[0-9]{1,3}$/.test(bitsText) || bits > address.length * 8) {
    throw new Error(`invalid CIDR address: ${cidr}`);
  }
  const mask = Buffer.alloc(address.length);
  for (let i = 0; i < mask.length; i++) mask[i] = 0xff << (8 - Math.min(8, Math.max(0, bits - i * 8)));
  const network = Buffer.from(address.map((byte, i) => byte & mask[i]));
  return Buffer.concat([network, mask]);
}

function prefixLength(mask: Buffer): number | undefined {
  let bits = 0;
  let seenZero = false;
  for (const byte of mask) {
    if (seenZero) {
      if (byte !== 0) return undefined;
      continue;
    }
    const ones = Math.clz32(~(byte << 24));
    if (((0xff << (8 - ones)) & 0xff) !== byte) return undefined;
    bits += ones;
    if (ones < 8) seenZero = true;
  }
  return bits;
}

/** The canonical CIDR text of an address-and-mask: `10.0.0.0/8`, `2001:db8::/32`. */
function formatIpRange(value: Buffer): string {
  if (value.length !== 8 && value.length !== 32) {
    throw new Error(`x509: IP constraint contained value of length ${value.length}`);
  }
  const half = value.length / 2;
  const mask = value.subarray(half);
  const bits = prefixLength(mask);
  if (bits === undefined)
    throw new Error(`x509: IP constraint contained invalid mask ${mask.toString('hex')}`);
  // A 16-byte IPv4-mapped network keeps its IPv6 prefix length, so print it as IPv6 would read it back.
  const address = value.subarray(0, half);
  const text = half === 16 ? formatIpv6Only(address) : formatIpAddress(address);
  return `${text}/${bits}`;
}

/** formatIpAddress prints IPv4-mapped addresses as IPv4; inside a /n of 128 bits that would misread. */
function formatIpv6Only(address: Buffer): string {
  const printed = formatIpAddress(address);
  return printed.includes(':') ? printed : `::ffff:${printed}`;
}

function encodeSubtrees(subtrees: NameConstraintSubtrees | undefined): Buffer[] {
  if (!subtrees) return [];
  // GeneralSubtree ::= SEQUENCE { base GeneralName, minimum [0] DEFAULT 0, maximum [1] OPTIONAL }
  return [
    ...(subtrees.dnsDomains ?? []).map((name) => sequence(ia5GeneralName(GeneralNameTag.dNSName, name))),
    ...(subtrees.ipRanges ?? []).map((cidr) =>
      sequence(tlv(contextTag(GeneralNameTag.iPAddress, false), cidrAddressAndMask(cidr))),
    ),
    ...(subtrees.emailAddresses ?? []).map((email) =>
      sequence(ia5GeneralName(GeneralNameTag.rfc822Name, email)),
    ),
    ...(subtrees.uriDomains ?? []).map((domain) =>
      sequence(ia5GeneralName(GeneralNameTag.uniformResourceIdentifier, domain)),
    ),
  ];
}

/**
 * The extension for `spec.nameConstraints`, or undefined when it names nothing (cert-manager then adds
 * none: RFC 5280 forbids an empty one). Throws on a CIDR that does not parse or a non-ASCII name.
 */
export function nameConstraintsExtension(spec: NameConstraintsSpec | undefined): Extension | undefined {
  if (!spec) return undefined;
  const permitted = encodeSubtrees(spec.permitted);
  const excluded = encodeSubtrees(spec.excluded);
  if (permitted.length === 0 && excluded.length === 0) return undefined;
  const value = sequence(
    ...(permitted.length ? [tlv(contextTag(0, true), ...permitted)] : []),
    ...(excluded.length ? [tlv(contextTag(1, true), ...excluded)] : []),
  );
  return { oid: ExtensionOid.nameConstraints, critical: spec.critical === true, value };
}

function emptySubtrees(): Required<NameConstraintSubtrees> {
  return { dnsDomains: [], ipRanges: [], emailAddresses: [], uriDomains: [] };
}

function decodeSubtrees(value: Buffer): Required<NameConstraintSubtrees> {
  const out = {
    dnsDomains: [] as string[],
    ipRanges: [] as string[],
    emailAddresses: [] as string[],
    uriDomains: [] as string[],
  };
  for (const subtree of readChildren(value)) {
    // minimum and maximum (RFC 5280: MUST be absent in the Internet profile) are skipped, as Go skips them.
    const [base] = readChildren(expectTag(subtree, Tag.SEQUENCE).value);
    if (!base) throw new Error('x509: invalid NameConstraints extension');
    const text = () => {
      const s = base.value.toString('latin1');
      if (!/^[\x00-\x7f]*$/.test(s)) throw new Error('x509: invalid constraint value: not an IA5String');
      return s;
    };
    switch (base.tag) {
      case contextTag(GeneralNameTag.dNSName, false):
        out.dnsDomains.push(text());
        break;
      case contextTag(GeneralNameTag.iPAddress, false):
        out.ipRanges.push(formatIpRange(base.value));
        break;
      case contextTag(GeneralNameTag.rfc822Name, false):
        out.emailAddresses.push(text());
        break;
      case contextTag(GeneralNameTag.uniformResourceIdentifier, false):
        out.uriDomains.push(text());
        break;
      default:
        throw new Error(`x509: unsupported NameConstraints tag: 0x${base.tag.toString(16)}`);
    }
  }
  return out;
}

/** Reads a Name Constraints extension as Go's parser does; throws on what Go would refuse. */
export function decodeNameConstraints(extension: Extension): DecodedNameConstraints {
  const parts = readChildren(readOne(extension.value, Tag.SEQUENCE).value);
  let index = 0;
  const permitted = parts[index]?.tag === contextTag(0, true) ? parts[index++] : undefined;
  const excluded = parts[index]?.tag === contextTag(1, true) ? parts[index++] : undefined;
  if (index !== parts.length) throw new Error('x509: invalid NameConstraints extension');
  if (!permitted?.value.length && !excluded?.value.length) {
    throw new Error('x509: empty name constraints extension');
  }
  return {
    critical: extension.critical,
    permitted: permitted ? decodeSubtrees(permitted.value) : emptySubtrees(),
    excluded: excluded ? decodeSubtrees(excluded.value) : emptySubtrees(),
  };
}

/** Go's CreateCertificate re-encodes the constraints it parsed from the CSR: the same bytes, or an error. */
export function reencodeNameConstraints(extension: Extension): Extension {
  const decoded = decodeNameConstraints(extension);
  return nameConstraintsExtension(decoded)!;
}

/** `spec` as decodeNameConstraints would read back its encoding (CIDRs canonical), for comparisons. */
export function canonicalNameConstraints(
  spec: NameConstraintsSpec | undefined,
): DecodedNameConstraints | undefined {
  const extension = nameConstraintsExtension(spec);
  return extension && decodeNameConstraints(extension);
}
