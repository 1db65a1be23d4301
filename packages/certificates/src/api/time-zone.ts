/**
 * Time zones as Go's time package treats them, for renewal windows: which names time.LoadLocation accepts,
 * an instant's wall clock in a zone (time.Time.In), and time.Date (wall clock to instant, including Go's
 * choice inside DST gaps and overlaps), which robfig/cron's Next is built from.
 *
 * Offsets come from Intl, i.e. the tz database of the Node.js build, where cert-manager uses the one of
 * its image or Go's embedded copy: zones whose rules changed between the two may differ.
 */

export interface WallClock {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 is Sunday, as Go's time.Weekday. */
  weekday: number;
}

export interface TimeZone {
  /** The name it was loaded by, as Go's Location.String. */
  readonly name: string;
  /** Milliseconds to add to an instant (Unix ms) for its wall clock in the zone. */
  offsetAt(instant: number): number;
}

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

const fixedZone = (name: string): TimeZone => ({ name, offsetAt: () => 0 });

export const UTC: TimeZone = fixedZone('UTC');

/**
 * Go's time.Local. Its only use is robfig/cron's `CRON_TZ=Local`, which evaluates a schedule in the zone of
 * the time it is given; cert-manager hands RenewalTime the certificate's notBefore and notAfter as x509
 * parsed them, in UTC. So "Local" windows run in UTC there whatever the controller's TZ, and here too,
 * which also keeps renewal times independent of the host.
 */
export const LOCAL: TimeZone = fixedZone('Local');

const floorMod = (a: number, b: number) => ((a % b) + b) % b;

/** Unix ms of a proleptic Gregorian wall clock read as UTC; out-of-range fields carry, as in Go's time.Date. */
export function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** An IANA zone, its offsets read with Intl.DateTimeFormat. */
class IntlZone implements TimeZone {
  readonly name: string;
  readonly #format: Intl.DateTimeFormat;
  /** Offset per UTC day when it is the same at the day's first and last second (no transition that day). */
  readonly #daily = new Map<number, number | null>();

  constructor(name: string) {
    this.name = name;
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  offsetAt(instant: number): number {
    // formatToParts costs microseconds and cron's Next asks hundreds of times per search, mostly about a few
    // days: a day's offset is remembered, and only days with a transition are asked about every instant.
    const day = Math.floor(instant / DAY_MS);
    let offset = this.#daily.get(day);
    if (offset === undefined) {
      const first = this.#exactOffset(day * DAY_MS);
      offset = first === this.#exactOffset((day + 1) * DAY_MS - SECOND_MS) ? first : null;
      if (this.#daily.size >= 4096) this.#daily.clear();
      this.#daily.set(day, offset);
    }
    return offset ?? this.#exactOffset(instant);
  }

  #exactOffset(instant: number): number {
    const fields: Record<string, number> = {};
    for (const part of this.#format.formatToParts(instant)) {
      if (part.type !== 'literal') fields[part.type] = Number(part.value);
    }
    const wall = utcMs(fields.year, fields.month, fields.day, fields.hour, fields.minute, fields.second);
    // Intl shows whole seconds: the offset is measured against the instant's second.
    return wall - (instant - floorMod(instant, SECOND_MS));
  }
}

/** The case-normalized IANA name (Temporal keeps link names such as US/Eastern), or undefined if unknown. */
function ianaName(name: string): string | undefined {
  const temporal = (globalThis as { Temporal?: TemporalLike }).Temporal;
  try {
    if (temporal) return temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(name).timeZoneId;
    // Without Temporal, Intl: it canonicalizes names, so case and ICU-only names (PST) cannot be told apart.
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}

interface TemporalLike {
  Instant: {
    fromEpochMilliseconds(ms: number): { toZonedDateTimeISO(zone: string): { timeZoneId: string } };
  };
}

const loaded = new Map<string, TimeZone>();

/**
 * time.LoadLocation: "" and "UTC" are UTC, "Local" is LOCAL, other names must be tz database names spelled
 * exactly (Go reads them from files: `america/denver` is unknown). Throws with Go's error text.
 */
export function loadLocation(name: string): TimeZone {
  if (name === '' || name === 'UTC') return UTC;
  if (name === 'Local') return LOCAL;
  if (name.includes('..') || name.startsWith('/') || name.startsWith('\\')) {
    throw new Error('time: invalid location name');
  }
  const known = loaded.get(name);
  if (known) return known;
  // Temporal and Intl also take UTC offsets (+01:00), which are not zone files.
  if (/^[+-]/.test(name) || ianaName(name) !== name) throw new Error(`unknown time zone ${name}`);
  const zone = new IntlZone(name);
  if (loaded.size >= 1024) loaded.clear();
  loaded.set(name, zone);
  return zone;
}

/** time.Time.In(zone) and its fields. */
export function wallClock(instant: number, zone: TimeZone): WallClock {
  const date = new Date(instant + zone.offsetAt(instant));
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    weekday: date.getUTCDay(),
  };
}

/**
 * time.Date(year, month, day, hour, minute, second, 0, zone) as Unix ms. Fields out of range carry over
 * (month 13 is January of the next year). A wall clock that occurs twice or never takes Go's offset: the
 * one in force at the wall clock read as UTC, unless the instant that gives lies outside that offset's
 * period, in which case the offset at that instant. For the usual one-hour shifts that reads a gap with the
 * offset after the transition in zones west of UTC (02:30 on America/Denver's spring-forward day is 01:30
 * MST) and before it east of UTC (02:30 in Europe/Berlin is 03:30 CEST); an overlap gives the first
 * occurrence west of UTC, the second east.
 */
export function zonedMs(
  zone: TimeZone,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number {
  const wall = utcMs(year, month, day, hour, minute, second);
  return wall - zone.offsetAt(wall - zone.offsetAt(wall));
}
