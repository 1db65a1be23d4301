import type { StoredObject } from '@certkit/apimachinery';
import { parseMetadata } from '../registry/metadata-text.ts';
import { rangeAllPaged } from '../storage/paged-range.ts';
import { CompactedError, type Storage, type StorageEvent } from '../storage/types.ts';
import { releaseFrames } from './frames.ts';
import { ReadyState } from './ready.ts';

/**
 * The watch cache of one resource: every object under its storage prefix in memory (with a namespace index),
 * kept current by one storage watch, plus a bounded history of recent events so watchers can resume from a
 * recent resourceVersion. It initialises by listing and then watching storage; when that watch breaks it goes
 * back to Pending, tells its watchers to go, and lists again a second later (KEP-4568).
 *
 * Serialisation is shared: an object's JSON is its stored value with the resourceVersion spliced in, its
 * PartialObjectMetadata JSON is built once, and a watch event is serialised once for all its watchers; see
 * frames.ts. Parsing is deferred: an object is parsed the first time something needs it (a GET, a metadata
 * rendering; label selectors parse the metadata alone), so the many writes nobody selects on (events,
 * a controller's unfiltered watches) cost no parse and keep no parsed copy in memory.
 */

/** An object as the cache holds it: its stored JSON (without resourceVersion) to reuse, and parsed on demand. */
export interface CachedObject {
  key: string;
  namespace: string | undefined;
  /** The object with its resourceVersion; treat as read-only (it is shared by every reader). */
  readonly obj: StoredObject;
  /** Its metadata (without resourceVersion unless the object was parsed); read-only as obj. */
  readonly metadata: StoredObject['metadata'];
  /** The storage value: the object's JSON without metadata.resourceVersion. */
  value: string;
  revision: number;
  /** Serialisations built on first use, by rendering (see frames.ts). */
  rendered?: Map<string, string>;
  /**
   * Where the metadata ends in `value` (-1: laid out otherwise), found on the first metadata rendering and
   * kept: one number, where keeping the rendering would hold a copy of the metadata (see frames.ts).
   */
  metadataEnd?: number;
}

/** A cache entry whose object is parsed from its stored value the first time it is asked for. */
class Entry implements CachedObject {
  readonly key: string;
  readonly namespace: string | undefined;
  readonly value: string;
  readonly revision: number;
  rendered?: Map<string, string>;
  metadataEnd?: number;
  #obj: StoredObject | undefined;
  #metadata: StoredObject['metadata'] | undefined;

  constructor(key: string, namespace: string | undefined, value: string, revision: number) {
    this.key = key;
    this.namespace = namespace;
    this.value = value;
    this.revision = revision;
  }

  get obj(): StoredObject {
    if (this.#obj === undefined) {
      const obj = JSON.parse(this.value) as StoredObject;
      obj.metadata.resourceVersion = String(this.revision);
      this.#obj = obj;
      this.#metadata = undefined;
    }
    return this.#obj;
  }

  /**
   * Label selectors only look at metadata: for objects nobody parsed, the metadata is cut out of the stored
   * value and parsed alone (a Secret's data stays text).
   */
  get metadata(): StoredObject['metadata'] {
    if (this.#obj !== undefined) return this.#obj.metadata;
    this.#metadata ??= parseMetadata(this.value);
    return this.#metadata;
  }

  /**
   * Forgets the parses, for a version that is no longer current: the history keeps it for watchers that
   * resume from before it, which seldom come, and parses it again if one does. Kept, a parsed metadata
   * (annotations, labels, managedFields) costs more than the text it came from, for every version a label
   * selector looked at.
   */
  releaseParsed(): void {
    this.#obj = undefined;
    this.#metadata = undefined;
  }
}

/** Drops the parses of a version the cache no longer serves (see Entry.releaseParsed). */
function releaseParsed(version: CachedObject | undefined): void {
  if (version instanceof Entry) version.releaseParsed();
}

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  type: CacheEventType;
  revision: number;
  /** The object after the change (for DELETED: its last state, at the deletion's revision). */
  current: CachedObject;
  /** The object before the change (absent for ADDED). */
  previous?: CachedObject;
  /** When the cache saw it, for the history's age bound. */
  at: number;
  /** Its serialisations, by kind and rendering, while it is being dispatched (see frames.ts). */
  frames: Map<string, Buffer> | undefined;
}

/**
 * Receives the cache's events; a listener that throws is removed. A listener may see an event twice (once from
 * the history replay at subscription, once from the dispatch that follows) and must skip revisions it has seen.
 */
export interface CacheListener {
  event(event: CacheEvent): void;
  /** The cache lost its storage watch (or stopped): the listener must end; it will not hear more. */
  terminate(reason: string): void;
}

export interface WatchCacheOptions {
  /** Events kept at least (kube-apiserver: 100). */
  minHistory?: number;
  /** Events kept at most (kube-apiserver's upper bound: 102,400). */
  maxHistory?: number;
  /** Events older than this go once more than minHistory are kept (kube-apiserver: 75 s). */
  historyWindowMs?: number;
  /** Delay before relisting after the storage watch broke (kube-apiserver: 1 s). */
  relistDelayMs?: number;
  now?: () => number;
}

/** How long after an event leaves the history window the idle trim drops it (see scheduleTrim). */
const TRIM_SLACK_MS = 1000;
/** The longest delay setTimeout takes (less the slack added to it). */
const MAX_TIMER_MS = 2 ** 31 - 1 - TRIM_SLACK_MS;

export class WatchCache {
  readonly prefix: string;
  /** Whether keys carry a namespace (`prefix` + namespace + `/` + name), as the resource's objects do. */
  private readonly namespaced: boolean;
  readonly ready: ReadyState;
  private readonly storage: Storage;
  private readonly objects = new Map<string, CachedObject>();
  private readonly byNamespace = new Map<string, Set<string>>();
  /** Keys in order, rebuilt lazily after inserts and deletes (lists are sorted by key, as from storage). */
  private sortedKeys: string[] | undefined;
  /**
   * The events a watcher may resume from, from historyStart on. Slots before it are emptied as events are
   * dropped: the array is compacted only once the dropped prefix dominates, and until then a dropped event
   * would keep its objects (every version written in the window) alive.
   */
  private history: (CacheEvent | undefined)[] = [];
  private historyStart = 0;
  /** Drops expired events when no write comes to do it (see scheduleTrim). */
  private trimTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<CacheListener>();
  /** Events recorded but not yet delivered to listeners (see dispatch). */
  private pending: CacheEvent[] = [];
  private dispatchScheduled = false;
  private readonly revisionWaiters = new Set<{ revision: number; resolve: () => void }>();
  private readonly options: Required<WatchCacheOptions>;
  private closeWatch: (() => void) | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  private current = 0;
  /** Oldest revision a watch may start after: events after it are all in the history. */
  private oldest = 0;
  /** How long the last (re)initialisation took, in ms. */
  initDurationMs = 0;
  eventsDispatched = 0;

  constructor(storage: Storage, prefix: string, options: WatchCacheOptions = {}, namespaced = true) {
    this.storage = storage;
    this.prefix = prefix;
    this.namespaced = namespaced;
    this.options = {
      minHistory: options.minHistory ?? 100,
      maxHistory: options.maxHistory ?? 102_400,
      historyWindowMs: options.historyWindowMs ?? 75_000,
      relistDelayMs: options.relistDelayMs ?? 1000,
      now: options.now ?? Date.now,
    };
    this.ready = new ReadyState(this.options.now);
  }

  /** The revision the cache is current to. */
  get revision(): number {
    return this.current;
  }

  get size(): number {
    return this.objects.size;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  start(): void {
    void this.initialise();
  }

  stop(): void {
    this.ready.stop();
    clearTimeout(this.relistTimer);
    clearTimeout(this.trimTimer);
    this.trimTimer = undefined;
    this.closeWatch?.();
    this.terminateListeners('apiserver cacher is stopped');
  }

  private get stopped(): boolean {
    return this.ready.state === 'Stopped';
  }

  private async initialise(): Promise<void> {
    if (this.stopped) return;
    const started = performance.now();
    try {
      // Parse page by page, so the work is spread between the yields of the paged read.
      const entries: CachedObject[] = [];
      const revision = await rangeAllPaged(this.storage, this.prefix, (page) => {
        for (const kv of page) entries.push(this.cached(kv.key, kv.value, kv.modRevision));
      });
      if (this.stopped) return;
      this.replace(entries, revision);
      const watch = this.storage.watch(this.prefix, revision, {
        event: (ev) => this.apply(ev),
        error: (err) => this.fail(err),
        progress: (rev) => this.progress(rev),
      });
      this.closeWatch = () => watch.close();
      this.initDurationMs = performance.now() - started;
      this.ready.setReady();
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** The storage watch broke: watchers go, the cache is Pending, and relists shortly. */
  private fail(err: Error): void {
    if (this.stopped) return;
    this.closeWatch?.();
    this.closeWatch = undefined;
    this.ready.setPending(err instanceof CompactedError ? 'the storage watch was compacted' : err.message);
    this.terminateListeners(this.ready.message());
    clearTimeout(this.relistTimer);
    this.relistTimer = setTimeout(() => void this.initialise(), this.options.relistDelayMs);
    this.relistTimer.unref();
  }

  private terminateListeners(reason: string): void {
    for (const l of [...this.listeners]) {
      this.listeners.delete(l);
      l.terminate(reason);
    }
  }

  private replace(entries: CachedObject[], revision: number): void {
    this.objects.clear();
    this.byNamespace.clear();
    this.sortedKeys = entries.map((e) => e.key);
    for (const entry of entries) this.insert(entry, false);
    this.current = revision;
    this.oldest = revision;
    this.history = [];
    this.historyStart = 0;
    this.pending = [];
    this.wakeWaiters();
  }

  private cached(key: string, value: string, revision: number): CachedObject {
    // The namespace is in the key (objectKey writes metadata.namespace there): no parse needed for the index.
    let namespace: string | undefined;
    if (this.namespaced) {
      const slash = key.indexOf('/', this.prefix.length);
      if (slash > 0) namespace = key.slice(this.prefix.length, slash);
    }
    return new Entry(key, namespace, value, revision);
  }

  private insert(entry: CachedObject, invalidate: boolean): void {
    const existed = this.objects.has(entry.key);
    this.objects.set(entry.key, entry);
    if (entry.namespace !== undefined) {
      let keys = this.byNamespace.get(entry.namespace);
      if (!keys) {
        keys = new Set();
        this.byNamespace.set(entry.namespace, keys);
      }
      keys.add(entry.key);
    }
    if (invalidate && !existed) this.sortedKeys = undefined;
  }

  private remove(key: string): void {
    const entry = this.objects.get(key);
    if (!entry) return;
    this.objects.delete(key);
    if (entry.namespace !== undefined) this.byNamespace.get(entry.namespace)?.delete(key);
    this.sortedKeys = undefined;
  }

  private apply(ev: StorageEvent): void {
    const previous = this.objects.get(ev.key);
    const current = this.cached(ev.key, ev.value, ev.revision);
    let type: CacheEventType;
    if (ev.type === 'DELETE') {
      type = 'DELETED';
      this.remove(ev.key);
    } else {
      type = previous ? 'MODIFIED' : 'ADDED';
      this.insert(current, true);
    }
    const event: CacheEvent = {
      type,
      revision: ev.revision,
      current,
      previous,
      at: this.options.now(),
      frames: undefined,
    };
    this.current = Math.max(this.current, ev.revision);
    this.record(event);
    this.pending.push(event);
    if (!this.dispatchScheduled) {
      this.dispatchScheduled = true;
      setImmediate(() => this.dispatch());
    }
    this.wakeWaiters();
  }

  /** Storage says nothing changed under our prefix up to this revision: we are current to it. */
  private progress(revision: number): void {
    if (revision <= this.current) return;
    this.current = revision;
    this.wakeWaiters();
  }

  /**
   * Delivers the events that arrived since the last dispatch, all in one tick: a watcher then writes them as
   * one chunk (one TLS record) instead of one per event, which is what lets a thousand watchers keep up.
   */
  private dispatch(): void {
    this.dispatchScheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (const l of this.listeners) {
      try {
        for (const event of batch) l.event(event);
        this.eventsDispatched += batch.length;
      } catch {
        this.listeners.delete(l);
      }
    }
    for (const event of batch) {
      releaseFrames(event);
      // Dispatched: the versions this event replaced or removed were compared with selectors for the last time.
      releaseParsed(event.previous);
      if (event.type === 'DELETED') releaseParsed(event.current);
    }
  }

  /** Appends to the history, dropping events beyond the count bound or (above the minimum) the age bound. */
  private record(event: CacheEvent): void {
    this.history.push(event);
    this.trimHistory();
  }

  /** Drops the events beyond the count bound or (above the minimum) the age bound. */
  private trimHistory(): void {
    const { minHistory, maxHistory, historyWindowMs, now } = this.options;
    const horizon = now() - historyWindowMs;
    while (
      this.history.length - this.historyStart > maxHistory ||
      (this.history.length - this.historyStart > minHistory && this.history[this.historyStart]!.at < horizon)
    ) {
      this.oldest = this.history[this.historyStart]!.revision;
      this.history[this.historyStart] = undefined;
      this.historyStart++;
    }
    // Compact the array once the dropped prefix dominates, keeping trimming O(1) amortised.
    if (this.historyStart > 1024 && this.historyStart * 2 > this.history.length) {
      this.history = this.history.slice(this.historyStart);
      this.historyStart = 0;
    }
    this.scheduleTrim();
  }

  /**
   * Writes trim the history as they come; after a burst, nothing would, and the burst's every version would
   * stay in memory until the resource's next write. A timer drops them once the window has passed them (a
   * second late, so that a steady stream of writes, which trims as it goes, does not also run the timer
   * for each event).
   */
  private scheduleTrim(): void {
    if (this.trimTimer !== undefined || this.stopped) return;
    if (this.history.length - this.historyStart <= this.options.minHistory) return;
    const { historyWindowMs, now } = this.options;
    const expires = this.history[this.historyStart]!.at + historyWindowMs;
    this.trimTimer = setTimeout(
      () => {
        this.trimTimer = undefined;
        this.trimHistory();
      },
      // Within the window whatever the clock says (an injected one may jump), and never past setTimeout's range.
      Math.min(Math.max(0, expires - now()), historyWindowMs, MAX_TIMER_MS) + TRIM_SLACK_MS,
    );
    this.trimTimer.unref();
  }

  /** Resolves once the cache has seen the revision, or rejects after the timeout (a 504 for the caller). */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.current >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.revisionWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.revisionWaiters.add(waiter);
    });
  }

  private wakeWaiters(): void {
    for (const w of this.revisionWaiters) {
      if (this.current >= w.revision) {
        this.revisionWaiters.delete(w);
        w.resolve();
      }
    }
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  /** The objects under a namespace (or all), sorted by key. */
  list(namespace: string | undefined): CachedObject[] {
    if (namespace !== undefined) {
      const keys = [...(this.byNamespace.get(namespace) ?? [])].sort();
      return keys.map((k) => this.objects.get(k)!);
    }
    if (!this.sortedKeys) this.sortedKeys = [...this.objects.keys()].sort();
    return this.sortedKeys.map((k) => this.objects.get(k)!);
  }

  /**
   * Registers a listener for every event after `afterRevision`, replaying the history it missed first.
   * Returns false when the revision is older than the history (the caller answers 410).
   */
  subscribe(afterRevision: number, listener: CacheListener): boolean {
    if (afterRevision < this.oldest) return false;
    for (let i = this.historyStart; i < this.history.length; i++) {
      const event = this.history[i]!;
      if (event.revision > afterRevision) listener.event(event);
    }
    this.listeners.add(listener);
    return true;
  }

  unsubscribe(listener: CacheListener): void {
    this.listeners.delete(listener);
  }

  /** The oldest resourceVersion a watch can start from. */
  get oldestRevision(): number {
    return this.oldest;
  }
}
