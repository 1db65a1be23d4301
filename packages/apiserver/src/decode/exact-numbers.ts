/**
 * Numbers in a request body that the server could not store as written (ADR 0403). Objects are plain JSON
 * values (ADR 0002), so a number is a float64: an integer token beyond ±(2^53 − 1) that no float64 equals
 * (9007199254740993) would be stored rounded, and one past float64's range (1e400) as null. kube-apiserver
 * keeps integers within int64 exactly; the server refuses the ones it cannot keep, with a 400 naming the
 * field, rather than lose their digits silently. Floats within range are taken as kube-apiserver takes
 * them (a float64 there too).
 *
 * Only a body with a number token of 16 or more digits, or a three-digit exponent, can hold such a number
 * (every integer below 10^15 is exact): that cheap test on the text (a third of a microsecond for a
 * Certificate's status update) keeps the exact check, a parse with a source-reading reviver (three to five
 * times JSON.parse), off the common path.
 */

import { visit, type Document, type Node } from 'yaml';
import { isObject, newStatusError, type StatusError } from '@certkit/apimachinery';

/**
 * Sixteen digits in a row, or a digit with a three-digit exponent: the start of a candidate. Text within
 * strings matches too (a UID's `5e123`), so a candidate counts only where a number token starts there.
 */
const CANDIDATE = /\d{16}|\d[eE][+-]?\d{3}/g;

/** JSON's (and YAML's decimal) integer syntax: a token Go's decoder reads as int64 when it fits. */
const INTEGER_TOKEN = /^[-+]?\d+$/;

/** The bound an integer is held to: ±(2^53 − 1), as its error message says. */
const MAX_EXACT = '9007199254740991';

/** Whether the body's text may hold a number that is not stored as written; false for nearly every body. */
export function mayHoldInexactNumber(text: string): boolean {
  CANDIDATE.lastIndex = 0;
  for (let match = CANDIDATE.exec(text); match !== null; match = CANDIDATE.exec(text)) {
    if (startsNumberToken(text, match.index)) return true;
  }
  return false;
}

/**
 * Whether the characters of a number around `at` start after what may precede a number token: the text's
 * start, whitespace (YAML's `key: 1`, `- 1`), or JSON's `:`, `,` and `[`. A letter or a quote before them
 * makes them part of a string or a name.
 */
function startsNumberToken(text: string, at: number): boolean {
  let start = at;
  while (start > 0 && isNumberChar(text.charCodeAt(start - 1))) start--;
  if (start === 0) return true;
  switch (text.charCodeAt(start - 1)) {
    case 0x3a: // :
    case 0x2c: // ,
    case 0x5b: // [
    case 0x20: // space
    case 0x09: // tab
    case 0x0a: // line feed
    case 0x0d: // carriage return
      return true;
    default:
      return false;
  }
}

/** Digits, sign, decimal point and exponent: what a number token is written with. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** Stands in the parsed value for a number that would not be stored as written, until its path is found. */
export class InexactNumber {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

/** The number token `source`, read as `value`, as a stand-in when it would not be stored as written. */
export function checkNumber(value: number, source: string | undefined): number | InexactNumber {
  if (Number.isSafeInteger(value) || source === undefined) return value;
  if (!Number.isFinite(value)) return new InexactNumber(source);
  // A float token (1.5e300) is a float64 in Go too, rounded and written back alike. An integer token is an
  // int64 there, written back digit for digit; past 2^53 a float64 is written back with other digits even
  // where it equals the token (2^60 as 1152921504606847000), which a Go client reads as another int64.
  return INTEGER_TOKEN.test(source) ? new InexactNumber(source) : value;
}

/** JSON.parse's reviver, given the token's text (Node 26). */
function reviver(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' ? checkNumber(value, context?.source) : value;
}

/**
 * JSON.parse of a body's text with a stand-in (InexactNumber) for each number it would not store as written;
 * throwIfInexact then refuses them with their paths.
 */
export function parseJsonMarkingInexact(text: string): unknown {
  return mayHoldInexactNumber(text) ? JSON.parse(text, reviver) : JSON.parse(text);
}

/** Puts a stand-in in place of each number scalar of a YAML document that would not be stored as written. */
export function markInexactYamlNumbers(doc: Node | Document): void {
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'number') node.value = checkNumber(node.value, node.source);
    },
  });
}

/**
 * JSON.parse of a request body's text, refusing (InexactNumberError) a number it would not store as written.
 * Throws JSON.parse's SyntaxError on malformed text.
 */
export function parseJsonExact(text: string): unknown {
  if (!mayHoldInexactNumber(text)) return JSON.parse(text);
  const value: unknown = JSON.parse(text, reviver);
  throwIfInexact(value);
  return value;
}

/** Thrown for a body with a number the server would not store as written; `status` is the 400 to send. */
export class InexactNumberError extends Error {
  readonly path: string;
  readonly source: string;
  constructor(path: string, source: string) {
    super(`${path === '' ? '<body>' : path}: Invalid value: ${source}: ${reasonFor(source)}`);
    this.path = path;
    this.source = source;
  }

  get status(): StatusError {
    return newStatusError(400, 'BadRequest', this.message, {
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${this.source}: ${reasonFor(this.source)}`,
          field: this.path,
        },
      ],
    });
  }
}

function reasonFor(source: string): string {
  return Number.isFinite(Number(source))
    ? `must be within ±(2^53 - 1) (${MAX_EXACT}) to be stored exactly`
    : 'must be within the range of a float64 (±1.7976931348623157e+308)';
}

/** Throws InexactNumberError for the first stand-in in document order, with its field path. */
export function throwIfInexact(root: unknown): void {
  const found = findInexact(root, '');
  if (found) throw new InexactNumberError(found.path, found.number.source);
}

function findInexact(value: unknown, path: string): { path: string; number: InexactNumber } | undefined {
  if (value instanceof InexactNumber) return { path, number: value };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInexact(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (isObject(value)) {
    for (const key in value) {
      const found = findInexact(value[key], path === '' ? key : `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}
