import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { trimMalloc } from './malloc-trim.ts';

/**
 * Asks V8 for a full collection that gives memory back: the one it makes on a low-memory notification
 * (`CollectAllAvailableGarbage`: repeated mark-compacts with the reduce-memory flag, which shrinks the
 * young generation, compacts and releases free pages). Node has no public API for it; the gc extension's
 * `last-resort` flavour is that collection. Why and what it gives: docs/adr/1141-memory-given-back-after-a-burst.md.
 *
 * The extension is installed only in contexts created after `--expose-gc` is set, so the function comes
 * from one new context, made at the first call; the main context gets no `gc` global.
 */
type GcExtension = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let gc: GcExtension | undefined;

function gcExtension(): GcExtension {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as GcExtension;
  }
  return gc;
}

/** What one release did: the process's RSS before and after, and the CPU the collection took. */
export interface MemoryRelease {
  rssBeforeBytes: number;
  rssAfterBytes: number;
  cpuMs: number;
  /** Whether glibc's `malloc_trim` ran after the collection (false where `node:ffi` or glibc is missing). */
  mallocTrimmed: boolean;
}

/**
 * Collects all garbage V8 can find, synchronously, then has glibc give back every free page of its arenas
 * (`malloc_trim(0)`, docs/adr/1143): what the collection freed of OpenSSL's objects, and what the burst's
 * buffers left free in the middle of the heap, where `free()` never trims. Costs tens of milliseconds of the
 * main thread (the trim ~10 ms of it): call it
 * when nothing waits, once per burst (`ManagerOptions.afterBurst`), never on a timer.
 */
export function releaseMemory(): MemoryRelease {
  const rssBeforeBytes = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  gcExtension()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const mallocTrimmed = trimMalloc();
  const used = process.cpuUsage(cpu);
  return {
    rssBeforeBytes,
    rssAfterBytes: process.memoryUsage.rss(),
    cpuMs: (used.user + used.system) / 1000,
    mallocTrimmed,
  };
}
