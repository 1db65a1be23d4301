import type { StoredObject } from '@certkit/apimachinery';
import type { Registry } from '../../registry/registry.ts';
import type { WatchCaches } from '../../watchcache/caches.ts';

/**
 * Reads the objects a ServiceAccount token names (its ServiceAccount, the Pod or Secret it is bound to), as
 * kube-apiserver's token getter does: from the watch cache when it is ready, so that checking a token on
 * every request costs a map lookup, and from storage on a miss (an object created a moment ago may not have
 * reached the cache yet). Undefined when the object does not exist, or its resource is not served.
 */
export class ObjectLookup {
  private readonly registry: Registry;
  private readonly caches: WatchCaches;

  constructor(registry: Registry, caches: WatchCaches) {
    this.registry = registry;
    this.caches = caches;
  }

  /** The object's metadata: all authentication needs, and cheaper than the whole object from the cache. */
  metadata(
    resource: string,
    namespace: string,
    name: string,
  ): StoredObject['metadata'] | undefined | Promise<StoredObject['metadata'] | undefined> {
    const store = this.registry.byResource('', resource);
    if (!store) return undefined;
    const cache = this.caches.cacheFor(store);
    if (cache?.ready.ready) {
      const cached = cache.get(store.key(namespace, name));
      if (cached) return cached.metadata;
    }
    // Any failure, a storage outage included, fails the token closed (a 401, as for a missing object).
    return store.get(namespace, name).then(
      (obj) => obj.metadata,
      () => undefined,
    );
  }

  /**
   * The whole object, from storage: for a TokenRequest, which must see the object as it is now. A NotFound
   * is the store's 404 (the caller's answer); other storage failures are passed on.
   */
  async object(resource: string, namespace: string, name: string): Promise<StoredObject | undefined> {
    const store = this.registry.byResource('', resource);
    if (!store) return undefined;
    return store.get(namespace, name);
  }

  /** Whether the core resource is served at all (Pods are not, until they are registered). */
  serves(resource: string): boolean {
    return this.registry.byResource('', resource) !== undefined;
  }
}
