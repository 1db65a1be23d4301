import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoDuration, HOUR, MINUTE, parseGoDuration, SECOND, toMilliseconds } from './duration.ts';

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
