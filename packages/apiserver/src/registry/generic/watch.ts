/** Watches from storage: a storage watch filtered by the selectors and turned into the sink's events. */

import { type ListOptions, newExpired, newInternalError, type StoredObject } from '@certkit/apimachinery';
import { CompactedError, type StorageEvent } from '../../storage/types.ts';
import { listPrefix } from '../resource.ts';
import type { WatchSink } from './types.ts';
import type { ObjectStore } from './store.ts';
import { checkFieldSelector, matcher } from './selectors.ts';

/**
 * Streams changes as watch events. Without a resourceVersion (or with sendInitialEvents) it first sends the
 * current objects as ADDED; from resourceVersion N it sends every change after N, or 410 if N is compacted.
 * Returns a function that stops the watch.
 */
export async function watch(
  store: ObjectStore,
  namespace: string | undefined,
  options: ListOptions,
  sink: WatchSink,
): Promise<() => void> {
  checkFieldSelector(store, options.fieldSelector);
  const matches = matcher(store, options.labelSelector, options.fieldSelector);
  const ns = namespace || options.fieldSelector.requiresExactMatch('metadata.namespace') || undefined;
  const prefix = listPrefix(store.def, ns);
  const rv = options.resourceVersion;
  const initial = options.sendInitialEvents === true || rv === '' || rv === '0';
  let after: number;
  if (initial) {
    const page = await store.storage.range(prefix, {});
    for (const kv of page.kvs) {
      const obj = store.decode(kv.value, kv.modRevision);
      if (!matches(obj)) continue;
      sink.added(obj);
      // At the connection's pace; what changes meanwhile comes from the storage watch from page.revision.
      const backlog = sink.backlog?.();
      if (backlog) await backlog;
    }
    after = page.revision;
    if (options.sendInitialEvents) sink.initialEventsEnd(String(after));
  } else {
    after = Number(rv);
  }
  const watch = store.storage.watch(prefix, after, {
    event: (ev) => dispatch(store, ev, matches, sink),
    error: (err) => {
      if (err instanceof CompactedError) {
        sink.error(newExpired(`too old resource version: ${after} (${err.compactedRevision})`));
      } else {
        sink.error(newInternalError(err.message));
      }
    },
  });
  return () => watch.close();
}

/** Selectors apply to both sides of a change: entering the selection is ADDED, leaving it DELETED. */
export function dispatch(
  store: ObjectStore,
  ev: StorageEvent,
  matches: (obj: StoredObject) => boolean,
  sink: WatchSink,
): void {
  if (ev.type === 'DELETE') {
    const obj = store.decode(ev.value, ev.revision);
    if (matches(obj)) sink.deleted(obj);
    return;
  }
  const obj = store.decode(ev.value, ev.revision);
  const now = matches(obj);
  if (ev.created || ev.prevValue === undefined) {
    if (now) sink.added(obj);
    return;
  }
  const previous = store.decode(ev.prevValue, ev.revision);
  const before = matches(previous);
  if (before && now) sink.modified(obj);
  else if (now) sink.added(obj);
  else if (before) sink.deleted(previous);
}
