import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOCAL, loadLocation, UTC, wallClock, zonedMs } from './time-zone.ts';

const at = (iso: string) => Date.parse(iso);

describe('loadLocation (time.LoadLocation)', () => {
  it('takes "" and "UTC" as UTC, "Local" as Local, and tz database names as written', () => {
    assert.equal(loadLocation(''), UTC);
    assert.equal(loadLocation('UTC'), UTC);
    assert.equal(loadLocation('Local'), LOCAL);
    for (const name of ['America/Denver', 'Europe/Berlin', 'US/Eastern', 'Etc/GMT+5', 'EST5EDT', 'Etc/UTC']) {
      assert.equal(loadLocation(name).name, name);
    }
  });

  it('refuses what Go finds no zone file for, with its error', () => {
    // Go opens files by name: the case must be exact, and offsets or ICU-only abbreviations are not zones.
    for (const name of ['america/denver', 'us/eastern', 'utc', '+01:00', '-0700', 'PST', 'Mars/Olympus']) {
      assert.throws(() => loadLocation(name), { message: `unknown time zone ${name}` }, name);
    }
    for (const name of ['../etc/passwd', '/etc/localtime', '\\zone']) {
      assert.throws(() => loadLocation(name), { message: 'time: invalid location name' }, name);
    }
  });

  it('has Local run in UTC, the zone of the times cert-manager passes to its schedules', () => {
    assert.equal(LOCAL.offsetAt(at('2026-07-01T12:00:00Z')), 0);
  });
});

describe('wallClock (time.Time.In)', () => {
  it('reads the wall clock on both sides of a DST change', () => {
    const denver = loadLocation('America/Denver');
    // 2026-03-08: 02:00 MST becomes 03:00 MDT, at 09:00 UTC.
    assert.deepEqual(wallClock(at('2026-03-08T08:59:59Z'), denver), {
      year: 2026,
      month: 3,
      day: 8,
      hour: 1,
      minute: 59,
      second: 59,
      weekday: 0,
    });
    assert.deepEqual(wallClock(at('2026-03-08T09:00:00Z'), denver), {
      year: 2026,
      month: 3,
      day: 8,
      hour: 3,
      minute: 0,
      second: 0,
      weekday: 0,
    });
    const berlin = loadLocation('Europe/Berlin');
    // 2026-10-25: 03:00 CEST becomes 02:00 CET, at 01:00 UTC; 02:30 happens twice.
    assert.equal(wallClock(at('2026-10-25T00:30:00Z'), berlin).hour, 2);
    assert.equal(wallClock(at('2026-10-25T01:30:00Z'), berlin).hour, 2);
    assert.equal(wallClock(at('2026-10-25T02:30:00Z'), berlin).hour, 3);
  });

  it('knows offsets that are not whole hours', () => {
    assert.equal(loadLocation('Asia/Kathmandu').offsetAt(at('2026-01-01T00:00:00Z')), (5 * 60 + 45) * 60_000);
    assert.equal(
      loadLocation('America/St_Johns').offsetAt(at('2026-01-01T00:00:00Z')),
      -(3 * 60 + 30) * 60_000,
    );
  });
});

describe('zonedMs (time.Date)', () => {
  const denver = loadLocation('America/Denver');
  const berlin = loadLocation('Europe/Berlin');

  it('converts ordinary wall clocks', () => {
    assert.equal(zonedMs(denver, 2026, 7, 1, 12, 0, 0), at('2026-07-01T18:00:00Z'));
    assert.equal(zonedMs(berlin, 2026, 1, 15, 9, 30, 0), at('2026-01-15T08:30:00Z'));
    assert.equal(zonedMs(UTC, 2026, 2, 28, 23, 59, 59), at('2026-02-28T23:59:59Z'));
  });

  it('carries fields out of range over, as Go does', () => {
    assert.equal(zonedMs(UTC, 2026, 13, 1, 0, 0, 0), at('2027-01-01T00:00:00Z'));
    assert.equal(zonedMs(UTC, 2026, 2, 31, 0, 0, 0), at('2026-03-03T00:00:00Z'));
    assert.equal(zonedMs(UTC, 2026, 3, 0, 0, 0, 0), at('2026-02-28T00:00:00Z'));
    assert.equal(zonedMs(UTC, 2026, 1, 1, 24, 0, 0), at('2026-01-02T00:00:00Z'));
  });

  it('reads a wall clock in a spring-forward gap as Go does', () => {
    // 02:30 does not exist on these days. West of UTC Go lands before the gap, east after it.
    assert.equal(zonedMs(denver, 2026, 3, 8, 2, 30, 0), at('2026-03-08T08:30:00Z')); // 01:30 MST
    assert.equal(zonedMs(berlin, 2026, 3, 29, 2, 30, 0), at('2026-03-29T01:30:00Z')); // 03:30 CEST
    // A midnight that does not exist (America/Santiago, 2026-09-06 00:00 -04 → 01:00 -03): 23:00 the day before.
    assert.equal(zonedMs(loadLocation('America/Santiago'), 2026, 9, 6, 0, 0, 0), at('2026-09-06T03:00:00Z'));
  });

  it('picks an occurrence of a wall clock in a fall-back overlap as Go does', () => {
    // 01:30 in Denver on 2026-11-01 is first MDT (07:30Z), then MST (08:30Z): Go takes the first.
    assert.equal(zonedMs(denver, 2026, 11, 1, 1, 30, 0), at('2026-11-01T07:30:00Z'));
    // 02:30 in Berlin on 2026-10-25 is first CEST (00:30Z), then CET (01:30Z): Go takes the second.
    assert.equal(zonedMs(berlin, 2026, 10, 25, 2, 30, 0), at('2026-10-25T01:30:00Z'));
  });
});
