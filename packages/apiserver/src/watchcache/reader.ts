import {
  type ListOptions,
  newExpired,
  newNotFound,
  newTimeout,
  newTooManyRequests,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { listPrefix, objectKey } from '../registry/resource.ts';
import type { ListResult, PagedList, WatchSink } from '../registry/generic/types.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { CacheEvent, CacheEventType, CachedObject, CacheListener, WatchCache } from './cache.ts';
import { eventFrame, type FrameRendering, objectJson, previousAtRevision } from './frames.ts';

/**
 * Reads of one resource, served from its watch cache or from storage by kube-apiserver's rules
 * (cacher/delegator.go, KEP-4568):
 * - get: storage for resourceVersion "" or while the cache is not Ready; the cache otherwise;
 * - list: storage for consistent reads, Exact, continue tokens and "legacy exact" (N with a limit); the cache
 *   for "0" and NotOlderThan when Ready; while Pending, storage only for unselective lists with a limit, and
 *   429 for the rest, as those would be costly from storage. A whole, unselective consistent list as metadata
 *   comes from the cache once it is current, where storage can tell (ConsistentListFromCache, KEP-2340);
 * - watch: the cache when Ready, 429 with Retry-After otherwise: never a request that hangs.
 */

/** How long a read waits for the cache to reach a requested resourceVersion (kube-apiserver's blockTimeout). */
const FRESHNESS_WAIT_MS = 3000;

/**
 * How long a consistent read waits for the cache to reach storage's revision before going to storage: the
 * cache is behind by one dispatch at most, unless the event loop is very busy.
 */
const CONSISTENT_WAIT_MS = 250;

/** A list served from the cache: entries keep their shared serialisations. */
export interface CachedListResult {
  entries: CachedObject[];
  resourceVersion: string;
}

export type ReadRendering = FrameRendering | { kind: 'table' };

function tooManyRequests(cache: WatchCache): StatusError {
  return newTooManyRequests(cache.ready.message(), cache.ready.retryAfterSeconds());
}

function alwaysFromStorage(options: ListOptions): boolean {
  const rv = options.resourceVersion;
  if (options.continue) return true;
  if (options.resourceVersionMatch === 'Exact') return true;
  if (options.resourceVersionMatch === 'NotOlderThan') return false;
  // A consistent read: storage, since our etcd (3.4) cannot confirm the cache is current (no progress requests).
  if (rv === '') return true;
  // "Legacy exact": a resourceVersion N with a limit pages storage at revision N.
  return rv !== '0' && options.limit > 0;
}

export class ResourceReader {
  readonly store: ObjectStore;
  readonly cache: WatchCache | undefined;

  constructor(store: ObjectStore, cache: WatchCache | undefined) {
    this.store = store;
    this.cache = cache;
  }

  private async waitFresh(cache: WatchCache, resourceVersion: string): Promise<void> {
    if (resourceVersion === '' || resourceVersion === '0') return;
    const wanted = Number(resourceVersion);
    if (await cache.waitForRevision(wanted, FRESHNESS_WAIT_MS)) return;
    const err = newTimeout(`Too large resource version: ${wanted}, current: ${cache.revision}`, 1);
    err.status.details!.causes = [
      { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
    ];
    throw err;
  }

  /**
   * A list from storage: a page at a time when it has no limit, since it may be larger than the server
   * should hold per request; with a limit, whole (the client chose its size, as kube-apiserver reads it).
   */
  private fromStorage(namespace: string | undefined, options: ListOptions): Promise<ListResult | PagedList> {
    return options.limit > 0 ? this.store.list(namespace, options) : this.store.listPaged(namespace, options);
  }

  async get(namespace: string | undefined, name: string, resourceVersion: string): Promise<StoredObject> {
    const cache = this.cache;
    if (!cache || resourceVersion === '' || !cache.ready.ready) return this.store.get(namespace, name);
    await this.waitFresh(cache, resourceVersion);
    const entry = cache.get(objectKey(this.store.def, namespace, name));
    if (!entry) throw newNotFound(this.store.def, name);
    return entry.obj;
  }

  /**
   * A list. `consistentFromCache`: the caller renders metadata only, the same from the cache as from storage,
   * so a consistent read may come from the cache (see consistentInCache).
   */
  async list(
    namespace: string | undefined,
    options: ListOptions,
    consistentFromCache = false,
  ): Promise<ListResult | CachedListResult | PagedList> {
    const cache = this.cache;
    if (cache && consistentFromCache && (await this.consistentInCache(cache, options)))
      return this.fromCache(cache, namespace, options);
    if (!cache || alwaysFromStorage(options)) return this.fromStorage(namespace, options);
    if (!cache.ready.ready) {
      const unselective = options.labelSelector.empty && options.fieldSelector.empty;
      if (unselective && options.limit > 0) return this.fromStorage(namespace, options);
      throw tooManyRequests(cache);
    }
    return this.fromCache(cache, namespace, options);
  }

  /**
   * Whether a consistent read (no resourceVersion) can be answered by the cache, as kube-apiserver answers
   * them since 1.31 (KEP-2340, ConsistentListFromCache): when storage's watches report progress on every
   * write, the cache is current once it has reached storage's current revision, which takes at most a
   * dispatch. Only whole, unselective lists: a limit needs storage's continue tokens, and selectors would
   * leave parsed metadata in the cache. Otherwise, or when the cache does not catch up within
   * CONSISTENT_WAIT_MS, storage answers as before.
   */
  private async consistentInCache(cache: WatchCache, options: ListOptions): Promise<boolean> {
    if (options.resourceVersion !== '' || options.continue || options.limit > 0) return false;
    if (!options.labelSelector.empty || !options.fieldSelector.empty) return false;
    if (!this.store.storage.progressOnEveryWrite || !cache.ready.ready) return false;
    const revision = await this.store.storage.currentRevision();
    return (await cache.waitForRevision(revision, CONSISTENT_WAIT_MS)) && cache.ready.ready;
  }

  private async fromCache(
    cache: WatchCache,
    namespace: string | undefined,
    options: ListOptions,
  ): Promise<CachedListResult> {
    this.store.checkFieldSelector(options.fieldSelector);
    await this.waitFresh(cache, options.resourceVersion);
    const matches = entryMatcher(this.store, options);
    const ns = namespace || options.fieldSelector.requiresExactMatch('metadata.namespace') || undefined;
    const name = options.fieldSelector.requiresExactMatch('metadata.name');
    let candidates: CachedObject[];
    if (name !== undefined && (ns || !this.store.def.namespaced)) {
      const entry = cache.get(objectKey(this.store.def, ns, name));
      candidates = entry ? [entry] : [];
    } else {
      candidates = cache.list(this.store.def.namespaced ? ns : undefined);
    }
    // The cache ignores limit, as kube-apiserver's does: the whole list in one response. Without selectors
    // every candidate matches, and the objects need not be parsed to say so.
    const selective = !options.labelSelector.empty || !options.fieldSelector.empty;
    const entries = selective ? candidates.filter(matches) : candidates;
    return { entries, resourceVersion: String(cache.revision) };
  }

  /**
   * Starts a watch. From the cache when there is one: 429 while it is not Ready, the initial events from its
   * contents, then its events, each serialised once for all watchers.
   */
  async watch(
    namespace: string | undefined,
    options: ListOptions,
    rendering: ReadRendering,
    sink: WatchSink,
  ): Promise<() => void> {
    const cache = this.cache;
    if (!cache) return this.store.watch(namespace, options, sink);
    this.store.checkFieldSelector(options.fieldSelector);
    if (!cache.ready.ready) throw tooManyRequests(cache);
    const generation = cache.ready.generation;
    const rv = options.resourceVersion;
    const initial =
      options.sendInitialEvents === true ||
      (options.sendInitialEvents === undefined && (rv === '' || rv === '0'));
    try {
      if (options.sendInitialEvents && rv === '') {
        // "At least as fresh as storage now": wait for the cache to reach storage's current revision.
        await this.waitFresh(cache, String(await this.store.storage.currentRevision()));
      } else if (rv !== '' && rv !== '0' && options.sendInitialEvents) {
        await this.waitFresh(cache, rv);
      }
    } catch (err) {
      // Past admission, as in kube-apiserver: an ERROR event (clients fall back to list and watch), not an HTTP 504.
      sink.error(err as StatusError);
      return () => {};
    }
    // The cache re-initialised while we waited: end at once; the client re-watches (and gets a 429 or a fresh start).
    if (!cache.ready.ready || cache.ready.generation !== generation) {
      sink.end();
      return () => {};
    }
    const watcher = new CacheWatcher(this.store, namespace, options, rendering, sink);
    let after: number;
    if (initial) {
      after = cache.revision;
      const ns = this.store.def.namespaced ? namespace : undefined;
      for (const entry of cache.list(ns)) {
        watcher.initial(entry);
        // A large initial state goes out at the pace of the connection rather than queued whole (beyond the
        // watch's buffer bound the stream was cut off at once); what changes meanwhile is replayed from the
        // history when the watcher subscribes below.
        const backlog = sink.backlog?.();
        if (backlog) await backlog;
      }
      if (!cache.ready.ready || cache.ready.generation !== generation) {
        sink.end();
        return () => {};
      }
      if (options.sendInitialEvents) sink.initialEventsEnd(String(after));
    } else {
      after = Number(rv);
    }
    watcher.after = after;
    if (!cache.subscribe(after, watcher)) {
      sink.error(newExpired(`too old resource version: ${after} (${cache.oldestRevision})`));
      return () => {};
    }
    return () => cache.unsubscribe(watcher);
  }
}

/** Selects cache entries, by their metadata alone when the selectors name nothing else (see Entry). */
function entryMatcher(store: ObjectStore, options: ListOptions): (entry: CachedObject) => boolean {
  const onMetadata = store.metadataMatcher(options.labelSelector, options.fieldSelector);
  if (onMetadata !== undefined) return (entry) => onMetadata(entry.metadata);
  const onObject = store.matcher(options.labelSelector, options.fieldSelector);
  return (entry) => onObject(entry.obj);
}

/** One watcher of the cache: applies its namespace and selectors to each event and writes shared frames. */
class CacheWatcher implements CacheListener {
  after = 0;
  private readonly namespace: string | undefined;
  private readonly matches: (entry: CachedObject) => boolean;
  /** Whether there are selectors: without, everything matches and objects need not be parsed to say so. */
  private readonly selective: boolean;
  private readonly rendering: ReadRendering;
  private readonly sink: WatchSink;

  constructor(
    store: ObjectStore,
    namespace: string | undefined,
    options: ListOptions,
    rendering: ReadRendering,
    sink: WatchSink,
  ) {
    this.namespace = store.def.namespaced
      ? namespace || options.fieldSelector.requiresExactMatch('metadata.namespace')
      : undefined;
    this.matches = entryMatcher(store, options);
    this.selective = !options.labelSelector.empty || !options.fieldSelector.empty;
    this.rendering = rendering;
    this.sink = sink;
    // A namespace is a key prefix: checking the key is cheaper than reading metadata.
    this.prefix = this.namespace ? listPrefix(store.def, this.namespace) : undefined;
  }

  private readonly prefix: string | undefined;

  private selects(entry: CachedObject): boolean {
    return !this.selective || this.matches(entry);
  }

  initial(entry: CachedObject): void {
    if (this.prefix && !entry.key.startsWith(this.prefix)) return;
    if (!this.selects(entry)) return;
    if (this.rendering.kind === 'table') this.sink.added(entry.obj);
    else
      this.sink.frame(
        Buffer.from(`{"type":"ADDED","object":${objectJson(entry, this.rendering)}}\n`),
        String(entry.revision),
      );
  }

  event(event: CacheEvent): void {
    if (event.revision <= this.after) return;
    this.after = event.revision;
    if (this.prefix && !event.current.key.startsWith(this.prefix)) return;
    let type: CacheEventType | undefined;
    let object = event.current;
    if (event.type === 'DELETED') {
      if (this.selects(event.current)) type = 'DELETED';
    } else {
      const now = this.selects(event.current);
      const before = event.previous !== undefined && this.selects(event.previous);
      if (now) type = before ? 'MODIFIED' : 'ADDED';
      else if (before) {
        type = 'DELETED';
        object = previousAtRevision(event);
      }
    }
    if (type === undefined) return;
    if (this.rendering.kind === 'table') {
      if (type === 'ADDED') this.sink.added(object.obj);
      else if (type === 'MODIFIED') this.sink.modified(object.obj);
      else this.sink.deleted(object.obj);
      return;
    }
    this.sink.frame(eventFrame(event, type, object, this.rendering), String(event.revision));
  }

  terminate(): void {
    this.sink.end();
  }
}
