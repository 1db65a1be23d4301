import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  failureBackoffMs,
  MAX_FAILURE_BACKOFF_MS,
  MIN_FAILURE_BACKOFF_MS,
  remainingBackoffMs,
  renewalTime,
  renewBeforeMs,
} from './renewal.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const notBefore = new Date('2026-01-01T00:00:00Z');
const after = (ms: number) => new Date(notBefore.getTime() + ms);

describe('renewBeforeMs', () => {
  it('is a third of the lifetime by default', () => {
    assert.equal(renewBeforeMs(90 * DAY, {}), 30 * DAY);
  });

  it('takes spec.renewBefore when positive and shorter than the lifetime', () => {
    assert.equal(renewBeforeMs(90 * DAY, { renewBefore: '360h' }), 15 * DAY);
    assert.equal(renewBeforeMs(HOUR, { renewBefore: '59m55s' }), 59 * MINUTE + 55 * SECOND);
  });

  it('ignores a renewBefore as long as the lifetime or longer', () => {
    assert.equal(renewBeforeMs(HOUR, { renewBefore: '1h' }), HOUR / 3);
    assert.equal(renewBeforeMs(HOUR, { renewBefore: '2h' }), HOUR / 3);
  });

  it('takes renewBeforePercentage in (0, 100) when renewBefore does not apply', () => {
    assert.equal(renewBeforeMs(100 * DAY, { renewBeforePercentage: 25 }), 25 * DAY);
    assert.equal(renewBeforeMs(100 * DAY, { renewBeforePercentage: 0 }), (100 * DAY) / 3);
    assert.equal(renewBeforeMs(100 * DAY, { renewBeforePercentage: 100 }), (100 * DAY) / 3);
    assert.equal(renewBeforeMs(HOUR, { renewBefore: '2h', renewBeforePercentage: 50 }), HOUR / 2);
  });

  it('prefers renewBefore over the percentage', () => {
    assert.equal(renewBeforeMs(100 * DAY, { renewBefore: '24h', renewBeforePercentage: 50 }), DAY);
  });

  it('treats an unparsable renewBefore as unset', () => {
    assert.equal(renewBeforeMs(90 * DAY, { renewBefore: 'soon' }), 30 * DAY);
  });
});

describe('renewalTime', () => {
  it('renews 2/3 through the actual lifetime by default (a 90d certificate 30 days before expiry)', () => {
    assert.deepEqual(renewalTime(notBefore, after(90 * DAY), {}), after(60 * DAY));
  });

  it('measures the lifetime from the certificate, not spec.duration', () => {
    assert.deepEqual(renewalTime(notBefore, after(3 * HOUR), { renewBefore: '2h' }), after(HOUR));
  });

  it('truncates to the second', () => {
    // A lifetime of 1h + 1s: a third is 1200.333… s, so the exact time has a fraction of a second.
    const rt = renewalTime(notBefore, after(HOUR + SECOND), {});
    assert.deepEqual(rt, after(2400 * SECOND));
    const exact = after(HOUR + 500).getTime() - (HOUR + 500) / 3;
    assert.equal(renewalTime(notBefore, after(HOUR + 500), {})!.getTime(), Math.floor(exact / 1000) * 1000);
  });

  it('is undefined when renewal is disabled', () => {
    assert.equal(renewalTime(notBefore, after(DAY), { renewal: { policy: 'Disabled' } }), undefined);
    assert.deepEqual(
      renewalTime(notBefore, after(3 * DAY), { renewal: { policy: 'RenewBefore' } }),
      after(2 * DAY),
    );
  });
});

describe('failure backoff', () => {
  it('doubles from 1h per failed attempt and stops at 32h', () => {
    const table: [number | undefined, number][] = [
      [undefined, HOUR],
      [0, HOUR],
      [1, HOUR],
      [2, 2 * HOUR],
      [3, 4 * HOUR],
      [5, 16 * HOUR],
      [6, 32 * HOUR],
      [7, 32 * HOUR],
      [2000, 32 * HOUR],
    ];
    for (const [attempts, expected] of table)
      assert.equal(failureBackoffMs(attempts), expected, `attempts ${attempts}`);
    assert.equal(MIN_FAILURE_BACKOFF_MS, HOUR);
    assert.equal(MAX_FAILURE_BACKOFF_MS, 32 * HOUR);
  });

  it('counts from status.lastFailureTime', () => {
    const failed = '2026-01-01T00:00:00Z';
    const now = (ms: number) => new Date(Date.parse(failed) + ms);
    assert.equal(remainingBackoffMs(undefined, now(0)), 0);
    assert.equal(remainingBackoffMs({}, now(0)), 0);
    assert.equal(
      remainingBackoffMs({ lastFailureTime: failed, failedIssuanceAttempts: 1 }, now(20 * MINUTE)),
      40 * MINUTE,
    );
    assert.equal(remainingBackoffMs({ lastFailureTime: failed, failedIssuanceAttempts: 1 }, now(HOUR)), 0);
    assert.equal(
      remainingBackoffMs({ lastFailureTime: failed, failedIssuanceAttempts: 3 }, now(HOUR)),
      3 * HOUR,
    );
    assert.equal(remainingBackoffMs({ lastFailureTime: failed }, now(30 * MINUTE)), 30 * MINUTE);
  });
});
