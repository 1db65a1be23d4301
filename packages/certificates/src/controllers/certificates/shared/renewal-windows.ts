import { formatGoDuration, formatGoTimeString, parseGoDuration } from '@certkit/apimachinery';
import { cronParse } from '../../../api/cron-parser.ts';
import type { CronSchedule } from '../../../api/cron-schedule.ts';
import { loadLocation } from '../../../api/time-zone.ts';
import type { CertificateRenewalWindow } from '../../../api/types.ts';

/**
 * Moving a renewal time into spec.renewal.windows: cert-manager's applyRenewBeforeWithWindows and its
 * helpers (pkg/util/pki/renewaltime.go). Each window opens at every activation of its cron expression, in its
 * timezone (UTC when unset), and stays open for windowDuration. The answer is the desired time itself when
 * it falls in a window (its end included), else the first window opening after it, looking no further than
 * the certificate's expiry plus the window's duration; else the desired time with an error, which the
 * trigger and readiness report as WindowError.
 *
 * One deliberate difference: upstream forgets the openings found for earlier windows when a later window
 * opens nowhere before expiry, so the answer for a list of windows depends on their order (a weekly and a
 * yearly window find a time in that order, and none the other way round). Here every window counts.
 *
 * Times are Unix milliseconds.
 */

export interface WindowedTime {
  at: number;
  /** Why no time in the windows was found (upstream's error text); `at` is then the desired time. */
  error?: string;
}

const SECOND_MS = 1000;

/**
 * bsFindLatestWindowBeforeDesired: the latest activation in [min, max], by bisection over Next (cron can only
 * be searched forwards).
 */
export function latestActivation(schedule: CronSchedule, min: number, max: number): number | undefined {
  if (!(min < max)) return undefined;
  if (schedule.next(min - SECOND_MS) > max) return undefined;
  let low = min;
  let high = max;
  // Invariant: an activation lies in (low, max].
  while (high - low > SECOND_MS) {
    const mid = low + Math.trunc((high - low) / 2);
    if (schedule.next(mid) > max) high = mid;
    else low = mid;
  }
  const last = schedule.next(low - SECOND_MS);
  return last > max ? undefined : last;
}

interface Search {
  schedule: CronSchedule;
  durationMs: number;
  /** Openings considered: [notBefore − duration, notAfter + duration]. */
  min: number;
  max: number;
}

/**
 * findBeforeDesired: the desired time, when the last window opening at or before it is still open then
 * (end included). Upstream's candidate for a closed window (its end) is always before the desired time and
 * so never taken.
 */
function openAtDesired(search: Search, desired: number): number | undefined {
  if (desired < search.min) return undefined;
  const start = latestActivation(search.schedule, search.min, Math.min(desired, search.max));
  if (start === undefined) return undefined;
  const end = start + search.durationMs;
  const candidate = desired >= start && desired < end ? desired : end;
  return candidate >= desired ? candidate : undefined;
}

/** findAfterDesired: the first opening at or after the desired time (the desired time if open then). */
function firstOpening(search: Search, desired: number): number | undefined {
  const start = search.schedule.next(Math.max(desired, search.min) - SECOND_MS);
  if (start > search.max) return undefined;
  if (desired >= start && desired < start + search.durationMs) return desired;
  return desired < start ? start : undefined;
}

/** A window's schedule and bounds, or upstream's error for a window the webhook should have refused. */
function prepare(window: CertificateRenewalWindow, notBefore: number, notAfter: number): Search | string {
  const timezone = window.timezone ?? '';
  let zoneName = 'UTC';
  try {
    zoneName = loadLocation(timezone).name;
  } catch (err) {
    return `error parsing timezone in window ${(err as Error).message}`;
  }
  let schedule: CronSchedule;
  try {
    schedule = cronParse(window.cron ?? '', zoneName);
  } catch (err) {
    return `error parsing cron in window ${(err as Error).message}`;
  }
  let duration: bigint | undefined;
  try {
    duration = parseGoDuration(window.windowDuration ?? '');
  } catch {
    // Unparsable counts as missing (the CRD's pattern keeps such values out).
  }
  if (duration === undefined || duration <= 0n) {
    // Go's %v of the window struct.
    const shown = duration === undefined ? '<nil>' : formatGoDuration(duration);
    return `windowDuration must be a positive duration in window {${timezone} ${shown} ${window.cron ?? ''}}`;
  }
  // Fractional for sub-millisecond durations: only comparisons use it.
  const durationMs = Number(duration) / 1e6;
  return { schedule, durationMs, min: notBefore - durationMs, max: notAfter + durationMs };
}

/** applyRenewBeforeWithWindows for a certificate valid from `notBefore` to `notAfter`. */
export function applyRenewalWindows(
  notBefore: number,
  notAfter: number,
  desired: number,
  windows: readonly CertificateRenewalWindow[],
): WindowedTime {
  if (windows.length === 0) return { at: desired };
  let latestOpen: number | undefined;
  let earliestOpening: number | undefined;
  for (const window of windows) {
    const search = prepare(window, notBefore, notAfter);
    // Upstream answers no time at all; the desired time keeps the certificate renewing (see renewal.ts).
    if (typeof search === 'string') return { at: desired, error: search };
    const open = openAtDesired(search, desired);
    if (open !== undefined && (latestOpen === undefined || open > latestOpen)) latestOpen = open;
    const opening = firstOpening(search, desired);
    if (opening !== undefined && (earliestOpening === undefined || opening < earliestOpening)) {
      earliestOpening = opening;
    }
  }
  const at = latestOpen ?? earliestOpening;
  if (at !== undefined) return { at };
  return {
    at: desired,
    error: `cannot find a time with the given windows between ${formatGoTimeString(new Date(notBefore))} and ${formatGoTimeString(new Date(notAfter))} for: ${formatGoTimeString(new Date(desired))}`,
  };
}
