/**
 * The SubjectAltName extension value (RFC 5280 §4.2.1.6) as cert-manager's MarshalSANs writes it and its
 * UnmarshalSANs reads it, including UTF8String otherNames such as Microsoft's UPN.
 */

import {
  contextTag,
  expectTag,
  isValidOid,
  oid,
  readChildren,
  readOid,
  readOne,
  sequenceOf,
  Tag,
  tlv,
} from './der.ts';
import { formatIpAddress, parseIpAddress, toIPv4 } from './ip.ts';

export const UPN_OID = '1.3.6.1.4.1.311.20.2.3';

/** `spec.otherNames[]`: fields are optional in the API, and required here. */
export interface OtherName {
  oid?: string;
  utf8Value?: string;
}

export interface SubjectAltNames {
  dnsNames: string[];
  emailAddresses: string[];
  /** As net.IP.String prints them. */
  ipAddresses: string[];
  uris: string[];
  /** UTF8String otherNames; otherNames of other value types are skipped. */
  otherNames: { oid: string; utf8Value: string }[];
}

export type SubjectAltNamesInput = Partial<{
  dnsNames: readonly string[];
  emailAddresses: readonly string[];
  ipAddresses: readonly string[];
  uris: readonly string[];
  otherNames: readonly OtherName[];
}>;

/** The context tags of the GeneralName choices certkit writes (RFC 5280 §4.2.1.6), here and in name constraints. */
export const GeneralNameTag = {
  otherName: 0,
  rfc822Name: 1,
  dNSName: 2,
  uniformResourceIdentifier: 6,
  iPAddress: 7,
};

/** A GeneralName whose value is an IA5String (DNS name, email, URI); Go refuses any non-ASCII character. */
export function ia5GeneralName(tagNumber: number, value: string): Buffer {
  if (!/^[\x00-\x7f]*$/.test(value))
    throw new Error(`x509: ${JSON.stringify(value)} cannot be encoded as an IA5String`);
  return tlv(contextTag(tagNumber, false), Buffer.from(value, 'latin1'));
}

function encodeOtherName(otherName: OtherName): Buffer {
  if (!otherName.oid || !isValidOid(otherName.oid)) {
    throw new Error(`otherName has an invalid oid ${JSON.stringify(otherName.oid ?? '')}`);
  }
  if (otherName.utf8Value === undefined || otherName.utf8Value === '') {
    throw new Error(`otherName ${otherName.oid} has no utf8Value`);
  }
  const value = tlv(Tag.UTF8_STRING, Buffer.from(otherName.utf8Value, 'utf8'));
  // OtherName ::= SEQUENCE { type-id OID, value [0] EXPLICIT ANY }, itself implicitly tagged [0].
  return tlv(contextTag(GeneralNameTag.otherName, true), oid(otherName.oid), tlv(contextTag(0, true), value));
}

/**
 * GeneralNames in Go's order: DNS names, emails, IPs (IPv4 and IPv4-mapped addresses as 4 bytes), URIs,
 * then otherNames. Undefined when there are no names at all.
 */
export function encodeSubjectAltNames(names: SubjectAltNamesInput): Buffer | undefined {
  const items = [
    ...(names.dnsNames ?? []).map((name) => ia5GeneralName(GeneralNameTag.dNSName, name)),
    ...(names.emailAddresses ?? []).map((email) => ia5GeneralName(GeneralNameTag.rfc822Name, email)),
    ...(names.ipAddresses ?? []).map((text) => {
      const bytes = parseIpAddress(text);
      return tlv(contextTag(GeneralNameTag.iPAddress, false), toIPv4(bytes) ?? bytes);
    }),
    ...(names.uris ?? []).map((uri) => ia5GeneralName(GeneralNameTag.uniformResourceIdentifier, uri)),
    ...(names.otherNames ?? []).map(encodeOtherName),
  ];
  return items.length ? sequenceOf(items) : undefined;
}

export function emptySubjectAltNames(): SubjectAltNames {
  return { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [], otherNames: [] };
}

export function decodeSubjectAltNames(value: Buffer): SubjectAltNames {
  const names = emptySubjectAltNames();
  for (const name of readChildren(readOne(value, Tag.SEQUENCE).value)) {
    switch (name.tag) {
      case contextTag(GeneralNameTag.dNSName, false):
        names.dnsNames.push(name.value.toString('latin1'));
        break;
      case contextTag(GeneralNameTag.rfc822Name, false):
        names.emailAddresses.push(name.value.toString('latin1'));
        break;
      case contextTag(GeneralNameTag.uniformResourceIdentifier, false):
        names.uris.push(name.value.toString('latin1'));
        break;
      case contextTag(GeneralNameTag.iPAddress, false):
        if (name.value.length !== 4 && name.value.length !== 16) {
          throw new Error(`x509: cannot parse IP address of length ${name.value.length}`);
        }
        names.ipAddresses.push(formatIpAddress(name.value));
        break;
      case contextTag(GeneralNameTag.otherName, true): {
        const [typeId, explicit] = readChildren(name.value);
        if (!typeId || !explicit) throw new Error('malformed DER: otherName');
        const inner = readOne(expectTag(explicit, contextTag(0, true)).value);
        if (inner.tag === Tag.UTF8_STRING) {
          names.otherNames.push({
            oid: readOid(typeId),
            utf8Value: new TextDecoder('utf-8', { fatal: true }).decode(inner.value),
          });
        }
        break;
      }
      default:
        // x400Address, directoryName, ediPartyName, registeredID: valid, but nothing cert-manager shows.
        break;
    }
  }
  return names;
}
