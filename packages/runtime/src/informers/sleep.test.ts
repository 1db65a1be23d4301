import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from './backoff.ts';

/** The abortable wait the reflector's backoff and the leader elector's retry loop share. */
describe('sleep', () => {
  it('resolves true once the full time has passed', async () => {
    const start = performance.now();
    assert.equal(await sleep(30), true);
    assert.ok(performance.now() - start >= 25);
  });

  it('resolves false at once for a signal already aborted', async () => {
    const start = performance.now();
    assert.equal(await sleep(10_000, AbortSignal.abort()), false);
    assert.ok(performance.now() - start < 1000);
  });

  it('resolves false, without waiting out the time, when the signal aborts meanwhile', async () => {
    const controller = new AbortController();
    const start = performance.now();
    const waiting = sleep(10_000, controller.signal);
    setTimeout(() => controller.abort(), 20);
    assert.equal(await waiting, false);
    assert.ok(performance.now() - start < 5000);
  });
});
