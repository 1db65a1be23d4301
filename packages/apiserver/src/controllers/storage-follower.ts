import { rangeAllPaged } from '../storage/paged-range.ts';
import { CompactedError, type KeyValue, type Storage, type StorageEvent } from '../storage/types.ts';

/**
 * Follows a storage prefix for the server's own controllers (GC, namespaces, CRDs): one initial read, then
 * every change. When the watch breaks (compaction, lost connection) it reads the prefix again and resumes,
 * so a controller sees every key's latest state even if it misses intermediate changes.
 */
export interface FollowerHandlers {
  /** The complete current contents (at start and after every re-read). */
  sync(kvs: KeyValue[], revision: number): void | Promise<void>;
  event(event: StorageEvent): void;
}

const RETRY_MS = 1000;

export function followPrefix(storage: Storage, prefix: string, handlers: FollowerHandlers): { stop(): void } {
  let stopped = false;
  let closeWatch: (() => void) | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  const restart = () => {
    closeWatch?.();
    closeWatch = undefined;
    if (stopped) return;
    retryTimer = setTimeout(() => void start(), RETRY_MS);
    retryTimer.unref();
  };

  const start = async () => {
    try {
      const kvs: KeyValue[] = [];
      const revision = await rangeAllPaged(storage, prefix, (page) => {
        for (const kv of page) kvs.push(kv);
      });
      if (stopped) return;
      await handlers.sync(kvs, revision);
      if (stopped) return;
      const watch = storage.watch(prefix, revision, {
        event: (ev) => handlers.event(ev),
        error: (err) => {
          if (!(err instanceof CompactedError) && stopped) return;
          restart();
        },
      });
      closeWatch = () => watch.close();
    } catch {
      restart();
    }
  };

  void start();
  return {
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      closeWatch?.();
    },
  };
}
