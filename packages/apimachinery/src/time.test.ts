import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoTimeString, formatMicroTime, formatTime } from './time.ts';

const at = (iso: string) => new Date(iso);

describe('formatTime (metav1.Time)', () => {
  it('writes RFC 3339 in UTC at whole seconds, dropping the milliseconds', () => {
    assert.equal(formatTime(at('2026-01-02T03:04:05Z')), '2026-01-02T03:04:05Z');
    assert.equal(formatTime(at('2026-01-02T03:04:05.999Z')), '2026-01-02T03:04:05Z');
    assert.equal(formatTime(at('2026-01-02T05:04:05+02:00')), '2026-01-02T03:04:05Z');
    assert.equal(formatTime(new Date(0)), '1970-01-01T00:00:00Z');
  });

  it('truncates times before 1970 to the second below, not towards zero', () => {
    assert.equal(formatTime(at('1969-12-31T23:59:59.500Z')), '1969-12-31T23:59:59Z');
    assert.equal(formatTime(at('1949-12-31T23:59:59.001Z')), '1949-12-31T23:59:59Z');
  });

  it('answers each second rightly however many seconds it has remembered', () => {
    const base = Date.UTC(2030, 0, 1);
    for (let i = 0; i < 3000; i += 7) {
      const expected = `${new Date(base + i * 1000).toISOString().slice(0, 19)}Z`;
      assert.equal(formatTime(new Date(base + i * 1000 + (i % 1000))), expected);
      assert.equal(formatTime(new Date(base + i * 1000)), expected);
    }
    assert.equal(formatTime(new Date(base)), '2030-01-01T00:00:00Z');
  });

  it('throws for an invalid date, as toISOString does', () => {
    assert.throws(() => formatTime(new Date(Number.NaN)), RangeError);
    assert.throws(() => formatTime(new Date(Number.NaN)), RangeError);
  });
});

describe('formatMicroTime (metav1.MicroTime)', () => {
  it('writes six fractional digits, the last three zeros for a Date’s milliseconds', () => {
    assert.equal(
      formatMicroTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))),
      '2026-01-02T03:04:05.678000Z',
    );
    assert.equal(formatMicroTime(at('2024-01-01T00:00:00Z')), '2024-01-01T00:00:00.000000Z');
    assert.equal(formatMicroTime(at('2024-01-01T00:00:00.250Z')), '2024-01-01T00:00:00.250000Z');
  });

  it('writes the given microsecond of the second in full when the caller has it', () => {
    assert.equal(formatMicroTime(at('2024-01-01T01:00:00Z'), 123_456), '2024-01-01T01:00:00.123456Z');
    assert.equal(formatMicroTime(at('2024-01-01T00:00:00Z'), 5), '2024-01-01T00:00:00.000005Z');
    assert.equal(formatMicroTime(at('2024-01-01T00:00:05Z'), 0), '2024-01-01T00:00:05.000000Z');
  });
});

describe('formatGoTimeString (time.Time.String)', () => {
  it('prints UTC times as Go does', () => {
    assert.equal(formatGoTimeString(at('2026-01-02T03:04:05Z')), '2026-01-02 03:04:05 +0000 UTC');
    assert.equal(formatGoTimeString(at('2026-01-02T03:04:05.5Z')), '2026-01-02 03:04:05.5 +0000 UTC');
    assert.equal(formatGoTimeString(at('2026-01-02T03:04:05.120Z')), '2026-01-02 03:04:05.12 +0000 UTC');
  });
});
