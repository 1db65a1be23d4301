/**
 * Go `time.Duration` text, as metav1.Duration puts it on the wire (`spec.duration: 2160h0m0s`).
 *
 * Nanoseconds are bigints: a year is 3.2e16 ns, past the 2^53 a number holds exactly, and the messages
 * cert-manager's webhook prints (`certificate duration 1h0m0s must be greater than renewBefore 2h0m0s`) must
 * come out digit for digit.
 */

export const NANOSECOND = 1n;
/** One microsecond, in nanoseconds. */
export const MICROSECOND = 1000n;
/** One millisecond, in nanoseconds. */
export const MILLISECOND = 1_000_000n;
/** One second, in nanoseconds. */
export const SECOND = 1_000_000_000n;
/** One minute, in nanoseconds. */
export const MINUTE = 60n * SECOND;
/** One hour, in nanoseconds. */
export const HOUR = 60n * MINUTE;

const UNITS: Record<string, bigint> = {
  ns: NANOSECOND,
  us: MICROSECOND,
  µs: MICROSECOND, // U+00B5 micro sign
  μs: MICROSECOND, // U+03BC Greek small letter mu
  ms: MILLISECOND,
  s: SECOND,
  m: MINUTE,
  h: HOUR,
};

const MAX_INT64 = (1n << 63n) - 1n;

/** Go's time.quote: the duration text in double quotes. */
function quote(text: string): string {
  return JSON.stringify(text);
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * Parses a duration as Go's time.ParseDuration: a sequence of decimal numbers with optional fraction
 * and a unit suffix (`300ms`, `-1.5h`, `2h45m`). Throws with Go's error text.
 */
export function parseGoDuration(text: string): bigint {
  const invalid = () => new Error(`time: invalid duration ${quote(text)}`);
  let s = text;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    const hasWhole = i > 0;
    let value = hasWhole ? BigInt(whole) : 0n;
    if (value > 1n << 63n) throw invalid();
    s = s.slice(i);
    let fraction = 0n;
    let scale = 1;
    let hasFraction = false;
    if (s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (isDigit(s[j])) {
        // Go stops accumulating (but keeps consuming) digits once the fraction would overflow.
        if (!overflow) {
          const next = fraction * 10n + BigInt(s[j]);
          if (next > 1n << 63n) overflow = true;
          else {
            fraction = next;
            scale *= 10;
          }
        }
        j++;
      }
      hasFraction = j > 0;
      s = s.slice(j);
    }
    if (!hasWhole && !hasFraction) throw invalid();
    let k = 0;
    while (k < s.length && s[k] !== '.' && !isDigit(s[k])) k++;
    if (k === 0) throw new Error(`time: missing unit in duration ${quote(text)}`);
    const unitText = s.slice(0, k);
    s = s.slice(k);
    const unit = UNITS[unitText];
    if (unit === undefined)
      throw new Error(`time: unknown unit ${quote(unitText)} in duration ${quote(text)}`);
    if (value > (1n << 63n) / unit) throw invalid();
    value *= unit;
    if (fraction > 0n) {
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (value > 1n << 63n) throw invalid();
    }
    total += value;
    if (total > 1n << 63n) throw invalid();
  }
  if (negative) return -total;
  if (total > MAX_INT64) throw invalid();
  return total;
}

/** Digits after the point without trailing zeros, as Go's fmtFrac; '' when the fraction is zero. */
function fraction(value: bigint, precision: number): { rest: bigint; text: string } {
  let digits = '';
  let printed = false;
  let v = value;
  for (let i = 0; i < precision; i++) {
    const digit = v % 10n;
    printed ||= digit !== 0n;
    if (printed) digits = `${digit}${digits}`;
    v /= 10n;
  }
  return { rest: v, text: printed ? `.${digits}` : '' };
}

/** Formats nanoseconds as Go's Duration.String: `72h3m0.5s`, `1.5ms`, `0s`. */
export function formatGoDuration(ns: bigint): string {
  const negative = ns < 0n;
  const u = negative ? -ns : ns;
  let text: string;
  if (u < SECOND) {
    if (u === 0n) return '0s';
    if (u < MICROSECOND) text = `${u}ns`;
    else if (u < MILLISECOND) {
      const f = fraction(u, 3);
      text = `${f.rest}${f.text}µs`;
    } else {
      const f = fraction(u, 6);
      text = `${f.rest}${f.text}ms`;
    }
  } else {
    const f = fraction(u, 9);
    const seconds = f.rest;
    text = `${seconds % 60n}${f.text}s`;
    const minutes = seconds / 60n;
    if (minutes > 0n) {
      text = `${minutes % 60n}m${text}`;
      const hours = minutes / 60n;
      if (hours > 0n) text = `${hours}h${text}`;
    }
  }
  return negative ? `-${text}` : text;
}

/** Milliseconds for timers and date arithmetic (sub-millisecond parts are dropped). */
export function toMilliseconds(ns: bigint): number {
  return Number(ns / MILLISECOND);
}

/** Nanoseconds from milliseconds (a timer's or `Date`'s unit); fractions of a millisecond are dropped. */
export function fromMilliseconds(ms: number): bigint {
  return BigInt(Math.trunc(ms)) * MILLISECOND;
}
