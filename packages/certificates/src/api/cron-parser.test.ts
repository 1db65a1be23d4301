import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronParse, parseCron } from './cron-parser.ts';
import { activations } from '@certkit/testenv/cert-manager/cron';

describe('parseCron (robfig/cron, Minute | Hour | Dom | Month | Dow | Descriptor)', () => {
  const invalid: [string, string][] = [
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['0 0 * * * *', 'expected exactly 5 fields, found 6: [0 0 * * * *]'],
    ['61 * * * *', 'end of range (61) above maximum (59): 61'],
    ['* 24 * * *', 'end of range (24) above maximum (23): 24'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * 13 *', 'end of range (13) above maximum (12): 13'],
    // Day of week is 0–6: 7 is not Sunday here.
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['* * * * monday', 'failed to parse int from monday: strconv.Atoi: parsing "monday": invalid syntax'],
    ['*/-1 * * * *', 'negative number (-1) not allowed: -1'],
    [
      '99999999999999999999 * * * *',
      'failed to parse int from 99999999999999999999: strconv.Atoi: parsing "99999999999999999999": value out of range',
    ],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every 1d', 'failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"'],
    ['CRON_TZ=UTC', 'expected timezone prefix to be followed by a cron spec: CRON_TZ=UTC'],
    ['TZ=Mars/Olympus 0 * * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
    ['TZ=europe/berlin 0 * * * *', 'provided bad location europe/berlin: unknown time zone europe/berlin'],
  ];
  for (const [spec, message] of invalid) {
    it(`rejects ${JSON.stringify(spec)}: ${message}`, () =>
      assert.throws(() => parseCron(spec), { message }));
  }

  for (const spec of [
    '*/15 0-6 1,15 jan-mar MON',
    '0 0 ? * sun',
    '0 0 * * SUN-sat',
    '+5 007 * * *',
    '0 0 1,,15 * *',
    '@daily',
    '@every 1h30m',
    'TZ=Europe/Berlin 0 2 * * *',
    'CRON_TZ=Local @weekly',
  ]) {
    it(`accepts ${JSON.stringify(spec)}`, () => assert.equal(typeof parseCron(spec).next, 'function'));
  }
});

describe('cronParse (util.CronParse)', () => {
  it("wraps robfig's error with the expression", () => {
    assert.throws(() => cronParse('0 25 * * *', 'UTC'), {
      message: "failed to parse cron spec '0 25 * * *': end of range (25) above maximum (23): 25",
    });
    assert.throws(() => cronParse('@daily', 'Mars/Olympus'), {
      message:
        "failed to parse cron spec '@daily': provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
    });
  });

  it('passes the zone as a CRON_TZ prefix, so a zone of its own in the expression is one field too many', () => {
    assert.equal(typeof cronParse('TZ=Europe/Berlin 0 10 * * *', '').next, 'function');
    assert.throws(() => cronParse('TZ=Europe/Berlin 0 10 * * *', 'UTC'), {
      message:
        "failed to parse cron spec 'TZ=Europe/Berlin 0 10 * * *': expected exactly 5 fields, found 6: [TZ=Europe/Berlin 0 10 * * *]",
    });
    // An empty expression with a zone is no longer "empty".
    assert.throws(() => cronParse('', 'UTC'), {
      message: "failed to parse cron spec '': expected exactly 5 fields, found 0: []",
    });
    assert.throws(() => cronParse('', ''), { message: "failed to parse cron spec '': empty spec string" });
  });

  it('reads the expression in the zone, and without one (Local) in UTC', () => {
    assert.deepEqual(activations('0 10 * * *', 'America/Denver', '2026-01-01T00:00:00Z', 1), [
      '2026-01-01T17:00:00Z',
    ]);
    assert.deepEqual(activations('0 10 * * *', 'Local', '2026-01-01T00:00:00Z', 1), ['2026-01-01T10:00:00Z']);
    assert.deepEqual(activations('0 10 * * *', '', '2026-01-01T00:00:00Z', 1), ['2026-01-01T10:00:00Z']);
    assert.deepEqual(activations('TZ=Asia/Tokyo 0 10 * * *', '', '2026-01-01T00:00:00Z', 1), [
      '2026-01-01T01:00:00Z',
    ]);
  });
});
