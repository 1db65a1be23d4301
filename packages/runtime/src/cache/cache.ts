import { type KubeList, type KubeObject, parseApiVersion } from '@certkit/apimachinery';
import type { ReadMode, ResourceClient } from '../client/types.ts';
import type { BackoffOptions } from '../informers/backoff.ts';
import { SharedInformerFactory } from '../informers/factory.ts';
import { defaultLogger, type Logger } from '../log.ts';
import { splitKey } from '../informers/store.ts';
import type { Informer } from './informer.ts';
import {
  type CacheContext,
  type FieldExtractor,
  InformerCache,
  type KindTarget,
  type ScopedCache,
} from './informer-cache.ts';
import { MultiNamespaceCache } from './multi-namespace-cache.ts';
import { byObjectKey, type CacheConfigOptions, type DefaultedOptions, defaultOptions } from './options.ts';
import { CONTINUE_NOT_SUPPORTED } from './reader.ts';
import {
  type FieldSelectorInput,
  type LabelSelectorInput,
  toFieldSelector,
  toLabelSelector,
} from './selectors.ts';

/**
 * controller-runtime's Cache: reads served from informers that start on first use (or fail, with
 * readerFailOnMissingInformer), configured per kind (ByObject) and per namespace (DefaultNamespaces),
 * with separate informers for full and metadata-only reads of the same kind. Routing follows upstream's
 * delegatingByGVKCache → multiNamespaceCache → informerCache topology (pkg/cache/cache.go, New).
 */

/** Resolves apiVersion + kind to a client through discovery (KubeClient.forKind). */
export interface KindResolver {
  /** A client for the resource serving this kind, in this read mode. */
  forKind(apiVersion: string, kind: string, mode?: ReadMode): Promise<ResourceClient>;
}

export interface CacheOptions extends CacheConfigOptions {
  client: KindResolver;
  log?: Logger;
  /** Reflector backoff (tests shorten it). */
  backoff?: BackoffOptions;
  useWatchList?: boolean;
}

/** Which object to get: its name, and its namespace unless cluster-scoped. */
export interface ObjectKey {
  /** Ignored for cluster-scoped kinds. */
  namespace?: string;
  name: string;
}

/** Options of `Cache.get`. */
export interface CacheGetOptions {
  /** 'full' (default) or 'metadata': reads of the two modes use separate informers. */
  mode?: ReadMode;
  /** Return the cached object itself, deep-frozen, instead of a copy. */
  unsafeDisableDeepCopy?: boolean;
  /** Bounds the wait for an unsynced informer; its abort gives a Timeout (504) error. */
  signal?: AbortSignal;
}

/** Options of `Cache.list`: namespace, selectors and limit, read from the informer's store. */
export interface CacheListOptions extends CacheGetOptions {
  namespace?: string;
  /** Applied in memory. */
  labelSelector?: LabelSelectorInput;
  /**
   * Exact matches only, each answered from a `field:<name>` index registered with indexField. An empty
   * selector means none (upstream rejects fields.Everything() as non-exact; a string API reads '' as unset).
   */
  fieldSelector?: FieldSelectorInput;
  /** At most this many matching items. */
  limit?: number;
  /** Not supported: any value fails. */
  continue?: string;
}

/** Options of `Cache.getInformer`. */
export interface GetInformerOptions {
  mode?: ReadMode;
  /** Wait for the informer to sync, if the cache is started (default true). */
  blockUntilSynced?: boolean;
  signal?: AbortSignal;
}

/**
 * controller-runtime's informer cache (`newCache`): reads of any kind served from informers that it starts on
 * first use, scoped by namespace, label and field selectors per kind (`byObject`, `defaultNamespaces`); a
 * Runnable for the Manager.
 */
export class Cache {
  readonly #options: DefaultedOptions;
  readonly #client: KindResolver;
  readonly #factory: SharedInformerFactory;
  readonly #defaultCache: ScopedCache;
  readonly #byObject = new Map<string, ScopedCache>();
  readonly #targets = new Map<string, Promise<KindTarget>>();
  #started = false;
  #startWaiters = new Set<() => void>();

  /** Validates and defaults the options (which needs discovery for ByObject kinds), then builds the cache. */
  static async create(options: CacheOptions): Promise<Cache> {
    const defaulted = await defaultOptions(options, async (apiVersion, kind) => {
      return (await options.client.forKind(apiVersion, kind)).ref.namespaced;
    });
    return new Cache(options, defaulted);
  }

  private constructor(options: CacheOptions, defaulted: DefaultedOptions) {
    this.#options = defaulted;
    this.#client = options.client;
    this.#factory = new SharedInformerFactory({
      log: options.log ?? defaultLogger,
      backoff: options.backoff,
      useWatchList: options.useWatchList,
    });
    const context: CacheContext = {
      factory: this.#factory,
      readerFailOnMissingInformer: defaulted.readerFailOnMissingInformer,
      isStarted: () => this.#started,
    };

    if (defaulted.defaultNamespaces.size > 0) {
      const namespaces = new Map<string, InformerCache>();
      for (const [ns, config] of defaulted.defaultNamespaces)
        namespaces.set(ns, new InformerCache(context, ns, config));
      this.#defaultCache = new MultiNamespaceCache(
        namespaces,
        new InformerCache(context, '', defaulted.global),
      );
    } else {
      this.#defaultCache = new InformerCache(context, '', defaulted.global);
    }

    for (const [key, entry] of defaulted.byObject) {
      if (entry.namespaces && entry.namespaces.size > 0) {
        const namespaces = new Map<string, InformerCache>();
        for (const [ns, config] of entry.namespaces)
          namespaces.set(ns, new InformerCache(context, ns, config));
        this.#byObject.set(key, new MultiNamespaceCache(namespaces, undefined));
      } else {
        this.#byObject.set(key, new InformerCache(context, '', entry.config));
      }
    }
  }

  /** The defaulted options, for inspection. */
  get options(): DefaultedOptions {
    return this.#options;
  }

  /**
   * One object of a kind from its informer's store (a deep copy unless `unsafeDisableDeepCopy`); a NotFound
   * StatusError when it has none.
   */
  async get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    key: ObjectKey | string,
    options: CacheGetOptions = {},
  ): Promise<T> {
    const { namespace, name } =
      typeof key === 'string' ? splitKey(key) : { namespace: key.namespace ?? '', name: key.name };
    const target = await this.#target(apiVersion, kind, options.mode);
    return (await this.#cacheFor(target).get(target, namespace, name, options)) as T;
  }

  /** The objects of a kind from its informer's store, filtered by namespace and selectors, as a list. */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: CacheListOptions = {},
  ): Promise<KubeList<T>> {
    if (options.continue) throw new Error('continue list option is not supported by the cache');
    const fieldSelector = toFieldSelector(options.fieldSelector);
    const target = await this.#target(apiVersion, kind, options.mode);
    const items = await this.#cacheFor(target).list(target, {
      namespace: options.namespace || undefined,
      labelSelector: toLabelSelector(options.labelSelector),
      fieldSelector: fieldSelector && !fieldSelector.empty ? fieldSelector : undefined,
      limit: options.limit,
      unsafeDisableDeepCopy: options.unsafeDisableDeepCopy,
      signal: options.signal,
    });
    return {
      apiVersion,
      kind: `${kind}List`,
      metadata: { continue: CONTINUE_NOT_SUPPORTED },
      items: items as T[],
    };
  }

  /** The informer for a kind, created if missing (whatever readerFailOnMissingInformer says). */
  async getInformer<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: GetInformerOptions = {},
  ): Promise<Informer<T>> {
    const target = await this.#target(apiVersion, kind, options.mode);
    return (await this.#cacheFor(target).getInformer(target, options)) as unknown as Informer<T>;
  }

  /** Stops and forgets the informer of one kind and read mode; a later read starts a fresh one. */
  async removeInformer(apiVersion: string, kind: string, options: { mode?: ReadMode } = {}): Promise<void> {
    const target = await this.#target(apiVersion, kind, options.mode);
    this.#cacheFor(target).removeInformer(target);
  }

  /**
   * Indexes a field for list({ fieldSelector: 'field=value' }). Works before and after start, never blocks.
   */
  async indexField(
    apiVersion: string,
    kind: string,
    field: string,
    extract: FieldExtractor,
    options: { mode?: ReadMode } = {},
  ): Promise<void> {
    const target = await this.#target(apiVersion, kind, options.mode);
    await this.#cacheFor(target).indexField(target, field, extract);
  }

  /**
   * Starts every informer, and informers created afterwards as they are; resolves once the signal aborted
   * and every informer stopped. A second call fails with `informer already started`.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('informer already started');
    this.#started = true;
    for (const waiter of this.#startWaiters) waiter();
    this.#startWaiters.clear();
    this.#factory.start(signal);
    if (!signal.aborted)
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    await this.#factory.stopped();
  }

  /** Waits for start, then for every informer registered so far; false if the signal aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    if (!this.#started) {
      const started = await new Promise<boolean>((resolve) => {
        if (signal?.aborted) return resolve(false);
        const onStart = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        };
        const onAbort = () => {
          this.#startWaiters.delete(onStart);
          resolve(false);
        };
        this.#startWaiters.add(onStart);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      if (!started) return false;
    }
    return this.#factory.waitForCacheSync(signal);
  }

  #cacheFor(target: KindTarget): ScopedCache {
    return this.#byObject.get(byObjectKey(target.apiVersion, target.kind)) ?? this.#defaultCache;
  }

  /** Discovery, once per kind and mode (a failure is not remembered: the kind may appear later). */
  #target(apiVersion: string, kind: string, mode: ReadMode = 'full'): Promise<KindTarget> {
    const key = `${apiVersion}/${kind}|${mode}`;
    let target = this.#targets.get(key);
    if (!target) {
      target = this.#client.forKind(apiVersion, kind, mode).then((client) => {
        const { group, version } = parseApiVersion(apiVersion);
        return { apiVersion, group, version, kind, namespaced: client.ref.namespaced, mode, client };
      });
      target.catch(() => this.#targets.delete(key));
      this.#targets.set(key, target);
    }
    return target;
  }
}

/** New(config, options) in controller-runtime. */
export function newCache(options: CacheOptions): Promise<Cache> {
  return Cache.create(options);
}
