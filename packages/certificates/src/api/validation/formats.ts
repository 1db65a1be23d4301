/**
 * Value formats the webhook checks, each matching the Go function cert-manager calls: net.ParseIP,
 * net.ParseCIDR, mail.ParseAddress, apimachinery's name, label and annotation checks.
 */

import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { type FieldError, labelValueErrors, qualifiedNameErrors } from '@certkit/apimachinery';
import { invalid, tooLong } from './errors.ts';

/** net.ParseIP: dotted IPv4 (no leading zeros) or IPv6, without a zone. */
export function isIPAddress(value: string): boolean {
  return isIP(value) !== 0 && !value.includes('%');
}

/** net.ParseCIDR: an IP address and a prefix length within its family's bits. */
export function isCIDR(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const address = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  const family = isIPAddress(address) ? isIP(address) : 0;
  if (family === 0 || !/^[0-9]{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

// RFC 5322 atext, plus the UTF-8 Go's net/mail accepts since Go 1.17 (RFC 6532).
const ATEXT = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+$/u;

function isDotAtom(text: string): boolean {
  return text.split('.').every((atom) => ATEXT.test(atom));
}

function isQuotedString(text: string): boolean {
  return /^"(?:[^"\\\r\n]|\\.)*"$/u.test(text);
}

function isAddrSpec(text: string): boolean {
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return false;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  const localOk = isDotAtom(local) || isQuotedString(local);
  const domainOk = isDotAtom(domain) || /^\[[^[\]\\]*\]$/.test(domain);
  return localOk && domainOk;
}

/**
 * Why an emailAddresses entry is rejected, as cert-manager's validateEmailAddresses words it, or undefined.
 * Go's mail.ParseAddress also accepts `Name <a@b>`; cert-manager then refuses anything but the bare address.
 */
export function emailAddressError(value: string): string | undefined {
  if (isAddrSpec(value)) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return 'invalid email address: mail: no address';
  const angle = /^(.*)<([^<>]*)>$/su.exec(trimmed);
  if (isAddrSpec(trimmed) || (angle && isAddrSpec(angle[2].trim()))) {
    return 'invalid email address: make sure the supplied value only contains the email address itself';
  }
  if (!trimmed.includes('@')) {
    return isDotAtom(trimmed)
      ? "invalid email address: mail: missing '@' or angle-addr"
      : 'invalid email address: mail: no angle-addr';
  }
  const domain = trimmed.slice(trimmed.lastIndexOf('@') + 1);
  if (domain === '') return 'invalid email address: mail: no domain in addr-spec';
  return 'invalid email address: mail: invalid string';
}

/**
 * Why a `uris` entry is rejected, or undefined. cert-manager's webhook leaves URIs to url.Parse at CSR
 * time, which fails the issuance instead; we reject up front what url.Parse rejects, and relative
 * references, which RFC 5280 §4.2.1.6 forbids in a URI SAN.
 */
export function uriError(value: string): string | undefined {
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'invalid URI: net/url: invalid control character in URL';
  const badEscape = /%(?![0-9A-Fa-f]{2})/.exec(value);
  if (badEscape)
    return `invalid URI: invalid URL escape ${JSON.stringify(value.slice(badEscape.index, badEscape.index + 3))}`;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return 'invalid URI: must be an absolute URI with a scheme';
  if (/\s/.test(value) || !URL.canParse(value)) return 'invalid URI: not a valid URI';
  return undefined;
}

/** metav1validation.ValidateLabels. */
export function labelsErrors(labels: Record<string, string>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const message of qualifiedNameErrors(k)) errors.push(invalid(path, k, message));
    for (const message of labelValueErrors(String(v))) errors.push(invalid(path, v, message));
  }
  return errors;
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** apivalidation.ValidateAnnotations: qualified-name keys (case-insensitive) and 256 KiB in total. */
export function annotationsErrors(annotations: Record<string, string>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const message of qualifiedNameErrors(k.toLowerCase())) errors.push(invalid(path, k, message));
    total += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errors.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errors;
}

/** validateCABundleNotEmpty: at least one parseable certificate among the PEM blocks (x509.CertPool semantics). */
export function caBundleError(base64: string): string | undefined {
  const text = Buffer.from(base64, 'base64').toString('latin1');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
      return undefined;
    } catch {
      // AppendCertsFromPEM skips what it cannot parse.
    }
  }
  return "cert bundle didn't contain any valid certificates";
}
