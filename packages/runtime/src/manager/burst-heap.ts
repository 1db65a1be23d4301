import { setFlagsFromString } from 'node:v8';

/**
 * How V8 sizes the old generation while a burst of reconciles runs, in a process started with
 * `--optimize-for-size` (as `certkit controller` is deployed: deploy/deployment.yaml). Why:
 * docs/adr/1190-old-generation-growth-during-a-burst.md.
 *
 * `--optimize-for-size` makes every incremental mark-compact a memory-reducing one (V8's
 * `GCFlagsForIncrementalMarking` asks `ShouldOptimizeForMemoryUsage`, which reads the flag each time), and after
 * a memory-reducing collection V8 lets the old generation grow by its minimal factor, 1.1, or 8 MB, whichever is
 * more. So the heap is marked (and compacted) again after every ~8 MB promoted, whatever its size: at 10,000
 * Certificates the controller marked ~50 MB of live heap some 200 times during issuance, ~5 times as much
 * marking per Certificate as at 2,000. `--heap-growing-percent` (read by V8's heap controller each time it
 * sets the next limit) overrides that factor, so each collection buys room in proportion to what it marked;
 * and a collection that does not reduce memory neither compacts every page nor flushes bytecode that ran a
 * few seconds ago.
 *
 * A burst runs with `BURST_HEAP_FLAGS`; its end (`ManagerOptions.afterBurst`) puts `QUIET_HEAP_FLAGS` back,
 * before the release collection that gives the burst's memory back (docs/adr/1141). Nothing changes while the
 * controller idles, and nothing in a process started without `--optimize-for-size`.
 */
export const BURST_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=30'];

/** What a process started with `--optimize-for-size` runs with outside a burst: V8's own defaults back. */
export const QUIET_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=0'];

let relaxed = false;

/** Whether the node command line asks V8 to optimize for size (then a burst may relax it). */
function startedOptimizingForSize(execArgv: readonly string[]): boolean {
  return execArgv.includes('--optimize-for-size') || execArgv.includes('--optimize_for_size');
}

/**
 * At a burst's start: lets the old generation grow in proportion to its size, without memory-reducing
 * collections. Returns whether it changed anything (false when already relaxed, or in a process not started
 * with `--optimize-for-size`). `execArgv`: the process's node flags.
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

/** Whether a burst is running with `BURST_HEAP_FLAGS`. */
export function heapRelaxedForBurst(): boolean {
  return relaxed;
}
