import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance as bundlePerformance } from './bundle-performance.ts';

/**
 * The controller bundle's `performance` (docs/adr/1131): its readings must be those of the global
 * performance.now() it replaces, since queue clocks, timeouts and timings compare them across the code.
 */
describe('the controller bundle performance clock', () => {
  it('reads what performance.now() reads, but for a constant set at the process start', () => {
    // Each sample brackets our reading between two of performance.now(); the tightest brackets
    // bound the offset best, as a preemption inside one only widens that one.
    const samples = Array.from({ length: 200 }, () => {
      const before = performance.now();
      const ours = bundlePerformance.now();
      const after = performance.now();
      return { offset: ours - (before + after) / 2, width: after - before };
    })
      .sort((a, b) => a.width - b.width)
      .slice(0, 20);
    // The constant is the time Node's start spent between its two origins (uptime's and timeOrigin's):
    // about a millisecond on a quiet machine, 7.5 ms once on a loaded CI runner. A wrong unit or origin
    // would be seconds off.
    for (const { offset } of samples)
      assert.ok(Math.abs(offset) < 250, `${offset} ms from performance.now()`);
    // A constant: the two clocks tick together, within the brackets' widths.
    const offsets = samples.map((s) => s.offset);
    const slack = Math.max(...samples.map((s) => s.width));
    assert.ok(Math.max(...offsets) - Math.min(...offsets) <= slack + 0.05, `offsets ${offsets.join(', ')}`);
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
    // libuv schedules the timer from its loop time, cached before this test's readings: it may fire a
    // little early by our clock. The wall clock's milliseconds and a preemption between two reads
    // leave a few more out of line on a loaded machine.
    assert.ok(elapsed >= 45, `${elapsed} ms for a 50 ms timer`);
    assert.ok(Math.abs(elapsed - (Date.now() - wallStart)) < 20, `${elapsed} ms against the wall clock`);
  });
});
