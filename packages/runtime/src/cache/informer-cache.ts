import type { KubeObject } from '@certkit/apimachinery';
import type { ReadMode, ResourceClient } from '../client/types.ts';
import type { InformerRequest, SharedInformerFactory } from '../informers/factory.ts';
import type { SharedInformer } from '../informers/shared-informer.ts';
import { ErrCacheNotStarted, ErrResourceNotCached, syncTimeout } from './errors.ts';
import type { Informer } from './informer.ts';
import { jitteredSyncPeriod, type ResolvedConfig, typeName } from './options.ts';
import { fieldIndexName, namespacedIndexValue, readMany, readOne, type ReaderListOptions } from './reader.ts';

/**
 * controller-runtime's informerCache: the informers of one namespace scope ('' = all namespaces) with one
 * Config, one informer per kind and read mode, created on first use.
 */

/** A kind resolved through discovery, with the client for one read mode. */
export interface KindTarget {
  apiVersion: string;
  group: string;
  version: string;
  kind: string;
  namespaced: boolean;
  mode: ReadMode;
  client: ResourceClient;
}

/** What all caches of one Cache share. */
export interface CacheContext {
  readonly factory: SharedInformerFactory;
  readonly readerFailOnMissingInformer: boolean;
  isStarted(): boolean;
}

export interface ScopedGetOptions {
  unsafeDisableDeepCopy?: boolean;
  signal?: AbortSignal;
}

export interface ScopedListOptions extends ReaderListOptions {
  signal?: AbortSignal;
}

export interface ScopedInformerOptions {
  blockUntilSynced?: boolean;
  signal?: AbortSignal;
}

/** Extracts the values an object is indexed under for IndexField. */
export type FieldExtractor = (obj: KubeObject) => readonly string[];

/** The operations the delegating Cache routes to a namespace scope or a multi-namespace cache. */
export interface ScopedCache {
  get(target: KindTarget, namespace: string, name: string, options: ScopedGetOptions): Promise<KubeObject>;
  list(target: KindTarget, options: ScopedListOptions): Promise<KubeObject[]>;
  getInformer(target: KindTarget, options: ScopedInformerOptions): Promise<Informer>;
  removeInformer(target: KindTarget): void;
  indexField(target: KindTarget, field: string, extract: FieldExtractor): Promise<void>;
}

function entryKey(target: KindTarget): string {
  return `${target.apiVersion}/${target.kind}|${target.mode}`;
}

function informerTypeName(target: KindTarget): string {
  return target.mode === 'metadata' ? '*v1.PartialObjectMetadata' : typeName(target.apiVersion, target.kind);
}

export class InformerCache implements ScopedCache {
  readonly namespace: string;
  readonly config: ResolvedConfig;
  readonly #context: CacheContext;
  readonly #informers = new Map<string, SharedInformer>();

  constructor(context: CacheContext, namespace: string, config: ResolvedConfig) {
    this.#context = context;
    this.namespace = namespace;
    this.config = config;
  }

  async get(
    target: KindTarget,
    namespace: string,
    name: string,
    options: ScopedGetOptions,
  ): Promise<KubeObject> {
    const informer = await this.#readable(target, options.signal);
    const unsafe = this.config.unsafeDisableDeepCopy === true || options.unsafeDisableDeepCopy === true;
    return readOne(informer.getStore(), target, namespace, name, unsafe);
  }

  async list(target: KindTarget, options: ScopedListOptions): Promise<KubeObject[]> {
    const informer = await this.#readable(target, options.signal);
    const unsafe = this.config.unsafeDisableDeepCopy === true || options.unsafeDisableDeepCopy === true;
    return readMany(informer.getStore(), options, unsafe);
  }

  async getInformer(target: KindTarget, options: ScopedInformerOptions): Promise<Informer> {
    const informer = this.#informer(target, false);
    if ((options.blockUntilSynced ?? true) && this.#context.isStarted())
      await this.#waitForSync(target, informer, options.signal);
    return informer;
  }

  removeInformer(target: KindTarget): void {
    const key = entryKey(target);
    const informer = this.#informers.get(key);
    if (!informer) return;
    this.#informers.delete(key);
    this.#context.factory.remove(informer);
  }

  /**
   * Registers the `field:<field>` index, storing `<ns>/<v>` and `__all_namespaces/<v>` for each value of a
   * namespaced object (only the latter for cluster-scoped ones). Never waits for a sync.
   */
  async indexField(target: KindTarget, field: string, extract: FieldExtractor): Promise<void> {
    const informer = this.#informer(target, false);
    informer.addIndexers({
      [fieldIndexName(field)]: (obj) => {
        const values = extract(obj);
        const namespace = obj.metadata?.namespace;
        if (!namespace) return values.map((v) => namespacedIndexValue(undefined, v));
        return [
          ...values.map((v) => namespacedIndexValue(namespace, v)),
          ...values.map((v) => namespacedIndexValue(undefined, v)),
        ];
      },
    });
  }

  /** The informer for reads: created unless readerFailOnMissingInformer, synced, of a started cache. */
  async #readable(target: KindTarget, signal: AbortSignal | undefined): Promise<SharedInformer> {
    const informer = this.#informer(target, this.#context.readerFailOnMissingInformer);
    // Registered either way: it starts with the cache.
    if (!this.#context.isStarted()) throw new ErrCacheNotStarted();
    await this.#waitForSync(target, informer, signal);
    return informer;
  }

  async #waitForSync(
    target: KindTarget,
    informer: SharedInformer,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (informer.hasSynced()) return;
    if (!(await informer.waitForSync(signal))) throw syncTimeout(informerTypeName(target));
  }

  #informer(target: KindTarget, failOnMissing: boolean): SharedInformer {
    const key = entryKey(target);
    const existing = this.#informers.get(key);
    if (existing) return existing;
    if (failOnMissing) throw new ErrResourceNotCached(target.group, target.version, target.kind);
    const informer = this.#context.factory.informerFor(target.client, this.#request(target));
    this.#informers.set(key, informer);
    return informer;
  }

  #request(target: KindTarget): InformerRequest {
    const { labelSelector, fieldSelector } = this.config;
    let namespace = target.namespaced ? this.namespace : '';
    // restrictNamespaceBySelector: a selector pinning metadata.namespace lets us watch that namespace only.
    if (namespace === '' && target.namespaced && fieldSelector) {
      namespace = fieldSelector.requiresExactMatch('metadata.namespace') ?? '';
    }
    return {
      mode: target.mode,
      namespace,
      labelSelector: labelSelector?.toString() || undefined,
      fieldSelector: fieldSelector?.toString() || undefined,
      transform: this.config.transform,
      resyncPeriodMs: jitteredSyncPeriod(this.config.syncPeriodMs),
      freezeObjects: this.config.unsafeDisableDeepCopy === true,
      allowWatchBookmarks: this.config.enableWatchBookmarks ?? true,
    };
  }
}
