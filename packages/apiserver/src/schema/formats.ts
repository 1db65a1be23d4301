/**
 * String formats apiextensions validates (validation/formats.go), by name with dashes removed as the
 * format registry normalizes them. isbn and creditcard are supported upstream but not checked here.
 */

import { isIPv6 as isIPv6Address } from 'node:net';
import { isBase64 } from '../registry/validation.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const EMAIL = /^(?:[^\s@<>]+@[^\s@<>]+|[^<>]*<[^\s@<>]+@[^\s@<>]+>)$/;
const IPV4_SLOPPY = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const MAC =
  /^(?:[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){7}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){19}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){2}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){3}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){9})$/i;
const GO_DURATION = /^[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;
const LOOSE_DURATION = /(\d+)\s*([A-Za-zµ]+)/g;
const DURATION_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];
const K8S_SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const K8S_LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGB_COLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(Number(match[1]), month);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * As `new Date(Date.UTC(year, month, 0)).getUTCDate()`, which this replaces on every date validated:
 * proleptic Gregorian leap years, with years 0 to 99 read as 1900 to 1999 as Date.UTC reads them.
 */
function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1];
  const y = year <= 99 ? 1900 + year : year;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/**
 * The date up to the first `t`, the time (lower-cased) up to the next, in either case; anything after a
 * second `t` is ignored. As splitting the lower-cased text on `t` would read it, without the copies.
 */
function isDateTime(text: string): boolean {
  if (text.length < 4) return false;
  const t = dateTimeSeparator(text, 0);
  if (t < 0 || !isDate(text.slice(0, t))) return false;
  const end = dateTimeSeparator(text, t + 1);
  const match = TIME_OF_DAY.exec(text.slice(t + 1, end < 0 ? text.length : end).toLowerCase());
  return match !== null && match[1] <= '23' && match[2] <= '59' && match[3] <= '59';
}

function dateTimeSeparator(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x74 || c === 0x54) return i;
  }
  return -1;
}

function isIPv4(text: string): boolean {
  const match = IPV4_SLOPPY.exec(text);
  if (match) return match.slice(1).every((part) => Number(part) <= 255);
  // Go's ParseIP also reads IPv4-mapped IPv6 addresses; the format only asks for a dot.
  return isIPv6(text) && text.includes('.');
}

function isIPv6(text: string): boolean {
  // Go's ParseIP takes no zone suffix.
  return !text.includes('%') && isIPv6Address(text);
}

function isCidr(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const address = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  if (IPV4_SLOPPY.test(address)) return isIPv4(address) && Number(prefix) <= 32;
  return isIPv6(address) && Number(prefix) <= 128;
}

function isHostname(text: string): boolean {
  if (!HOSTNAME.test(text) || Buffer.byteLength(text) > 255) return false;
  return text.split('.').every((label) => Buffer.byteLength(label) <= 63);
}

function isUri(text: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path.
  if (text.startsWith('/')) return !/\s/.test(text);
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text) && URL.canParse(text);
}

function isDuration(text: string): boolean {
  if (GO_DURATION.test(text)) return true;
  // kube-openapi falls back to a lenient "<number> <unit>" reading (e.g. "3 days").
  for (const match of text.matchAll(LOOSE_DURATION)) {
    const unit = match[2].toLowerCase().trim();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((variant, i) => unit === variant || (i === last && unit.startsWith(variant))))
        return true;
    }
  }
  return false;
}

const stringFormats: Readonly<Record<string, (text: string) => boolean>> = {
  bsonobjectid: (text) => /^[0-9a-fA-F]{24}$/.test(text),
  uri: isUri,
  email: (text) => EMAIL.test(text),
  hostname: isHostname,
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCidr,
  mac: (text) => MAC.test(text),
  uuid: (text) => UUID.test(text),
  uuid3: (text) => UUID3.test(text),
  uuid4: (text) => UUID4.test(text),
  uuid5: (text) => UUID5.test(text),
  isbn: () => true,
  isbn10: () => true,
  isbn13: () => true,
  creditcard: () => true,
  ssn: (text) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(text),
  hexcolor: (text) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(text),
  rgbcolor: (text) => RGB_COLOR.test(text),
  byte: (text) => text !== '' && isBase64(text),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (text) => text.length <= 63 && K8S_SHORT_NAME.test(text),
  k8slongname: (text) => text.length <= 253 && K8S_LONG_NAME.test(text),
};

/** Validators by format as schemas spell it (asked for twice per formatted string, on every write). */
const formatValidators = new Map<string, ((text: string) => boolean) | undefined>();

export function stringFormatValidator(format: string): ((text: string) => boolean) | undefined {
  if (formatValidators.has(format)) return formatValidators.get(format);
  const normalized = format.replaceAll('-', '');
  const validator = Object.hasOwn(stringFormats, normalized) ? stringFormats[normalized] : undefined;
  formatValidators.set(format, validator);
  return validator;
}
