import type { KubeObject } from '@certkit/apimachinery';
import { MultiNamespaceInformer, type Informer } from './informer.ts';
import {
  type FieldExtractor,
  type InformerCache,
  type KindTarget,
  type ScopedCache,
  type ScopedGetOptions,
  type ScopedInformerOptions,
  type ScopedListOptions,
} from './informer-cache.ts';
import { ALL_NAMESPACES } from './options.ts';

/**
 * controller-runtime's multiNamespaceCache: one InformerCache per configured namespace (the `''` one for
 * every namespace not listed), plus, for DefaultNamespaces only, a cluster-scope cache for cluster-scoped
 * kinds. A read in a namespace nobody configured is an error, never a silent cluster-wide watch.
 */

/** The key of the cluster-scope informer in a MultiNamespaceInformer. */
const CLUSTER_SCOPE = '_cluster-scope';

export class MultiNamespaceCache implements ScopedCache {
  readonly #namespaces: ReadonlyMap<string, InformerCache>;
  readonly #cluster: InformerCache | undefined;

  constructor(namespaces: Map<string, InformerCache>, cluster: InformerCache | undefined) {
    this.#namespaces = namespaces;
    this.#cluster = cluster;
  }

  async get(
    target: KindTarget,
    namespace: string,
    name: string,
    options: ScopedGetOptions,
  ): Promise<KubeObject> {
    if (!target.namespaced) return this.#clusterCache(target).get(target, namespace, name, options);
    const cache = this.#namespaces.get(namespace) ?? this.#namespaces.get(ALL_NAMESPACES);
    if (!cache)
      throw new Error(`unable to get: ${namespace}/${name} because of unknown namespace for the cache`);
    return cache.get(target, namespace, name, options);
  }

  async list(target: KindTarget, options: ScopedListOptions): Promise<KubeObject[]> {
    if (!target.namespaced) return this.#clusterCache(target).list(target, options);
    if (options.namespace) {
      const cache = this.#namespaces.get(options.namespace) ?? this.#namespaces.get(ALL_NAMESPACES);
      if (!cache)
        throw new Error(`unable to list: ${options.namespace} because of unknown namespace for the cache`);
      return cache.list(target, options);
    }
    // Every namespace, in map order; a limit is spent across them.
    const items: KubeObject[] = [];
    let limit = options.limit && options.limit > 0 ? options.limit : undefined;
    for (const cache of this.#namespaces.values()) {
      const part = await cache.list(target, { ...options, limit });
      // One by one: a namespace can hold more objects than a call takes arguments.
      for (const item of part) items.push(item);
      if (limit !== undefined) {
        limit -= part.length;
        if (limit <= 0) break;
      }
    }
    return items;
  }

  async getInformer(target: KindTarget, options: ScopedInformerOptions): Promise<Informer> {
    if (!target.namespaced) {
      const informer = await this.#clusterCache(target).getInformer(target, options);
      return new MultiNamespaceInformer(new Map([[CLUSTER_SCOPE, informer]]));
    }
    const informers = new Map<string, Informer>();
    for (const [ns, cache] of this.#namespaces) informers.set(ns, await cache.getInformer(target, options));
    return new MultiNamespaceInformer(informers);
  }

  removeInformer(target: KindTarget): void {
    if (!target.namespaced) return this.#clusterCache(target).removeInformer(target);
    for (const cache of this.#namespaces.values()) cache.removeInformer(target);
  }

  async indexField(target: KindTarget, field: string, extract: FieldExtractor): Promise<void> {
    if (!target.namespaced) return this.#clusterCache(target).indexField(target, field, extract);
    for (const cache of this.#namespaces.values()) await cache.indexField(target, field, extract);
  }

  #clusterCache(target: KindTarget): InformerCache {
    // Only a ByObject cache has none, and ByObject refuses namespaces for cluster-scoped kinds.
    if (!this.#cluster) throw new Error(`no cache for cluster-scoped ${target.kind} in a namespaced cache`);
    return this.#cluster;
  }
}
