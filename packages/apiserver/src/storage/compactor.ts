/**
 * Periodic compaction, as kube-apiserver does for etcd (--etcd-compaction-interval, 5 min) and kine for its log
 * (--compact-min-retain, 1000 revisions). Only Storage is used, so the same compactor serves every backend.
 */

import type { Storage } from './types.ts';

export interface CompactorOptions {
  /** Time between compactions, in ms (default 5 minutes). */
  intervalMs?: number;
  /** Revisions kept below the current one, so watches that fell a little behind can still resume (default 1000). */
  retainRevisions?: number;
  /** Receives failed compactions (default: console.error); the next tick retries. */
  onError?: (err: unknown) => void;
}

export interface Compactor {
  stop(): void;
}

export function startCompactor(storage: Storage, options: CompactorOptions = {}): Compactor {
  const intervalMs = options.intervalMs ?? 5 * 60_000;
  const retain = Math.max(0, options.retainRevisions ?? 1000);
  const onError = options.onError ?? ((err: unknown) => console.error('storage compaction failed:', err));
  let running = false;
  // Guards against compacting backwards even if the store reports an older watermark (e.g. another client of etcd).
  let highest = 0;

  const tick = async (): Promise<void> => {
    // A slow compaction must not overlap the next tick's.
    if (running) return;
    running = true;
    try {
      const [current, compacted] = await Promise.all([
        storage.currentRevision(),
        storage.compactedRevision(),
      ]);
      const target = current - retain;
      if (target > compacted && target > highest) {
        await storage.compact(target);
        highest = target;
      }
    } catch (err) {
      onError(err);
    } finally {
      running = false;
    }
  };

  const timer = setInterval(() => void tick(), intervalMs); // tick catches its own failures (onError)
  // The compactor alone must not keep the process alive.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
    },
  };
}
