import { formatApiVersion, type KubeObject } from '@certkit/apimachinery';
import type { ResourceClient } from '../client/types.ts';
import type { BackoffOptions } from './backoff.ts';
import {
  type DeletedFinalStateUnknown,
  type HandlerRegistration,
  Listener,
  type ResourceEventHandler,
} from './handlers.ts';
import { defaultLogger, type Logger } from '../log.ts';
import { composeTransforms, deepFreeze, type TransformFunc } from './objects.ts';
import { Reflector, type ReflectorStore, WatchListSupport } from './reflector.ts';
import { Indexer, type Indexers, objectKey } from './store.ts';

/**
 * client-go's SharedIndexInformer over a ResourceClient: one list+watch, one local store, any number of
 * event handlers. Objects in the store carry the resource's apiVersion and kind (list items and
 * metadata-only objects arrive without them, or as PartialObjectMetadata), as controller-runtime sets them.
 */

/** Handler resync periods below this are raised to it (client-go's minimumResyncPeriod). */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

/** Options of a SharedInformer: the resource client, selectors, transform, resync, indexers. */
export interface SharedInformerOptions {
  client: ResourceClient;
  /** '' or undefined: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Runs on every object before it enters the store; must be idempotent. */
  transform?: TransformFunc;
  /**
   * How often handlers get every cached object again as onUpdate(obj, obj), from the local store (no
   * server round trip); the default for handlers added without their own period. 0 (default): never.
   */
  resyncPeriodMs?: number;
  indexers?: Indexers;
  /** Deep-freeze objects as they enter the store, so that shared references cannot be mutated. */
  freezeObjects?: boolean;
  allowWatchBookmarks?: boolean;
  useWatchList?: boolean;
  watchListSupport?: WatchListSupport;
  backoff?: BackoffOptions;
  log?: Logger;
}

/**
 * client-go's SharedIndexInformer: a reflector keeping an indexed store of one resource current, and event
 * handlers told of every change.
 */
export class SharedInformer<T extends KubeObject = KubeObject> {
  readonly client: ResourceClient;
  readonly namespace: string;
  readonly labelSelector: string;
  readonly fieldSelector: string;

  readonly #store: Indexer<T>;
  readonly #reflector: Reflector;
  readonly #listeners = new Set<Listener<T>>();
  readonly #freeze: boolean;
  readonly #log: Logger;
  readonly #name: string;
  readonly #defaultResyncMs: number;
  #resyncCheckMs: number;
  #resyncTimer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #synced = false;
  #syncWaiters = new Set<() => void>();

  constructor(options: SharedInformerOptions) {
    this.client = options.client;
    this.namespace = options.namespace ?? '';
    this.labelSelector = options.labelSelector ?? '';
    this.fieldSelector = options.fieldSelector ?? '';
    this.#store = new Indexer<T>(options.indexers);
    this.#freeze = options.freezeObjects ?? false;
    this.#log = options.log ?? defaultLogger;
    const ref = options.client.ref;
    this.#name = [
      ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
      options.client.mode,
      this.namespace && `namespace=${this.namespace}`,
      this.labelSelector && `labels=${this.labelSelector}`,
      this.fieldSelector && `fields=${this.fieldSelector}`,
    ]
      .filter(Boolean)
      .join(' ');
    this.#defaultResyncMs = options.resyncPeriodMs ?? 0;
    this.#resyncCheckMs = this.#defaultResyncMs;

    const typeMeta = typeMetaSetter(formatApiVersion(ref.group, ref.version), ref.kind);
    this.#reflector = new Reflector({
      client: options.client,
      store: this.#sink(),
      namespace: this.namespace,
      labelSelector: this.labelSelector,
      fieldSelector: this.fieldSelector,
      transform: composeTransforms(typeMeta, options.transform),
      allowWatchBookmarks: options.allowWatchBookmarks,
      useWatchList: options.useWatchList,
      watchListSupport: options.watchListSupport,
      backoff: options.backoff,
      log: this.#log,
      name: this.#name,
    });
  }

  get name(): string {
    return this.#name;
  }

  /** The local store. Its objects are shared: copy before changing one. */
  getStore(): Indexer<T> {
    return this.#store;
  }

  /** True once the initial list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** True once `run` has been called. */
  isStarted(): boolean {
    return this.#started;
  }

  /** True once the informer has stopped. */
  isStopped(): boolean {
    return this.#stopped;
  }

  /** The resourceVersion the store was last brought up to. */
  lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion;
  }

  /**
   * Resolves true once synced, false if the signal aborts or the informer stops first (client-go's
   * WaitForCacheSync, without the 100 ms polling).
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (this.#stopped || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        this.#syncWaiters.delete(onSync);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onSync = () => done(this.#synced);
      const onAbort = () => done(false);
      this.#syncWaiters.add(onSync);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Adds a handler. Handlers added after the informer synced first get the current contents as adds
   * (isInInitialList true). resyncMs defaults to the informer's resync period; see client-go's
   * AddEventHandlerWithResyncPeriod for how it is clamped.
   */
  addEventHandler(handler: ResourceEventHandler<T>, resyncMs?: number): HandlerRegistration {
    if (this.#stopped) {
      throw new Error(
        `handler was not added to shared informer ${this.#name} because it has stopped already`,
      );
    }
    let period = resyncMs ?? this.#defaultResyncMs;
    if (period > 0) {
      period = Math.max(period, MINIMUM_RESYNC_PERIOD_MS);
      if (period < this.#resyncCheckMs || this.#resyncCheckMs === 0) {
        if (this.#started) {
          if (this.#resyncCheckMs > 0) period = this.#resyncCheckMs;
        } else {
          this.#resyncCheckMs = period;
        }
      }
    }
    const listener = new Listener<T>(handler, period, this.#log, this.#name);
    listener.nextResyncAt = Date.now() + period;
    this.#listeners.add(listener);
    if (this.#synced) {
      for (const obj of this.#store.values()) listener.add(obj, true);
      listener.markInitialListEnqueued();
    }
    return listener;
  }

  /** Stops deliveries to a handler; idempotent. */
  removeEventHandler(registration: HandlerRegistration): void {
    const listener = registration as Listener<T>;
    if (!this.#listeners.delete(listener)) return;
    listener.remove();
  }

  /** Adds indices, also after start (existing objects are indexed at once). */
  addIndexers(indexers: Indexers): void {
    if (this.#stopped) throw new Error('informer has already been stopped');
    this.#store.addIndexers(indexers);
  }

  /** Lists, watches and dispatches until the signal aborts. A second call returns at once. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) {
      this.#log({ level: 'warn', msg: 'informer has already been started', informer: this.#name });
      return;
    }
    this.#started = true;
    if (this.#resyncCheckMs > 0) {
      this.#resyncTimer = setInterval(() => this.#resync(), this.#resyncCheckMs);
      this.#resyncTimer.unref();
    }
    try {
      await this.#reflector.run(signal);
    } finally {
      clearInterval(this.#resyncTimer);
      this.#stopped = true;
      for (const waiter of [...this.#syncWaiters]) waiter();
    }
  }

  // ---------------------------------------------------------------------------------------------------

  #sink(): ReflectorStore {
    return {
      replace: (items, resourceVersion) => this.#replace(items as Iterable<T>, resourceVersion),
      add: (obj) => this.#upsert(this.#admit(obj as T)),
      update: (obj) => this.#upsert(this.#admit(obj as T)),
      delete: (obj) => this.#delete(this.#admit(obj as T)),
    };
  }

  #admit(obj: T): T {
    return this.#freeze ? deepFreeze(obj) : obj;
  }

  #upsert(obj: T): void {
    const old = this.#store.add(obj);
    if (old === undefined) {
      for (const l of this.#listeners) l.add(obj, false);
    } else {
      this.#distributeUpdate(old, obj);
    }
  }

  #delete(obj: T): void {
    // A delete for an object already gone (deleted by a relist, tombstone sent) is not news.
    if (this.#store.delete(objectKey(obj)) === undefined) return;
    for (const l of this.#listeners) l.delete(obj);
  }

  /** An update with an unchanged resourceVersion is a resync, and only handlers due for one get it. */
  #distributeUpdate(old: T, obj: T): void {
    if (old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    for (const l of this.#listeners) l.update(old, obj);
  }

  /**
   * A (re)list: objects that vanished become DeletedFinalStateUnknown tombstones, delivered first (as
   * client-go's RealFIFO does), then adds and updates. The store is changed in place, not rebuilt, so its
   * indices are not thrown away on every relist.
   */
  #replace(items: Iterable<T>, resourceVersion: string): void {
    const initial = !this.#synced;
    const fresh = new Map<string, T>();
    for (const obj of items) fresh.set(objectKey(obj), this.#admit(obj));

    const vanished: DeletedFinalStateUnknown<T>[] = [];
    for (const [key, obj] of this.#store.entries()) {
      if (!fresh.has(key)) vanished.push({ key, obj });
    }
    for (const tombstone of vanished) {
      this.#store.delete(tombstone.key);
      for (const l of this.#listeners) l.delete(tombstone);
    }
    for (const obj of fresh.values()) {
      const old = this.#store.add(obj);
      if (old === undefined) {
        for (const l of this.#listeners) l.add(obj, initial);
      } else {
        this.#distributeUpdate(old, obj);
      }
    }
    fresh.clear();
    this.#store.setResourceVersion(resourceVersion);
    if (initial) {
      this.#synced = true;
      for (const l of this.#listeners) l.markInitialListEnqueued();
      for (const waiter of [...this.#syncWaiters]) waiter();
    }
  }

  /** Periodic resync: due handlers get onUpdate(obj, obj) for every cached object. */
  #resync(): void {
    if (!this.#synced) return;
    const now = Date.now();
    const due = [...this.#listeners].filter((l) => l.resyncPeriodMs > 0 && l.nextResyncAt <= now);
    if (due.length === 0) return;
    for (const obj of this.#store.values()) {
      for (const l of due) l.update(obj, obj);
    }
    for (const l of due) l.nextResyncAt = now + l.resyncPeriodMs;
  }
}

/**
 * Sets apiVersion and kind to the resource's: list items come without them and metadata-only objects come
 * as meta.k8s.io/v1 PartialObjectMetadata (controller-runtime fixes up the GVK the same way).
 */
function typeMetaSetter(apiVersion: string, kind: string): TransformFunc {
  return (obj) => {
    if (obj.apiVersion !== apiVersion) obj.apiVersion = apiVersion;
    if (obj.kind !== kind) obj.kind = kind;
    return obj;
  };
}
