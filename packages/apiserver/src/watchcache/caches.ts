import type { StoredObject } from '@certkit/apimachinery';
import type { Registry } from '../registry/registry.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { Storage } from '../storage/types.ts';
import { WatchCache, type WatchCacheOptions } from './cache.ts';
import { ResourceReader } from './reader.ts';

/**
 * Resources kube-apiserver serves without a watch cache by default (DefaultWatchCacheSizes): Events are many,
 * written once or twice and rarely read, so caching them costs a decode and memory per write for nothing.
 */
function uncached(store: ObjectStore): boolean {
  const { group, resource } = store.def;
  // Create-only kinds store nothing: nothing to cache.
  if (store.def.createOnly) return true;
  return resource === 'events' && (group === '' || group === 'events.k8s.io');
}

/**
 * One watch cache per served resource, created when the resource is served (built-ins at start, CRDs when
 * established) and stopped when it goes; Events have none (reads and watches of them go to storage, as
 * kube-apiserver's do). Without caching every read goes to storage, for comparison.
 */
export class WatchCaches {
  private readonly registry: Registry;
  private readonly storage: Storage;
  private readonly enabled: boolean;
  private readonly options: WatchCacheOptions;
  private readonly caches = new Map<string, WatchCache>();
  private unsubscribe: (() => void) | undefined;

  constructor(registry: Registry, storage: Storage, options: WatchCacheOptions & { enabled?: boolean } = {}) {
    this.registry = registry;
    this.storage = storage;
    this.enabled = options.enabled ?? true;
    this.options = options;
  }

  start(): void {
    if (!this.enabled) return;
    this.sync();
    this.unsubscribe = this.registry.onChange(() => this.sync());
  }

  stop(): void {
    this.unsubscribe?.();
    for (const cache of this.caches.values()) cache.stop();
    this.caches.clear();
  }

  /** Starts caches for new resources and stops those of resources no longer served. */
  private sync(): void {
    const served = new Set<string>();
    for (const store of this.registry.all()) {
      if (uncached(store)) continue;
      served.add(store.prefix);
      if (!this.caches.has(store.prefix)) {
        const cache = new WatchCache(this.storage, store.prefix, this.options, store.def.namespaced);
        this.caches.set(store.prefix, cache);
        cache.start();
      }
    }
    for (const [prefix, cache] of this.caches) {
      if (!served.has(prefix)) {
        cache.stop();
        this.caches.delete(prefix);
      }
    }
  }

  reader(store: ObjectStore): ResourceReader {
    return new ResourceReader(store, this.caches.get(store.prefix));
  }

  /**
   * The registry's getNamespace hook. Every namespaced create asks: answer from the namespaces' watch cache,
   * and from storage only on a miss (a namespace created a moment ago on another server may not have reached
   * this cache yet).
   */
  getNamespace(name: string): StoredObject | undefined | Promise<StoredObject | undefined> {
    const store = this.registry.byResource('', 'namespaces')!;
    const cache = this.cacheFor(store);
    const cached = cache?.ready.ready ? cache.get(`${store.prefix}${name}`) : undefined;
    if (cached) return cached.obj;
    return store.get(undefined, name).catch(() => undefined);
  }

  cacheFor(store: ObjectStore): WatchCache | undefined {
    return this.caches.get(store.prefix);
  }

  /** True once the caches of every built-in resource have been Ready (the storage-readiness hook's condition). */
  builtinsReady(): boolean {
    if (!this.enabled) return true;
    return this.registry
      .all()
      .filter((s) => !s.def.custom && !uncached(s))
      .every((s) => this.caches.get(s.prefix)?.ready.ready);
  }

  entries(): { store: ObjectStore; cache: WatchCache }[] {
    const result: { store: ObjectStore; cache: WatchCache }[] = [];
    for (const store of this.registry.all()) {
      const cache = this.caches.get(store.prefix);
      if (cache) result.push({ store, cache });
    }
    return result;
  }
}
