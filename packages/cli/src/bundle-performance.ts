/**
 * The `performance` the controller bundle's code sees (scripts/bundle-controller.ts injects it for the global;
 * docs/adr/1131-lazy-built-in-modules-in-the-controller-bundle.md).
 *
 * certkit reads the global `performance` only for `performance.now()` (queue clocks, request and reconcile
 * timings, connection idle deadlines). Node defines that global as a lazy getter that loads all of
 * `node:perf_hooks` on first access: the event loop delay histogram, timerify, user and resource timing,
 * ~0.7 MB of an idle controller's RSS for one clock. This one reads the same monotonic clock
 * (`process.hrtime`) and counts from the process's start as `performance.now()` does: its readings are those
 * of `performance.now()` but for a constant, about a millisecond and more on a loaded machine (Node takes
 * `process.uptime()`'s origin and `performance.timeOrigin` at two points of its start), which no caller
 * sees, as each compares readings of one clock.
 */

/** Nanoseconds of process.hrtime at which performance.now() reads 0 (the process's time origin). */
const ORIGIN_NS = process.hrtime.bigint() - BigInt(Math.round(process.uptime() * 1e9));

export const performance = {
  /** Milliseconds since the process started, monotonic, with sub-millisecond digits. */
  now(): number {
    return Number(process.hrtime.bigint() - ORIGIN_NS) / 1e6;
  },
};
