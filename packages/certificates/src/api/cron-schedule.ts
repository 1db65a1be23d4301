/**
 * When a parsed cron expression fires next: robfig/cron v3's SpecSchedule.Next and ConstantDelaySchedule
 * (`@every`), as vendored in cert-manager's internal/cron. Times are Unix milliseconds. Next steps through
 * the wall clock of the schedule's zone field by field as robfig does, hours and minutes by adding real time,
 * days and months through time.Date, so DST comes out as it does there: a time inside a spring-forward gap
 * never fires that day, a time inside a fall-back overlap fires at both occurrences, and a day whose
 * midnight does not exist starts at the first hour it has.
 */

import { LOCAL, type TimeZone, UTC, wallClock, type WallClock, zonedMs } from './time-zone.ts';

export interface CronSchedule {
  /** The first activation strictly after `after` (whole seconds), or ZERO_TIME when there is none. */
  next(after: number): number;
}

/** Go's zero time.Time (0001-01-01T00:00:00Z), robfig's answer for "never": earlier than any real time. */
export const ZERO_TIME = -62_135_596_800_000;

/** The values a field allows; `star` when it was written `*` or `?` (without a step above 1). */
export interface FieldValues {
  readonly allowed: ReadonlySet<number>;
  readonly star: boolean;
}

export interface SpecFields {
  second: FieldValues;
  minute: FieldValues;
  hour: FieldValues;
  dom: FieldValues;
  month: FieldValues;
  dow: FieldValues;
}

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** How far Next searches (nextSearchLimitYears): Feb 29 can be 8 years from the next one. */
const SEARCH_LIMIT_YEARS = 9;

const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit;

/**
 * dayMatches: when either day field is `*`, a day must match both (so `* * 1 * MON` is Mondays that are
 * the 1st); when both are restricted, either will do (Vixie cron: `0 0 1 * MON` is the 1st and every Monday).
 */
function dayMatches(fields: SpecFields, wall: WallClock): boolean {
  const dom = fields.dom.allowed.has(wall.day);
  const dow = fields.dow.allowed.has(wall.weekday);
  return fields.dom.star || fields.dow.star ? dom && dow : dom || dow;
}

/** Schedules robfig would search for nine years in vain (a field that allows nothing): never. */
function neverFires(fields: SpecFields): boolean {
  const empty = (f: FieldValues) => f.allowed.size === 0;
  if ([fields.second, fields.minute, fields.hour, fields.month].some(empty)) return true;
  if (fields.dom.star || fields.dow.star) return empty(fields.dom) || empty(fields.dow);
  return empty(fields.dom) && empty(fields.dow);
}

/** A cron expression's schedule in `zone` (LOCAL: the zone of the times asked about, UTC here). */
export function specSchedule(fields: SpecFields, zone: TimeZone): CronSchedule {
  const location = zone === LOCAL ? UTC : zone;
  const never = neverFires(fields);
  const wall = (t: number) => wallClock(t, location);
  const date = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
    zonedMs(location, y, mo, d, h, mi, s);
  /** time.Time.AddDate: the wall clock moved by months and days, then time.Date. */
  const addDate = (t: number, months: number, days: number) => {
    const w = wall(t);
    return date(w.year, w.month + months, w.day + days, w.hour, w.minute, w.second);
  };

  return {
    next(after: number): number {
      if (never) return ZERO_TIME;
      // The upcoming whole second.
      let t = floorTo(after, SECOND_MS) + SECOND_MS;
      // Once a field has moved, the smaller ones restart from their lowest value.
      let added = false;
      const yearLimit = wall(t).year + SEARCH_LIMIT_YEARS;

      wrap: for (;;) {
        let w = wall(t);
        if (w.year > yearLimit) return ZERO_TIME;

        while (!fields.month.allowed.has(w.month)) {
          if (!added) {
            added = true;
            t = date(w.year, w.month, 1, 0, 0, 0);
          }
          t = addDate(t, 1, 0);
          w = wall(t);
          if (w.month === 1) continue wrap;
        }

        while (!dayMatches(fields, w)) {
          if (!added) {
            added = true;
            t = date(w.year, w.month, w.day, 0, 0, 0);
          }
          t = addDate(t, 0, 1);
          w = wall(t);
          // Where midnight does not exist (a DST change at 00:00), time.Date lands an hour off: robfig moves
          // to the start of the intended day.
          if (w.hour !== 0) {
            t += (w.hour > 12 ? 24 - w.hour : -w.hour) * HOUR_MS;
            w = wall(t);
          }
          if (w.day === 1) continue wrap;
        }

        while (!fields.hour.allowed.has(w.hour)) {
          if (!added) {
            added = true;
            t = date(w.year, w.month, w.day, w.hour, 0, 0);
          }
          t += HOUR_MS;
          w = wall(t);
          if (w.hour === 0) continue wrap;
        }

        while (!fields.minute.allowed.has(w.minute)) {
          if (!added) {
            added = true;
            t = floorTo(t, MINUTE_MS);
          }
          t += MINUTE_MS;
          w = wall(t);
          if (w.minute === 0) continue wrap;
        }

        while (!fields.second.allowed.has(w.second)) {
          if (!added) {
            added = true;
            t = floorTo(t, SECOND_MS);
          }
          t += SECOND_MS;
          w = wall(t);
          if (w.second === 0) continue wrap;
        }

        return t;
      }
    },
  };
}

/**
 * `@every <duration>`: the given time plus the delay (at least a second, whole seconds), not anchored to
 * any clock, and blind to the zone.
 */
export function everySchedule(delayNs: bigint): CronSchedule {
  const seconds = delayNs < 1_000_000_000n ? 1n : delayNs / 1_000_000_000n;
  const delay = Number(seconds) * SECOND_MS;
  return { next: (after) => floorTo(after, SECOND_MS) + delay };
}
