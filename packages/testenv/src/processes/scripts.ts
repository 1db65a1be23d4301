import { fileURLToPath } from 'node:url';

/**
 * Scripts that tests run as child processes of their own (`node SCRIPT ...`), so that a test can kill or
 * signal a whole process. Their paths are exported here because importing a script would run it.
 */

/** A manager with leader election, printing its transitions as JSON lines (leader-process.ts). */
export const LEADER_PROCESS_SCRIPT = fileURLToPath(new URL('./leader-process.ts', import.meta.url));

/** A manager that is sent SIGTERM mid-reconcile (manager-sigterm.ts). */
export const MANAGER_SIGTERM_SCRIPT = fileURLToPath(new URL('./manager-sigterm.ts', import.meta.url));

/** One informer syncing all Secrets, measuring its heap growth; run with --expose-gc (memory-probe.ts). */
export const MEMORY_PROBE_SCRIPT = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));
