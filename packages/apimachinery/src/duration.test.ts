import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatGoDuration,
  fromMilliseconds,
  HOUR,
  MINUTE,
  parseGoDuration,
  SECOND,
  toMilliseconds,
} from './duration.ts';

describe('parseGoDuration', () => {
  const valid: [string, bigint][] = [
    ['0', 0n],
    ['1h', HOUR],
    ['2160h', 2160n * HOUR],
    ['1h30m', 90n * MINUTE],
    ['-1.5h', -90n * MINUTE],
    ['+5m', 5n * MINUTE],
    ['300ms', 300_000_000n],
    ['1.5s', 1_500_000_000n],
    ['.5s', 500_000_000n],
    ['1us', 1000n],
    ['1µs', 1000n],
    ['10ns', 10n],
    ['8760h', 8760n * HOUR],
  ];
  for (const [text, ns] of valid) it(`reads ${text}`, () => assert.equal(parseGoDuration(text), ns));

  const invalid: [string, string][] = [
    ['', 'time: invalid duration ""'],
    ['1', 'time: missing unit in duration "1"'],
    ['90d', 'time: unknown unit "d" in duration "90d"'],
    ['h', 'time: invalid duration "h"'],
    ['.s', 'time: invalid duration ".s"'],
    ['-', 'time: invalid duration "-"'],
    ['9999999999999999999h', 'time: invalid duration "9999999999999999999h"'],
  ];
  for (const [text, message] of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => assert.throws(() => parseGoDuration(text), { message }));
  }
});

describe('formatGoDuration', () => {
  const cases: [bigint, string][] = [
    [0n, '0s'],
    [HOUR, '1h0m0s'],
    [2160n * HOUR, '2160h0m0s'],
    [5n * MINUTE, '5m0s'],
    [30n * SECOND, '30s'],
    [1_500_000_000n, '1.5s'],
    [90n * MINUTE + 500_000_000n, '1h30m0.5s'],
    [1_500_000n, '1.5ms'],
    [1500n, '1.5µs'],
    [7n, '7ns'],
    [-5n * MINUTE, '-5m0s'],
  ];
  for (const [ns, text] of cases) it(`writes ${text}`, () => assert.equal(formatGoDuration(ns), text));

  it('round-trips and converts to milliseconds', () => {
    assert.equal(formatGoDuration(parseGoDuration('72h3m0.5s')), '72h3m0.5s');
    assert.equal(toMilliseconds(parseGoDuration('2160h')), 90 * 24 * 3600 * 1000);
  });
});

/** What the flag parser and the conformance checks read: whole milliseconds for timers and dates. */
describe('parseGoDuration then toMilliseconds', () => {
  const cases: [string, number][] = [
    ['896h', 896 * 3600_000],
    ['1h30m15s', 5415_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['30s', 30_000],
    ['0', 0],
    ['-1m', -60_000],
    ['1.5ms', 1],
    ['999us', 0],
  ];
  for (const [text, ms] of cases) {
    it(`reads ${text} as ${ms} ms`, () => assert.equal(toMilliseconds(parseGoDuration(text)), ms));
  }
  it('converts back from milliseconds', () => assert.equal(fromMilliseconds(90_000), 90n * SECOND));
});
