/**
 * cert-manager's util.CronParse: robfig/cron v3's parser (vendored as internal/cron) with Minute | Hour | Dom
 * | Month | Dow | Descriptor, used by both the webhook and the renewal-time computation. The dialect:
 *
 * - five fields, minute hour day-of-month month day-of-week; seconds are always 0;
 * - each field a comma list of `*` or `?`, `N`, `N-M`, any of them with `/step` (`N/step` is `N-max/step`);
 * - months `jan`–`dec` and days `sun`–`sat` by name, any case; day of week 0–6 only (7 is an error);
 * - `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`), `@hourly`, `@every <duration>`;
 * - a `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix, which is how CronParse passes the window's timezone.
 *
 * Errors carry robfig's text, as the webhook shows it.
 */

import { parseGoDuration } from '@certkit/apimachinery';
import {
  type CronSchedule,
  everySchedule,
  type FieldValues,
  type SpecFields,
  specSchedule,
} from './cron-schedule.ts';
import { LOCAL, loadLocation, type TimeZone } from './time-zone.ts';

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const SECONDS: Bounds = { min: 0, max: 59 };
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: {
    jan: 1,
    feb: 2,
    mar: 3,
    apr: 4,
    may: 5,
    jun: 6,
    jul: 7,
    aug: 8,
    sep: 9,
    oct: 10,
    nov: 11,
    dec: 12,
  },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

const MAX_INT64 = (1n << 63n) - 1n;

/** Go's unicode.IsSpace, for strings.Fields and strings.TrimSpace (JavaScript's \s differs by two). */
const SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const SPACES = new RegExp(`[${SPACE}]+`);
const EDGE_SPACES = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, 'g');

const goFields = (text: string) => text.split(SPACES).filter((f) => f !== '');

/** mustParseInt: strconv.Atoi, then no negatives. */
function parseNumber(text: string): bigint {
  // JSON.stringify stands in for strconv.Quote (they agree on printable text).
  const atoi = (problem: string) =>
    new Error(`failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: ${problem}`);
  if (!/^[+-]?[0-9]+$/.test(text)) throw atoi('invalid syntax');
  const value = BigInt(text);
  if (value > MAX_INT64 || value < -MAX_INT64 - 1n) throw atoi('value out of range');
  if (value < 0n) throw new Error(`negative number (${value}) not allowed: ${text}`);
  return value;
}

function parseNumberOrName(text: string, bounds: Bounds): bigint {
  const name = text.toLowerCase();
  return bounds.names && Object.hasOwn(bounds.names, name) ? BigInt(bounds.names[name]) : parseNumber(text);
}

/** getRange: one `*`, `N`, `N-M`, optionally `/step`, added to `allowed`; answers whether it was a star. */
function addRange(expression: string, bounds: Bounds, allowed: Set<number>): boolean {
  const rangeAndStep = expression.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  let start: bigint;
  let end: bigint;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    // robfig ignores whatever follows a star's hyphen.
    start = BigInt(bounds.min);
    end = BigInt(bounds.max);
    star = true;
  } else {
    start = parseNumberOrName(lowAndHigh[0], bounds);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseNumberOrName(lowAndHigh[1], bounds);
    else throw new Error(`too many hyphens: ${expression}`);
  }
  let step = 1n;
  if (rangeAndStep.length === 2) {
    step = parseNumber(rangeAndStep[1]);
    if (lowAndHigh.length === 1) end = BigInt(bounds.max);
    // `*/2` is not a star for the day-of-month/day-of-week rule; `*/1` still is.
    if (step > 1n) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new Error(`too many slashes: ${expression}`);
  }
  if (start < bounds.min) {
    throw new Error(`beginning of range (${start}) below minimum (${bounds.min}): ${expression}`);
  }
  if (end > bounds.max) throw new Error(`end of range (${end}) above maximum (${bounds.max}): ${expression}`);
  if (start > end) {
    throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expression}`);
  }
  if (step === 0n) throw new Error(`step of range should be a positive number: ${expression}`);
  for (let v = start; v <= end; v += step) allowed.add(Number(v));
  return star;
}

/** getField: a comma list of ranges (empty items skipped: `,` allows nothing). */
function parseField(field: string, bounds: Bounds): FieldValues {
  const allowed = new Set<number>();
  let star = false;
  for (const expression of field.split(',').filter((e) => e !== '')) {
    if (addRange(expression, bounds, allowed)) star = true;
  }
  return { allowed, star };
}

function range(bounds: Bounds, star: boolean): FieldValues {
  const allowed = new Set<number>();
  for (let v = bounds.min; v <= bounds.max; v++) allowed.add(v);
  return { allowed, star };
}

const only = (value: number): FieldValues => ({ allowed: new Set([value]), star: false });
const all = (bounds: Bounds) => range(bounds, true);

function midnight(): SpecFields {
  return {
    second: only(0),
    minute: only(0),
    hour: only(0),
    dom: all(DOM),
    month: all(MONTHS),
    dow: all(DOW),
  };
}

const yearly = (): SpecFields => ({ ...midnight(), dom: only(1), month: only(1) });

/** The fixed schedules of the descriptors, all at second 0. */
const DESCRIPTORS: Readonly<Record<string, () => SpecFields>> = {
  '@yearly': yearly,
  '@annually': yearly,
  '@monthly': () => ({ ...midnight(), dom: only(1) }),
  '@weekly': () => ({ ...midnight(), dow: only(0) }),
  '@daily': midnight,
  '@midnight': midnight,
  '@hourly': () => ({ ...midnight(), hour: all(HOURS) }),
};

function parseDescriptor(descriptor: string, zone: TimeZone): CronSchedule {
  if (Object.hasOwn(DESCRIPTORS, descriptor)) return specSchedule(DESCRIPTORS[descriptor](), zone);
  const every = '@every ';
  if (descriptor.startsWith(every)) {
    let delay: bigint;
    try {
      delay = parseGoDuration(descriptor.slice(every.length));
    } catch (err) {
      throw new Error(`failed to parse duration ${descriptor}: ${(err as Error).message}`);
    }
    return everySchedule(delay);
  }
  throw new Error(`unrecognized descriptor: ${descriptor}`);
}

/** robfig's Parser.Parse for cert-manager's options. Throws robfig's error. */
export function parseCron(text: string): CronSchedule {
  if (text.length === 0) throw new Error('empty spec string');
  let spec = text;
  // Without a prefix the schedule is time.Local's.
  let zone = LOCAL;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const equals = spec.indexOf('=');
    if (space === -1) throw new Error(`expected timezone prefix to be followed by a cron spec: ${spec}`);
    const name = spec.slice(equals + 1, space);
    try {
      zone = loadLocation(name);
    } catch (err) {
      throw new Error(`provided bad location ${name}: ${(err as Error).message}`);
    }
    spec = spec.slice(space).replace(EDGE_SPACES, '');
  }
  if (spec.startsWith('@')) return parseDescriptor(spec, zone);

  const fields = goFields(spec);
  if (fields.length !== 5) {
    throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  const [minute, hour, dom, month, dow] = fields;
  return specSchedule(
    {
      second: parseField('0', SECONDS),
      minute: parseField(minute, MINUTES),
      hour: parseField(hour, HOURS),
      dom: parseField(dom, DOM),
      month: parseField(month, MONTHS),
      dow: parseField(dow, DOW),
    },
    zone,
  );
}

/**
 * util.CronParse(cron, timeZone): the expression in the zone (none: time.Local), with cert-manager's
 * wrapping of the error.
 */
export function cronParse(cron: string, timeZone: string): CronSchedule {
  try {
    return parseCron(timeZone !== '' ? `CRON_TZ=${timeZone} ${cron}` : cron);
  } catch (err) {
    throw new Error(`failed to parse cron spec '${cron}': ${(err as Error).message}`);
  }
}
