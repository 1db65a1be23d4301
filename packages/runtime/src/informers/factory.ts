import type { KubeObject } from '@certkit/apimachinery';
import type { ReadMode, ResourceClient, ResourceRef } from '../client/types.ts';
import type { BackoffOptions } from './backoff.ts';
import { defaultLogger, type Logger } from '../log.ts';
import { stripManagedFields, type TransformFunc } from './objects.ts';
import { WatchListSupport } from './reflector.ts';
import { SharedInformer } from './shared-informer.ts';
import type { Indexers } from './store.ts';

export { stripManagedFields } from './objects.ts';

/**
 * client-go's SharedInformerFactory (and metadatainformer's): one informer per (resource, read mode,
 * namespace, label selector, field selector), shared by everyone who asks for the same one.
 */

/** Makes a ResourceClient for a resource, as KubeClient.resource does. */
export interface ResourceClientSource {
  /** A client for one resource in this read mode. */
  resource(ref: ResourceRef, mode: ReadMode): ResourceClient;
}

/** What an informer is for. The first five fields identify it; the others apply when it is created. */
export interface InformerRequest {
  /** 'full' (default) or 'metadata' (PartialObjectMetadata: nothing but metadata is read or kept). */
  mode?: ReadMode;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Replaces the factory's default transform (which strips managedFields); pass `(o) => o` to keep all. */
  transform?: TransformFunc;
  resyncPeriodMs?: number;
  freezeObjects?: boolean;
  allowWatchBookmarks?: boolean;
  indexers?: Indexers;
}

/** Options of a SharedInformerFactory: the client, and defaults of the informers it creates. */
export interface SharedInformerFactoryOptions {
  /** Needed to ask for informers by ResourceRef; informers can also be asked for by ResourceClient. */
  client?: ResourceClientSource;
  /** Resync period of informers whose request names none (default 0: no periodic resync). */
  defaultResyncMs?: number;
  /** Transform of informers whose request names none (default: stripManagedFields). */
  defaultTransform?: TransformFunc;
  useWatchList?: boolean;
  backoff?: BackoffOptions;
  log?: Logger;
}

interface Entry {
  key: string;
  informer: SharedInformer;
  stop: AbortController;
  running?: Promise<void>;
}

/** The identity of an informer in the factory. */
export function informerKey(ref: ResourceRef, request: InformerRequest = {}): string {
  return JSON.stringify([
    ref.group,
    ref.version,
    ref.resource,
    request.mode ?? 'full',
    request.namespace ?? '',
    request.labelSelector ?? '',
    request.fieldSelector ?? '',
  ]);
}

/**
 * client-go's SharedInformerFactory: one informer per resource and request, shared by everyone who asks,
 * started and synced together.
 */
export class SharedInformerFactory {
  readonly #client: ResourceClientSource | undefined;
  readonly #defaultResyncMs: number;
  readonly #defaultTransform: TransformFunc;
  readonly #useWatchList: boolean | undefined;
  readonly #backoff: BackoffOptions | undefined;
  readonly #log: Logger;
  /** One per factory: its informers talk to one server, and only the first needs to find out. */
  readonly #watchListSupport = new WatchListSupport();
  readonly #entries = new Map<string, Entry>();
  readonly #running = new Set<Promise<void>>();
  #signal: AbortSignal | undefined;

  constructor(options: SharedInformerFactoryOptions = {}) {
    this.#client = options.client;
    this.#defaultResyncMs = options.defaultResyncMs ?? 0;
    this.#defaultTransform = options.defaultTransform ?? stripManagedFields;
    this.#useWatchList = options.useWatchList;
    this.#backoff = options.backoff;
    this.#log = options.log ?? defaultLogger;
  }

  /**
   * The informer for this resource and request, created (and, if the factory is started, started) on first
   * use. Given a ResourceClient, its mode wins over request.mode.
   */
  informerFor<T extends KubeObject = KubeObject>(
    target: ResourceRef | ResourceClient,
    request: InformerRequest = {},
  ): SharedInformer<T> {
    const client = this.#clientFor(target, request.mode ?? 'full');
    const normalized: InformerRequest = { ...request, mode: client.mode };
    const key = informerKey(client.ref, normalized);
    const existing = this.#entries.get(key);
    if (existing) return existing.informer as unknown as SharedInformer<T>;

    const informer = new SharedInformer<KubeObject>({
      client,
      namespace: request.namespace,
      labelSelector: request.labelSelector,
      fieldSelector: request.fieldSelector,
      transform: request.transform ?? this.#defaultTransform,
      resyncPeriodMs: request.resyncPeriodMs ?? this.#defaultResyncMs,
      indexers: request.indexers,
      freezeObjects: request.freezeObjects,
      allowWatchBookmarks: request.allowWatchBookmarks,
      useWatchList: this.#useWatchList,
      watchListSupport: this.#watchListSupport,
      backoff: this.#backoff,
      log: this.#log,
    });
    const entry: Entry = { key, informer, stop: new AbortController() };
    this.#entries.set(key, entry);
    if (this.#signal && !this.#signal.aborted) this.#run(entry, this.#signal);
    return informer as unknown as SharedInformer<T>;
  }

  /** An informer over PartialObjectMetadata: what to use for kinds whose contents are not needed. */
  metadataInformer<T extends KubeObject = KubeObject>(
    target: ResourceRef,
    request: Omit<InformerRequest, 'mode'> = {},
  ): SharedInformer<T> {
    return this.informerFor<T>(target, { ...request, mode: 'metadata' });
  }

  /** Starts every informer not yet running; informers created afterwards start at once. */
  start(signal: AbortSignal): void {
    if (this.#signal && !this.#signal.aborted && this.#signal !== signal) {
      this.#log({ level: 'warn', msg: 'informer factory started twice with different signals' });
    }
    this.#signal = signal;
    for (const entry of this.#entries.values()) {
      if (!entry.running) this.#run(entry, signal);
    }
  }

  get started(): boolean {
    return this.#signal !== undefined;
  }

  /** Resolves true when every informer created so far has synced, false if the signal aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#entries.values()].map((e) => e.informer.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** Stops one informer and forgets it: the next request for the same key gets a fresh informer. */
  remove(informer: SharedInformer): void {
    for (const [key, entry] of this.#entries) {
      if (entry.informer !== informer) continue;
      this.#entries.delete(key);
      entry.stop.abort();
      return;
    }
  }

  /** Every informer the factory has created. */
  informers(): SharedInformer[] {
    return [...this.#entries.values()].map((e) => e.informer);
  }

  /** Resolves once every informer that was started has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  #run(entry: Entry, signal: AbortSignal): void {
    const running = entry.informer
      .run(AbortSignal.any([signal, entry.stop.signal]))
      .catch((err: unknown) => {
        this.#log({
          level: 'error',
          msg: 'informer failed',
          informer: entry.informer.name,
          err: String(err),
        });
      })
      .finally(() => this.#running.delete(running));
    entry.running = running;
    this.#running.add(running);
  }

  #clientFor(target: ResourceRef | ResourceClient, mode: ReadMode): ResourceClient {
    if (isResourceClient(target)) return target;
    if (!this.#client)
      throw new Error('this informer factory has no client: ask for informers by ResourceClient');
    return this.#client.resource(target, mode);
  }
}

function isResourceClient(target: ResourceRef | ResourceClient): target is ResourceClient {
  return typeof (target as ResourceClient).watch === 'function';
}
