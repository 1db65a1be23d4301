import { setFlagsFromString } from 'node:v8';

let enabled = false;

/**
 * What turns them on: Maglev's function filter back to every function, then TurboFan.
 *
 * Why Maglev is held back by its filter (`--maglev-filter=-*`, no function) and not `--no-maglev`: V8 sets
 * Maglev up when the isolate starts, and only if `--maglev` is on then. A process started with `--no-maglev`
 * and given `--maglev` later compiles with Maglev synchronously on the main thread, and tiers on to TurboFan
 * far sooner (ten times as many TurboFan compilations in bench:issuance, ~35% more controller CPU per
 * Certificate; docs/adr/1133). With Maglev on and its filter matching nothing, V8 decides at each tier-up
 * check that the function does not pass the filter and, with TurboFan off, optimises nothing; once the filter
 * matches again, tiering is as in a process started with the defaults (`optimizing-compilers.e2e.test.ts`
 * compares the compilations V8 reports). TurboFan has no such set-up: `--turbofan` later is the same as at
 * start.
 */
export const OPTIMIZING_COMPILER_FLAGS: readonly string[] = ['--maglev-filter=*', '--turbofan'];

/** The node flags that start a process with both held back, for `enableOptimizingCompilers` to release. */
export const DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS: readonly string[] = [
  '--no-turbofan',
  '--maglev-filter=-*',
];

/**
 * Turns V8's optimizing compilers, Maglev and TurboFan, on in a process started with them held back
 * (`--no-turbofan --maglev-filter=-*`, as `certkit controller` is deployed: deploy/deployment.yaml).
 *
 * Why start without them: an idle controller on an empty cluster runs them only on Node's and its own
 * start-up code, and once they have run their machine code in the node binary stays paged in and their
 * compilation zones stay allocated: ~4 MB of an idle controller's RSS (docs/adr/1133). Under load they are
 * worth far more than that (without them the controller's main thread needs ~20% more CPU per Certificate,
 * docs/adr/1113), so the controller turns them on once it first has work (`ManagerOptions.onFirstWork`).
 * V8 reads both flags each time it decides whether to tier a hot function up, so from then on code is
 * optimised as in a process started with the defaults: what ran before is interpreted or baseline
 * (Sparkplug) code with its feedback collected, and is optimised when it gets hot again.
 *
 * Only in a process started with exactly that (`DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS` among its node
 * flags): a process started with the defaults has them on already, and one started with them off for good
 * (`--no-opt --no-maglev`, the memory-over-speed choice of docs/adr/1113) keeps them off. Not done in a
 * process without a JIT (`--jitless`, `--lite-mode`), where V8 would crash optimising code it
 * cannot allocate executable memory for; V8 leaves WebAssembly out of such a process, which is how it shows.
 *
 * Returns whether this call turned them on; later calls do nothing. `execArgv`: the process's node flags.
 */
export function enableOptimizingCompilers(execArgv: readonly string[] = process.execArgv): boolean {
  if (enabled || !startedHeldBack(execArgv) || !hasJit()) return false;
  enabled = true;
  for (const flag of OPTIMIZING_COMPILER_FLAGS) setFlagsFromString(flag);
  return true;
}

/** Whether the node command line holds the compilers back for this module to release. */
function startedHeldBack(execArgv: readonly string[]): boolean {
  return DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS.every((flag) => execArgv.includes(flag));
}

/** False under `--jitless` (which `--lite-mode` implies): V8 then turns WebAssembly off (`--no-expose-wasm`). */
function hasJit(): boolean {
  return 'WebAssembly' in globalThis;
}

/**
 * The node command-line flags this process was started with that switch V8's optimizing compilers (for the
 * log line that says they were turned on, so an operator sees what the process started with).
 */
export function optimizingCompilerFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return execArgv.filter((a) =>
    /^--(no[-_]?)?(maglev|turbofan|opt|jitless|lite[-_]mode|maglev[-_]filter)(=|$)/.test(a),
  );
}
