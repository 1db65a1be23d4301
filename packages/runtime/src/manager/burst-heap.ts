import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow between full collections while a burst of reconciles runs, in a
 * process started with `--optimize-for-size` (as `certkit controller` is deployed: deploy/deployment.yaml).
 * Why: docs/adr/1190-old-generation-grown-by-30-percent-during-a-burst.md.
 *
 * Under `--optimize-for-size` every incremental mark-compact is a memory-reducing one (V8's
 * `GCFlagsForIncrementalMarking` asks `ShouldOptimizeForMemoryUsage`, which reads the flag each time), and
 * after a memory-reducing collection V8 sets the next limit with its minimal growing factor, 1.1, or 8 MB
 * more, whichever is larger. Below 80 MB of live heap that is a fixed 8 MB: the whole heap is marked again
 * after every ~8 MB promoted, so the marking per Certificate grows with the number of Certificates cached
 * (at 10,000 the controller ran ~4 times as many full collections as at 2,000, each over twice the heap).
 * `--heap-growing-percent` (read by V8's heap controller each time it sets a limit, overriding the factor)
 * makes the room a collection buys proportional to what it marked, so the marking per Certificate stays
 * flat. The collections still reduce memory (compact, give pages back): only their spacing changes.
 *
 * A burst runs with `BURST_HEAP_FLAGS`; its end (`ManagerOptions.afterBurst`) puts `QUIET_HEAP_FLAGS` back
 * before the release collection that gives the burst's memory back (docs/adr/1141). Nothing changes while the
 * controller idles, and nothing in a process started without `--optimize-for-size`, whose heap V8 grows by
 * its own dynamic factor (up to 4) anyway.
 */
export const BURST_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=30'];

/** Outside a burst: V8's own growing factor (0 turns the override off, V8's default). */
export const QUIET_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=0'];

let relaxed = false;

/**
 * Whether the node command line asks V8 to optimize for size (then a burst may relax it), and leaves the
 * growing factor to V8: an operator's own `--heap-growing-percent` is never overridden.
 */
function startedOptimizingForSize(execArgv: readonly string[]): boolean {
  return (
    (execArgv.includes('--optimize-for-size') || execArgv.includes('--optimize_for_size')) &&
    !execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))
  );
}

/**
 * At a burst's start: lets the old generation grow in proportion to its size. Returns whether it changed
 * anything (false when already relaxed, or in a process not started with `--optimize-for-size`, or started
 * with a growing percent of its own). `execArgv`: the process's node flags.
 */
export function relaxHeapForBurst(execArgv: readonly string[] = process.execArgv): boolean {
  if (relaxed || !startedOptimizingForSize(execArgv)) return false;
  relaxed = true;
  for (const flag of BURST_HEAP_FLAGS) setFlagsFromString(flag);
  return true;
}

/** At a burst's end: the flags the process started with. Returns whether a burst had relaxed them. */
export function restoreHeapAfterBurst(): boolean {
  if (!relaxed) return false;
  relaxed = false;
  for (const flag of QUIET_HEAP_FLAGS) setFlagsFromString(flag);
  return true;
}
