import type { MetricsRegistry } from '@certkit/apimachinery';
import type { Storage } from './types.ts';

/**
 * The store's group commits, read at scrape time: how many, how many writes they carried and how long the
 * writer spent on them. Writes per group is what a commit's fixed cost (an fsync, two thread wake-ups) is
 * shared by; a backend without group commits (etcd, whose own metrics tell this) registers nothing.
 */
export function registerStorageMetrics(metrics: MetricsRegistry, storage: Storage): void {
  const stats = storage.commitStats?.bind(storage);
  if (stats === undefined) return;
  metrics.counterFunc(
    'certkit_storage_commit_groups_total',
    'Group commits of the SQLite store: transactions of one or more writes, one fsync each.',
    () => [[{}, stats().groups]],
  );
  metrics.counterFunc(
    'certkit_storage_commit_writes_total',
    'Writes carried by the group commits of the SQLite store.',
    () => [[{}, stats().writes]],
  );
  metrics.counterFunc(
    'certkit_storage_commit_seconds_total',
    "Time from handing a group to the SQLite store's writer to its answer, summed over groups.",
    () => [[{}, stats().commitSeconds]],
  );
}
