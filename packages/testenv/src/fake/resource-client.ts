import {
  INITIAL_EVENTS_END_ANNOTATION,
  type KubeList,
  type KubeObject,
  type ListMeta,
  newExpired,
  newInvalid,
  parseFieldSelector,
  parseLabelSelector,
  type Status,
  type StatusError,
  toPartialObjectMetadata,
} from '@certkit/apimachinery';
import type {
  ListOptions,
  ReadMode,
  RequestOptions,
  ResourceClient,
  ResourceRef,
  WatchEvent,
  WatchOptions,
} from '@certkit/runtime/client/types';
import { objectKey } from '@certkit/runtime/informers/store';

/**
 * An in-memory ResourceClient for unit tests of informers and caches: a tiny server with a revision
 * counter, event history (compactable, for 410s), pagination, watch-list, and hooks to fail calls the way
 * a real server or network would. Not for production use.
 */

type HistoryEvent = { rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: KubeObject };

/** A hook's verdict: undefined lets the call through, an error fails it. */
export type CallHook<O> = (options: O, callIndex: number) => Error | undefined;

export class FakeWatch implements AsyncIterable<WatchEvent> {
  readonly options: WatchOptions & RequestOptions;
  #queue: (WatchEvent | { end: true } | { error: Error })[] = [];
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(options: WatchOptions & RequestOptions) {
    this.options = options;
    options.signal?.addEventListener('abort', () => this.end(), { once: true });
  }

  get closed(): boolean {
    return this.#closed;
  }

  push(event: WatchEvent): void {
    if (this.#closed) return;
    this.#queue.push(event);
    this.#wake?.();
  }

  end(): void {
    if (this.#closed) return;
    this.#queue.push({ end: true });
    this.#wake?.();
  }

  fail(error: Error): void {
    if (this.#closed) return;
    this.#queue.push({ error });
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    try {
      for (;;) {
        while (this.#queue.length === 0) await new Promise<void>((r) => (this.#wake = r));
        this.#wake = undefined;
        const item = this.#queue.shift()!;
        if ('end' in item) return;
        if ('error' in item) throw item.error;
        yield item;
      }
    } finally {
      this.#closed = true;
    }
  }
}

export interface FakeResourceClientOptions {
  ref?: Partial<ResourceRef>;
  mode?: ReadMode;
  /** Answer sendInitialEvents watches (default true); false answers them with 422 as older servers do. */
  supportsWatchList?: boolean;
  /** Page size the server imposes even at RV "0" (default: honour limit only when RV is not "0"). */
  paginateAtZero?: boolean;
}

export class FakeResourceClient implements ResourceClient {
  readonly ref: ResourceRef;
  readonly mode: ReadMode;
  supportsWatchList: boolean;
  paginateAtZero: boolean;
  readonly objects = new Map<string, KubeObject>();
  readonly history: HistoryEvent[] = [];
  readonly watches: FakeWatch[] = [];
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  /** Fails list/listEach calls (after recording them). */
  onList: CallHook<ListOptions> | undefined;
  /** Fails watch calls (after recording them). */
  onWatch: CallHook<WatchOptions> | undefined;
  #rv = 100;
  #compactedRv = 0;
  /** Continue tokens issued; expire() invalidates them. */
  #tokenGeneration = 0;

  constructor(options: FakeResourceClientOptions = {}) {
    this.ref = {
      group: '',
      version: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
      ...options.ref,
    };
    this.mode = options.mode ?? 'full';
    this.supportsWatchList = options.supportsWatchList ?? true;
    this.paginateAtZero = options.paginateAtZero ?? false;
  }

  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** Open (not yet closed) watches. */
  get openWatches(): FakeWatch[] {
    return this.watches.filter((w) => !w.closed);
  }

  // -- server-side writes -------------------------------------------------------------------------------

  put(obj: KubeObject): KubeObject {
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
    const key = objectKey(stored);
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    this.objects.set(key, stored);
    this.#record(type, stored);
    return stored;
  }

  remove(namespace: string | undefined, name: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    const tombstone = structuredClone(old);
    tombstone.metadata!.resourceVersion = String(++this.#rv);
    this.#record('DELETED', tombstone);
  }

  /** Forgets history up to the current revision: watches from older RVs get 410. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.history.length = 0;
    this.#tokenGeneration++;
  }

  /** Sends a BOOKMARK at the current revision on every open watch that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.openWatches) {
      if (w.options.allowWatchBookmarks) {
        w.push({ type: 'BOOKMARK', object: this.#bookmarkObject(String(this.#rv)) });
      }
    }
  }

  /** Ends every open watch cleanly (a server-side timeout). */
  endWatches(): void {
    for (const w of this.openWatches) w.end();
  }

  /** Sends an ERROR event on every open watch, then ends it. */
  errorWatches(status: Status): void {
    for (const w of this.openWatches) {
      w.push({ type: 'ERROR', object: status });
      w.end();
    }
  }

  /** Breaks every open watch's stream with a transport error. */
  breakWatches(error: Error): void {
    for (const w of this.openWatches) w.fail(error);
  }

  // -- ResourceClient --------------------------------------------------------------------------------------

  async get(namespace: string | undefined, name: string): Promise<KubeObject> {
    const obj = this.objects.get(namespace ? `${namespace}/${name}` : name);
    if (!obj) throw new Error(`not found: ${name}`);
    return this.#render(obj);
  }

  async list(namespace: string | undefined, options: ListOptions & RequestOptions = {}): Promise<KubeList> {
    const items: KubeObject[] = [];
    const metadata = await this.listEach(namespace, options, (item) => items.push(item));
    return { apiVersion: 'v1', kind: `${this.ref.kind}List`, metadata, items };
  }

  async listEach(
    namespace: string | undefined,
    options: ListOptions & RequestOptions,
    onItem: (item: KubeObject) => void,
  ): Promise<ListMeta> {
    const index = this.listCalls.push({ ...options, signal: undefined } as ListOptions) - 1;
    const failure = this.onList?.(options, index);
    if (failure) throw failure;
    await Promise.resolve();
    let start = 0;
    let listRv = this.#rv;
    if (options.continue) {
      const [generation, offset, rv] = options.continue.split(':').map(Number);
      if (generation !== this.#tokenGeneration)
        throw newExpired('The provided continue parameter is too old');
      start = offset;
      listRv = rv;
    } else if (options.resourceVersion && options.resourceVersion !== '0') {
      if (Number(options.resourceVersion) < this.#compactedRv) throw this.#expired(options.resourceVersion);
    }
    const all = this.#select(namespace, options).sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
    const honourLimit = options.resourceVersion !== '0' || this.paginateAtZero || !!options.continue;
    const end = honourLimit && options.limit ? Math.min(all.length, start + options.limit) : all.length;
    for (let i = start; i < end; i++) onItem(this.#render(all[i]));
    const meta: ListMeta = { resourceVersion: String(listRv) };
    if (end < all.length) meta.continue = `${this.#tokenGeneration}:${end}:${listRv}`;
    return meta;
  }

  async watch(
    namespace: string | undefined,
    options: WatchOptions & RequestOptions,
  ): Promise<AsyncIterable<WatchEvent>> {
    const index = this.watchCalls.push({ ...options, signal: undefined } as WatchOptions) - 1;
    const failure = this.onWatch?.(options, index);
    if (failure) throw failure;
    await Promise.resolve();
    if (options.sendInitialEvents && !this.supportsWatchList) {
      throw newInvalid('meta.k8s.io', 'ListOptions', '', [
        {
          type: 'FieldValueForbidden',
          field: 'sendInitialEvents',
          detail: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        },
      ]);
    }
    const watch = new FakeWatch(options);
    const matches = (obj: KubeObject) => this.#matches(obj, namespace, options);
    if (options.sendInitialEvents) {
      for (const obj of this.objects.values()) {
        if (matches(obj)) watch.push({ type: 'ADDED', object: this.#render(obj) });
      }
      if (options.allowWatchBookmarks) {
        watch.push({
          type: 'BOOKMARK',
          object: this.#bookmarkObject(String(this.#rv), { [INITIAL_EVENTS_END_ANNOTATION]: 'true' }),
        });
      }
    } else {
      const from = Number(options.resourceVersion || this.#rv);
      if (from < this.#compactedRv) throw this.#expired(String(from));
      for (const e of this.history) {
        if (e.rv > from && matches(e.obj)) watch.push({ type: e.type, object: this.#render(e.obj) });
      }
    }
    (watch as unknown as { filter: (o: KubeObject) => boolean }).filter = matches;
    this.watches.push(watch);
    return watch;
  }

  async create(): Promise<KubeObject> {
    throw new Error('not implemented');
  }
  async update(): Promise<KubeObject> {
    throw new Error('not implemented');
  }
  async patch(): Promise<KubeObject> {
    throw new Error('not implemented');
  }
  async delete(): Promise<void> {
    throw new Error('not implemented');
  }

  // -- internals -----------------------------------------------------------------------------------------

  #record(type: HistoryEvent['type'], obj: KubeObject): void {
    this.history.push({ rv: this.#rv, type, obj });
    for (const w of this.openWatches) {
      const filter = (w as unknown as { filter?: (o: KubeObject) => boolean }).filter;
      if (!filter || filter(obj)) w.push({ type, object: this.#render(obj) });
    }
  }

  #expired(rv: string): StatusError {
    return newExpired(`too old resource version: ${rv} (${this.#compactedRv})`);
  }

  #render(obj: KubeObject): KubeObject {
    const copy = structuredClone(obj);
    if (this.mode === 'metadata') return toPartialObjectMetadata(copy) as unknown as KubeObject;
    // As kube-apiserver's JSON lists: items without apiVersion/kind is fine for the informer to fix up.
    return copy;
  }

  #bookmarkObject(resourceVersion: string, annotations?: Record<string, string>): KubeObject {
    return {
      apiVersion: this.mode === 'metadata' ? 'meta.k8s.io/v1' : this.ref.version,
      kind: this.mode === 'metadata' ? 'PartialObjectMetadata' : this.ref.kind,
      metadata: annotations ? { resourceVersion, annotations } : { resourceVersion },
    };
  }

  #select(namespace: string | undefined, options: ListOptions): KubeObject[] {
    return [...this.objects.values()].filter((o) => this.#matches(o, namespace, options));
  }

  #matches(obj: KubeObject, namespace: string | undefined, options: ListOptions): boolean {
    if (namespace && obj.metadata?.namespace !== namespace) return false;
    if (options.labelSelector && !parseLabelSelector(options.labelSelector).matches(obj.metadata?.labels)) {
      return false;
    }
    if (options.fieldSelector) {
      const fields: Record<string, string> = {
        'metadata.name': obj.metadata?.name ?? '',
        'metadata.namespace': obj.metadata?.namespace ?? '',
      };
      if (typeof obj.type === 'string') fields.type = obj.type;
      if (!parseFieldSelector(options.fieldSelector).matches(fields)) return false;
    }
    return true;
  }
}

/** Polls `predicate` until it holds or `timeoutMs` passes (then throws with `what`). */
export async function eventually(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
