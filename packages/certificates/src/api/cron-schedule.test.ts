import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronParse } from './cron-parser.ts';
import { activations, at, iso } from '@certkit/testenv/cert-manager/cron';
import { ZERO_TIME } from './cron-schedule.ts';

// 2026-01-01 is a Thursday.
describe('CronSchedule.next: fields', () => {
  it('steps, ranges and lists', () => {
    assert.deepEqual(activations('*/20 9-10 * * *', 'UTC', '2026-01-01T00:00:00Z', 7), [
      '2026-01-01T09:00:00Z',
      '2026-01-01T09:20:00Z',
      '2026-01-01T09:40:00Z',
      '2026-01-01T10:00:00Z',
      '2026-01-01T10:20:00Z',
      '2026-01-01T10:40:00Z',
      '2026-01-02T09:00:00Z',
    ]);
    assert.deepEqual(activations('5,10-12 3 * * *', 'UTC', '2026-01-01T00:00:00Z', 5), [
      '2026-01-01T03:05:00Z',
      '2026-01-01T03:10:00Z',
      '2026-01-01T03:11:00Z',
      '2026-01-01T03:12:00Z',
      '2026-01-02T03:05:00Z',
    ]);
    // `N/step` runs from N to the field's maximum.
    assert.deepEqual(activations('50/3 * * * *', 'UTC', '2026-01-01T00:00:00Z', 5), [
      '2026-01-01T00:50:00Z',
      '2026-01-01T00:53:00Z',
      '2026-01-01T00:56:00Z',
      '2026-01-01T00:59:00Z',
      '2026-01-01T01:50:00Z',
    ]);
    assert.deepEqual(activations('0 0 1-10/4 * *', 'UTC', '2026-01-01T00:00:00Z', 3), [
      '2026-01-05T00:00:00Z',
      '2026-01-09T00:00:00Z',
      '2026-02-01T00:00:00Z',
    ]);
  });

  it('month and day names, in any case', () => {
    assert.deepEqual(activations('0 12 * jan-FEB mon,Fri', 'UTC', '2026-02-20T13:00:00Z', 3), [
      '2026-02-23T12:00:00Z',
      '2026-02-27T12:00:00Z',
      '2027-01-01T12:00:00Z',
    ]);
  });

  it('is strictly after the given time, from the next whole second', () => {
    assert.deepEqual(activations('* * * * *', 'UTC', '2026-01-01T12:00:00.500Z', 2), [
      '2026-01-01T12:01:00Z',
      '2026-01-01T12:02:00Z',
    ]);
    assert.deepEqual(activations('0 12 * * *', 'UTC', '2026-01-01T12:00:00Z', 1), ['2026-01-02T12:00:00Z']);
  });
});

describe('CronSchedule.next: day of month and day of week', () => {
  it('with both restricted, a day matching either fires (Vixie cron)', () => {
    // Fridays, and the 13th (a Tuesday in January 2026).
    assert.deepEqual(activations('0 0 13 * 5', 'UTC', '2026-01-01T00:00:00Z', 5), [
      '2026-01-02T00:00:00Z',
      '2026-01-09T00:00:00Z',
      '2026-01-13T00:00:00Z',
      '2026-01-16T00:00:00Z',
      '2026-01-23T00:00:00Z',
    ]);
    // Odd days, and Fridays: `*/2` is a step, not a star.
    assert.deepEqual(activations('0 0 */2 * fri', 'UTC', '2026-01-01T00:00:00Z', 5), [
      '2026-01-02T00:00:00Z',
      '2026-01-03T00:00:00Z',
      '2026-01-05T00:00:00Z',
      '2026-01-07T00:00:00Z',
      '2026-01-09T00:00:00Z',
    ]);
    // 1-31 restricts nothing but is not a star: every day is "the 1st to the 31st, or a Friday".
    assert.deepEqual(activations('0 0 1-31 * 5', 'UTC', '2026-01-01T00:00:00Z', 2), [
      '2026-01-02T00:00:00Z',
      '2026-01-03T00:00:00Z',
    ]);
  });

  it('with either a star (or */1, or ?), a day must match both', () => {
    for (const cron of ['0 0 * * 5', '0 0 */1 * 5', '0 0 ? * FRI']) {
      assert.deepEqual(
        activations(cron, 'UTC', '2026-01-01T00:00:00Z', 2),
        ['2026-01-02T00:00:00Z', '2026-01-09T00:00:00Z'],
        cron,
      );
    }
    assert.deepEqual(activations('0 0 13 * *', 'UTC', '2026-01-01T00:00:00Z', 2), [
      '2026-01-13T00:00:00Z',
      '2026-02-13T00:00:00Z',
    ]);
  });
});

describe('CronSchedule.next: descriptors', () => {
  it('@yearly, @monthly, @weekly (Sundays), @daily, @hourly, at second 0', () => {
    const from = '2026-01-01T00:30:00Z';
    assert.deepEqual(activations('@yearly', 'UTC', from, 1), ['2027-01-01T00:00:00Z']);
    assert.deepEqual(activations('@annually', 'UTC', from, 1), ['2027-01-01T00:00:00Z']);
    assert.deepEqual(activations('@monthly', 'UTC', from, 1), ['2026-02-01T00:00:00Z']);
    assert.deepEqual(activations('@weekly', 'UTC', from, 2), [
      '2026-01-04T00:00:00Z',
      '2026-01-11T00:00:00Z',
    ]);
    assert.deepEqual(activations('@daily', 'UTC', from, 1), ['2026-01-02T00:00:00Z']);
    assert.deepEqual(activations('@midnight', 'UTC', from, 1), ['2026-01-02T00:00:00Z']);
    assert.deepEqual(activations('@hourly', 'UTC', from, 2), [
      '2026-01-01T01:00:00Z',
      '2026-01-01T02:00:00Z',
    ]);
  });

  it('@daily in a zone is its midnight, which moves with DST', () => {
    assert.deepEqual(activations('@daily', 'America/Denver', '2026-03-07T12:00:00Z', 2), [
      '2026-03-08T07:00:00Z', // MST
      '2026-03-09T06:00:00Z', // MDT
    ]);
  });

  it('@every counts from the time given, in whole seconds, whatever the zone', () => {
    assert.deepEqual(activations('@every 90m', 'Europe/Berlin', '2026-01-01T12:00:00.500Z', 2), [
      '2026-01-01T13:30:00Z',
      '2026-01-01T15:00:00Z',
    ]);
    assert.deepEqual(activations('@every 1.5s', 'UTC', '2026-01-01T12:00:00Z', 2), [
      '2026-01-01T12:00:01Z',
      '2026-01-01T12:00:02Z',
    ]);
    assert.deepEqual(activations('@every 10ms', 'UTC', '2026-01-01T12:00:00Z', 1), ['2026-01-01T12:00:01Z']);
  });
});

describe('CronSchedule.next: daylight saving time', () => {
  it('America/Denver: a time in the spring-forward gap does not fire that day', () => {
    // 2026-03-08 02:00 MST → 03:00 MDT.
    assert.deepEqual(activations('30 2 * * *', 'America/Denver', '2026-03-06T12:00:00Z', 3), [
      '2026-03-07T09:30:00Z', // 02:30 MST
      '2026-03-09T08:30:00Z', // 02:30 MDT
      '2026-03-10T08:30:00Z',
    ]);
  });

  it('America/Denver: a time in the fall-back overlap fires at both occurrences', () => {
    // 2026-11-01 02:00 MDT → 01:00 MST: 01:30 happens at 07:30Z and 08:30Z.
    assert.deepEqual(activations('30 1 * * *', 'America/Denver', '2026-10-30T12:00:00Z', 4), [
      '2026-10-31T07:30:00Z',
      '2026-11-01T07:30:00Z',
      '2026-11-01T08:30:00Z',
      '2026-11-02T08:30:00Z',
    ]);
    assert.deepEqual(activations('0 * * * *', 'America/Denver', '2026-11-01T06:30:00Z', 3), [
      '2026-11-01T07:00:00Z', // 01:00 MDT
      '2026-11-01T08:00:00Z', // 01:00 MST
      '2026-11-01T09:00:00Z', // 02:00 MST
    ]);
  });

  it('Europe/Berlin: the same on its side of UTC', () => {
    // 2026-03-29 02:00 CET → 03:00 CEST.
    assert.deepEqual(activations('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 2), [
      '2026-03-28T01:30:00Z',
      '2026-03-30T00:30:00Z',
    ]);
    assert.deepEqual(activations('0 * * * *', 'Europe/Berlin', '2026-03-28T22:30:00Z', 3), [
      '2026-03-28T23:00:00Z', // 00:00 CET
      '2026-03-29T00:00:00Z', // 01:00 CET
      '2026-03-29T01:00:00Z', // 03:00 CEST
    ]);
    // 2026-10-25 03:00 CEST → 02:00 CET: 02:30 happens at 00:30Z and 01:30Z.
    assert.deepEqual(activations('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', 4), [
      '2026-10-24T00:30:00Z',
      '2026-10-25T00:30:00Z',
      '2026-10-25T01:30:00Z',
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('America/Santiago: a day without midnight starts at its first hour', () => {
    // 2026-09-06 00:00 -04 → 01:00 -03. time.Date(…, 6, 0, 0, 0) lands on 23:00 on the 5th, a Saturday;
    // robfig moves it forward to 01:00 on Sunday the 6th.
    assert.deepEqual(activations('0 1 * * sun', 'America/Santiago', '2026-08-30T05:00:00Z', 2), [
      '2026-09-06T04:00:00Z',
      '2026-09-13T04:00:00Z',
    ]);
    // Midnight itself does not exist that day, so @daily skips it.
    assert.deepEqual(activations('@daily', 'America/Santiago', '2026-09-05T16:00:00Z', 1), [
      '2026-09-07T03:00:00Z',
    ]);
  });
});

describe('CronSchedule.next: dates that come rarely or never', () => {
  it('finds Feb 29 eight years away across 2100', () => {
    assert.deepEqual(activations('0 0 29 2 *', 'UTC', '2096-03-01T00:00:00Z', 1), ['2104-02-29T00:00:00Z']);
    assert.deepEqual(activations('0 0 29 2 *', 'UTC', '2024-03-01T00:00:00Z', 1), ['2028-02-29T00:00:00Z']);
  });

  it("answers Go's zero time for dates that never come, and for a field that allows nothing", () => {
    for (const cron of ['0 0 31 2 *', '0 0 31 4,6,9,11 *', ', * * * *']) {
      assert.equal(cronParse(cron, 'UTC').next(at('2024-01-01T00:00:00Z')), ZERO_TIME, cron);
    }
    assert.equal(iso(ZERO_TIME), '0001-01-01T00:00:00Z');
  });
});
