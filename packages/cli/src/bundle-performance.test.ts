import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance as bundlePerformance } from './bundle-performance.ts';

/**
 * The controller bundle's `performance` (docs/adr/1131): its readings must be those of the global
 * performance.now() it replaces, since queue clocks, timeouts and timings compare them across the code.
 */
describe('the controller bundle performance clock', () => {
  it('reads what performance.now() reads, but for a constant of a few milliseconds at most', () => {
    const offsets = Array.from({ length: 5 }, () => {
      const before = performance.now();
      const ours = bundlePerformance.now();
      const after = performance.now();
      return ours - (before + after) / 2;
    });
    for (const offset of offsets) assert.ok(Math.abs(offset) < 5, `${offset} ms from performance.now()`);
    // A constant: the two clocks tick together.
    assert.ok(Math.max(...offsets) - Math.min(...offsets) < 0.5, `offsets ${offsets.join(', ')}`);
  });

  it('is monotonic, with sub-millisecond digits, and follows the wall clock over a sleep', async () => {
    const readings = Array.from({ length: 1000 }, () => bundlePerformance.now());
    for (let i = 1; i < readings.length; i++) assert.ok(readings[i] >= readings[i - 1]);
    assert.ok(
      readings.some((r) => !Number.isInteger(r)),
      'fractional milliseconds',
    );
    const start = bundlePerformance.now();
    const wallStart = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    const elapsed = bundlePerformance.now() - start;
    assert.ok(elapsed >= 49, `${elapsed} ms for a 50 ms timer`);
    assert.ok(Math.abs(elapsed - (Date.now() - wallStart)) < 5, `${elapsed} ms against the wall clock`);
  });
});
