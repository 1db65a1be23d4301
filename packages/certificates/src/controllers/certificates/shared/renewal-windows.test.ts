import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoDuration, formatGoTimeString, fromMilliseconds } from '@certkit/apimachinery';
import { cronParse } from '../../../api/cron-parser.ts';
import type { CertificateRenewalWindow } from '../../../api/types.ts';
import { applyRenewalWindows, latestActivation } from './renewal-windows.ts';
import { renewalTime, scheduleRenewal } from './renewal.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

const midnightUTC = (ms: number) => Math.floor(ms / DAY) * DAY;
/** The first day from `ms` on (itself included) whose UTC weekday is `weekday`. */
const nextWeekday = (ms: number, weekday: number) => {
  while (new Date(ms).getUTCDay() !== weekday) ms += DAY;
  return ms;
};
const SATURDAY = 6;

interface Scenario {
  notBefore: number;
  notAfter: number;
  target: number;
  expected: number;
  windows: CertificateRenewalWindow[];
  wantErr?: boolean;
}

/**
 * TestRenewalWithWindowsForRenewBefore (pkg/util/pki/renewaltime_test.go), whose times hang off time.Now():
 * the same inputs and expectations built from `now`. renewBefore is notAfter − target, so that the time
 * renewBefore asks for is the target.
 */
function upstreamScenarios(now: number): Record<string, Scenario> {
  const future = midnightUTC(now + 5 * DAY);
  const saturday = nextWeekday(future, SATURDAY);
  const utc = (cron: string, windowDuration: string): CertificateRenewalWindow => ({
    timezone: 'UTC',
    windowDuration,
    cron,
  });
  // America/Phoenix is UTC−7 all year.
  const phoenix = (daysAfterFuture: number, hour: number, minute: number) =>
    future + daysAfterFuture * DAY + (hour + 7) * HOUR + minute * MINUTE;
  return {
    'single window, renewal time within window': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: future + 48 * HOUR,
      target: future + 10 * HOUR + 30 * MINUTE,
      expected: future + 24 * HOUR - (13 * HOUR + 30 * MINUTE),
      windows: [utc('0 10 * * *', '2h')],
    },
    'single window, time outside window': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: future + 48 * HOUR,
      target: future + 13 * HOUR,
      expected: future + 24 * HOUR + 10 * HOUR,
      windows: [utc('0 10 * * *', '2h')],
    },
    'single window, renewal time before the window': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: future + 24 * HOUR,
      target: future + 9 * HOUR,
      expected: future + 15 * HOUR,
      windows: [utc('0 15 * * *', '2h')],
    },
    'multiple windows, weekday and weekend': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: saturday + 24 * HOUR,
      target: saturday + 6 * HOUR,
      expected: saturday + 10 * HOUR,
      windows: [utc('0 23 * * 1-5', '2h'), utc('0 10 * * 6,0', '4h')],
    },
    'single window, renewal time within window, different timezone': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: future + 48 * HOUR,
      target: phoenix(0, 10, 30),
      expected: phoenix(1, 0, 0) - (13 * HOUR + 30 * MINUTE),
      windows: [{ timezone: 'America/Phoenix', cron: '0 10 * * *', windowDuration: '2h' }],
    },
    'single window, renewal time in daylight savings (on to off) time zone': {
      // denverMDT and denverMST: 2026-03-08 and 2026-11-01 at 00:00 UTC.
      notBefore: at('2026-02-26T00:00:00Z'),
      notAfter: at('2026-11-01T00:00:00Z') + 48 * HOUR,
      target: at('2026-10-31T21:30:00Z'), // 2026-10-31 15:30 MDT
      expected: at('2026-10-31T06:00:00Z') + 35 * HOUR, // 2026-10-31 00:00 MDT + 35h: 2026-11-01 10:00 MST
      windows: [{ timezone: 'America/Denver', cron: '0 10 * * *', windowDuration: '2h' }],
    },
    'single window, renewal time outside of windows': {
      notBefore: midnightUTC(now - 10 * DAY),
      notAfter: future + 24 * HOUR,
      target: future + 13 * HOUR + 30 * MINUTE,
      expected: future + 13 * HOUR + 30 * MINUTE,
      windows: [utc('0 10 * * *', '2h')],
      wantErr: true,
    },
  };
}

function check(name: string, s: Scenario) {
  const spec = {
    renewBefore: formatGoDuration(fromMilliseconds(s.notAfter - s.target)),
    renewal: { policy: 'RenewBefore' as const, windows: s.windows },
  };
  const got = scheduleRenewal(new Date(s.notBefore), new Date(s.notAfter), spec)!;
  assert.equal(iso(got.at.getTime()), iso(s.expected), name);
  if (s.wantErr) {
    assert.equal(
      got.windowError,
      `cannot find a time with the given windows between ${formatGoTimeString(new Date(s.notBefore))} and ${formatGoTimeString(new Date(s.notAfter))} for: ${formatGoTimeString(new Date(s.target))}`,
      name,
    );
  } else {
    assert.equal(got.windowError, undefined, name);
  }
}

describe("renewal windows: upstream's TestRenewalWithWindowsForRenewBefore", () => {
  it('on 2026-04-15 (a Wednesday)', () => {
    for (const [name, s] of Object.entries(upstreamScenarios(at('2026-04-15T13:37:00Z')))) check(name, s);
  });

  it('on every day of four weeks, at varying times of day (upstream runs at time.Now())', () => {
    for (let day = 0; day < 28; day++) {
      const now = at('2026-06-01T00:00:00Z') + day * DAY + ((day * 7) % 24) * HOUR + day * MINUTE;
      for (const [name, s] of Object.entries(upstreamScenarios(now))) check(`${name} (${iso(now)})`, s);
    }
  });

  it('the error case prints times as Go does', () => {
    const s = upstreamScenarios(at('2026-04-15T13:37:00Z'))['single window, renewal time outside of windows'];
    const got = applyRenewalWindows(s.notBefore, s.notAfter, s.target, s.windows);
    assert.equal(
      got.error,
      'cannot find a time with the given windows between 2026-04-05 00:00:00 +0000 UTC and 2026-04-21 00:00:00 +0000 UTC for: 2026-04-20 13:30:00 +0000 UTC',
    );
  });
});

describe('renewal windows: the search', () => {
  const notBefore = at('2026-04-01T00:00:00Z'); // a Wednesday
  const notAfter = at('2026-05-01T00:00:00Z');
  const find = (desired: string, windows: CertificateRenewalWindow[]) => {
    const found = applyRenewalWindows(notBefore, notAfter, at(desired), windows);
    return { at: iso(found.at), error: found.error };
  };
  const daily = (cron: string, windowDuration: string, timezone = 'UTC') => ({
    cron,
    windowDuration,
    timezone,
  });

  it('keeps a desired time inside any window, the window end included', () => {
    assert.deepEqual(
      find('2026-04-20T11:00:00Z', [daily('0 10 * * *', '2h')]).at,
      '2026-04-20T11:00:00.000Z',
    );
    assert.deepEqual(
      find('2026-04-20T12:00:00Z', [daily('0 10 * * *', '2h')]).at,
      '2026-04-20T12:00:00.000Z',
    );
    assert.deepEqual(
      find('2026-04-20T12:00:01Z', [daily('0 10 * * *', '2h')]).at,
      '2026-04-21T10:00:00.000Z',
    );
    // Inside the second of two windows, though the first opens sooner after it.
    assert.deepEqual(
      find('2026-04-20T11:00:00Z', [daily('0 13 * * *', '1h'), daily('0 10 * * *', '2h')]).at,
      '2026-04-20T11:00:00.000Z',
    );
  });

  it('otherwise takes the earliest opening of all windows', () => {
    assert.deepEqual(
      find('2026-04-20T11:00:00Z', [daily('0 18 * * *', '1h'), daily('0 14 * * *', '1h')]).at,
      '2026-04-20T14:00:00.000Z',
    );
  });

  it('counts every window whatever their order (upstream forgets earlier ones after a window with none)', () => {
    const weekly = daily('0 10 * * sat', '4h');
    const yearly = daily('0 0 1 1 *', '1h');
    // 2026-04-20 is a Monday; the next Saturday is the 25th. No New Year before expiry.
    assert.deepEqual(find('2026-04-20T11:00:00Z', [weekly, yearly]), {
      at: '2026-04-25T10:00:00.000Z',
      error: undefined,
    });
    assert.deepEqual(find('2026-04-20T11:00:00Z', [yearly, weekly]), {
      at: '2026-04-25T10:00:00.000Z',
      error: undefined,
    });
  });

  it('looks for openings up to expiry plus the window duration, as upstream', () => {
    // Opens exactly at notAfter + 2h: still taken.
    assert.equal(find('2026-04-30T12:00:00Z', [daily('0 2 1 5 *', '2h')]).at, '2026-05-01T02:00:00.000Z');
    const late = find('2026-04-30T12:00:00Z', [daily('1 2 1 5 *', '2h')]);
    assert.equal(late.at, '2026-04-30T12:00:00.000Z');
    assert.match(late.error!, /^cannot find a time with the given windows/);
  });

  it('skips a window opening that DST removes, and uses both openings DST repeats', () => {
    const berlin = (desired: string) =>
      applyRenewalWindows(at('2026-03-01T00:00:00Z'), at('2026-04-30T00:00:00Z'), at(desired), [
        daily('30 2 * * *', '1h', 'Europe/Berlin'),
      ]).at;
    // 02:30 does not exist in Berlin on 2026-03-29: from 01:45 CET that day, the next opening is on the 30th.
    assert.equal(iso(berlin('2026-03-29T00:45:00Z')), '2026-03-30T00:30:00.000Z');

    const denver = (desired: string) =>
      applyRenewalWindows(at('2026-10-01T00:00:00Z'), at('2026-11-30T00:00:00Z'), at(desired), [
        daily('30 1 * * *', '30m', 'America/Denver'),
      ]).at;
    // 01:30 happens twice in Denver on 2026-11-01 (07:30Z MDT, 08:30Z MST).
    assert.equal(iso(denver('2026-11-01T07:10:00Z')), '2026-11-01T07:30:00.000Z');
    assert.equal(iso(denver('2026-11-01T08:10:00Z')), '2026-11-01T08:30:00.000Z');
    assert.equal(iso(denver('2026-11-01T08:40:00Z')), '2026-11-01T08:40:00.000Z');
  });

  it("gives upstream's errors for windows the webhook should have refused, with the desired time", () => {
    const desired = '2026-04-20T11:00:00Z';
    assert.deepEqual(find(desired, [daily('0 10 * * *', '0s')]), {
      at: '2026-04-20T11:00:00.000Z',
      error: 'windowDuration must be a positive duration in window {UTC 0s 0 10 * * *}',
    });
    assert.deepEqual(
      find(desired, [{ cron: '0 10 * * *' }]).error,
      'windowDuration must be a positive duration in window { <nil> 0 10 * * *}',
    );
    assert.deepEqual(
      find(desired, [daily('0 10 * * *', '1h', 'Mars/Olympus')]).error,
      'error parsing timezone in window unknown time zone Mars/Olympus',
    );
    assert.deepEqual(
      find(desired, [daily('0 25 * * *', '1h')]).error,
      "error parsing cron in window failed to parse cron spec '0 25 * * *': end of range (25) above maximum (23): 25",
    );
  });
});

describe('latestActivation (bsFindLatestWindowBeforeDesired)', () => {
  const hourly = cronParse('0 * * * *', 'UTC');
  it('finds the last activation within [min, max], both ends included', () => {
    assert.equal(
      iso(latestActivation(hourly, at('2026-01-01T00:00:00Z'), at('2026-01-03T05:30:00Z'))!),
      '2026-01-03T05:00:00.000Z',
    );
    assert.equal(
      iso(latestActivation(hourly, at('2026-01-01T00:00:00Z'), at('2026-01-03T05:00:00Z'))!),
      '2026-01-03T05:00:00.000Z',
    );
    assert.equal(
      iso(latestActivation(hourly, at('2026-01-01T05:00:00Z'), at('2026-01-01T05:30:00Z'))!),
      '2026-01-01T05:00:00.000Z',
    );
  });
  it('finds none in an empty range or one without an activation', () => {
    assert.equal(latestActivation(hourly, at('2026-01-01T05:10:00Z'), at('2026-01-01T05:50:00Z')), undefined);
    assert.equal(latestActivation(hourly, at('2026-01-01T05:00:00Z'), at('2026-01-01T05:00:00Z')), undefined);
  });
});

describe('renewalTime with windows', () => {
  const notBefore = new Date('2026-04-01T00:00:00Z');
  const notAfter = new Date('2026-04-04T00:00:00Z'); // 3 days: renewal after 2, on 2026-04-03 00:00
  const windows = [{ cron: '0 6 * * *', windowDuration: '1h', timezone: 'UTC' }];

  it('applies the windows to the renewBefore time', () => {
    assert.equal(renewalTime(notBefore, notAfter, {})!.toISOString(), '2026-04-03T00:00:00.000Z');
    assert.equal(
      renewalTime(notBefore, notAfter, { renewal: { policy: 'RenewBefore', windows } })!.toISOString(),
      '2026-04-03T06:00:00.000Z',
    );
  });

  it('has no time when renewal is disabled', () => {
    assert.equal(
      scheduleRenewal(notBefore, notAfter, { renewal: { policy: 'Disabled', windows } }),
      undefined,
    );
  });

  it('answers a window error alongside the renewBefore time', () => {
    const never = [{ cron: '0 0 30 2 *', windowDuration: '1h' }];
    const scheduled = scheduleRenewal(notBefore, notAfter, {
      renewal: { policy: 'RenewBefore', windows: never },
    });
    assert.equal(scheduled?.at.toISOString(), '2026-04-03T00:00:00.000Z');
    assert.match(
      scheduled!.windowError!,
      /^cannot find a time with the given windows between 2026-04-01 00:00:00 \+0000 UTC/,
    );
  });
});
