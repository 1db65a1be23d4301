import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCronSyntax } from './cron.ts';

describe('checkCronSyntax (robfig/cron, five fields and descriptors)', () => {
  for (const spec of [
    '* * * * *',
    '0 2 * * 1-5',
    '*/15 0-6 1,15 jan-mar MON',
    '0 0 ? * sun',
    '@daily',
    '@every 1h30m',
  ]) {
    it(`accepts ${spec}`, () => checkCronSyntax(spec));
  }
  const invalid: [string, string][] = [
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['61 * * * *', 'end of range (61) above maximum (59): 61'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every 1d', 'failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"'],
  ];
  for (const [spec, message] of invalid) {
    it(`rejects ${JSON.stringify(spec)}`, () => assert.throws(() => checkCronSyntax(spec), { message }));
  }
});
