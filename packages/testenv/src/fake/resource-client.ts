import type { KubeList, KubeObject, ListMeta, Status } from '@certkit/apimachinery';
import {
  FakeClient,
  objectKeyOf,
  type ObjectTracker,
  resourceKey,
  type WatchQueue,
} from '@certkit/runtime/client/fake/index';
import type {
  DeleteOptions,
  ListOptions,
  PatchType,
  ReadMode,
  RequestOptions,
  ResourceClient,
  ResourceRef,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '@certkit/runtime/client/types';
import { objectKey } from '@certkit/runtime/informers/store';

/**
 * One resource of the runtime's in-memory client (`@certkit/runtime/client/fake`, which models the API
 * server's answers, compaction and watch streams), with what unit tests of informers and caches add on top:
 * every list and watch request recorded with its options, hooks that fail calls the way a server or the
 * network would, server-side writes and watch control by short names, and a server that ignores `limit` at
 * resourceVersion "0" (as kube-apiserver's watch cache does) unless told to page there.
 */

/** A hook's verdict: undefined lets the call through, an error fails it. */
export type CallHook<O> = (options: O, callIndex: number) => Error | undefined;

export interface FakeResourceClientOptions {
  /** The resource (default: ConfigMaps); missing fields come from the default. */
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
  readonly paginateAtZero: boolean;
  /** The in-memory server behind this resource. */
  readonly server: FakeClient;
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  /** Fails list/listEach calls (after recording them). */
  onList: CallHook<ListOptions> | undefined;
  /** Fails watch calls (after recording them). */
  onWatch: CallHook<WatchOptions> | undefined;
  readonly #client: ResourceClient;
  readonly #resource: string;

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
    this.paginateAtZero = options.paginateAtZero ?? false;
    this.server = new FakeClient({ watchList: options.supportsWatchList ?? true });
    this.#client = this.server.resource(this.ref, this.mode);
    this.#resource = resourceKey(this.ref);
  }

  get #tracker(): ObjectTracker {
    return this.server.tracker;
  }

  /** The server's current revision. */
  get resourceVersion(): string {
    return String(this.#tracker.revision);
  }

  /** The stored objects by `namespace/name`. */
  get objects(): Map<string, KubeObject> {
    return new Map(this.#tracker.list(this.#resource).map((obj) => [objectKey(obj), obj]));
  }

  /** Open (not yet closed) watches. */
  get openWatches(): WatchQueue[] {
    return this.#tracker.openWatches(this.#resource);
  }

  // -- server-side writes and events ----------------------------------------------------------------------

  /** Stores the object as given (a new resourceVersion, nothing else changed), telling the watches. */
  put(obj: KubeObject): KubeObject {
    return structuredClone(this.#tracker.put(this.#resource, structuredClone(obj)));
  }

  remove(namespace: string | undefined, name: string): void {
    this.#tracker.remove(this.#resource, objectKeyOf(namespace, name));
  }

  /** Forgets history up to the current revision: lists, continues and watches from older RVs get 410. */
  compact(): void {
    this.#tracker.compact();
  }

  bookmark(): void {
    this.#tracker.bookmarkWatches();
  }

  /** Ends every open watch cleanly (a server-side timeout). */
  endWatches(): void {
    this.#tracker.endWatches();
  }

  /** Sends an ERROR event on every open watch, then ends it. */
  errorWatches(status: Status): void {
    this.#tracker.errorWatches(status);
  }

  /** Breaks every open watch's stream with a transport error. */
  breakWatches(error: Error): void {
    this.#tracker.breakWatches(error);
  }

  // -- ResourceClient --------------------------------------------------------------------------------------

  get(namespace: string | undefined, name: string, options?: RequestOptions): Promise<KubeObject> {
    return this.#client.get(namespace, name, options);
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
    const ignoresLimit = options.resourceVersion === '0' && !options.continue && !this.paginateAtZero;
    return this.#client.listEach(
      namespace,
      ignoresLimit ? { ...options, limit: undefined } : options,
      onItem,
    );
  }

  async watch(
    namespace: string | undefined,
    options: WatchOptions & RequestOptions,
  ): Promise<AsyncIterable<WatchEvent>> {
    const index = this.watchCalls.push({ ...options, signal: undefined } as WatchOptions) - 1;
    const failure = this.onWatch?.(options, index);
    if (failure) throw failure;
    return this.#client.watch(namespace, options);
  }

  create(namespace: string | undefined, obj: KubeObject, options?: WriteOptions & RequestOptions) {
    return this.#client.create(namespace, obj, options);
  }

  update(obj: KubeObject, options?: WriteOptions & RequestOptions) {
    return this.#client.update(obj, options);
  }

  patch(
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options?: WriteOptions & RequestOptions,
  ) {
    return this.#client.patch(namespace, name, type, patch, options);
  }

  delete(namespace: string | undefined, name: string, options?: DeleteOptions & RequestOptions) {
    return this.#client.delete(namespace, name, options);
  }
}
