import { setFlagsFromString } from 'node:v8';

let enabled = false;

/**
 * Turns V8's optimizing compilers, Maglev and TurboFan, on in a process started without them
 * (`--no-maglev --no-turbofan`, as `certkit controller` is deployed: deploy/deployment.yaml).
 *
 * Why start without them: an idle controller on an empty cluster runs them only on Node's and its own
 * start-up code, and once they have run their machine code in the node binary stays paged in and their
 * compilation zones stay allocated: ~4 MB of an idle controller's RSS (docs/adr/1133). Under load they are
 * worth far more than that (without them the controller's main thread needs ~20% more CPU per Certificate,
 * docs/adr/1113), so the controller turns them on once it first has work (`ManagerOptions.onFirstWork`).
 * V8 reads both flags each time it decides whether to tier a hot function up, so from then on code is
 * optimised as in a process started with them: what ran before is interpreted or baseline (Sparkplug) code
 * with its feedback collected, and is optimised when it gets hot again.
 *
 * Harmless in a process started with them on (the flags' defaults): setting them again changes nothing.
 * Not done in a process without a JIT (`--jitless`, `--lite-mode`), where V8 would crash optimising code it
 * cannot allocate executable memory for; V8 leaves WebAssembly out of such a process, which is how it shows.
 *
 * Returns whether this call turned them on; later calls do nothing.
 */
export function enableOptimizingCompilers(): boolean {
  if (enabled || !hasJit()) return false;
  enabled = true;
  setFlagsFromString('--maglev');
  setFlagsFromString('--turbofan');
  return true;
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
  return execArgv.filter((a) => /^--(no[-_]?)?(maglev|turbofan|opt|jitless|lite[-_]mode)(=|$)/.test(a));
}
