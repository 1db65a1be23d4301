import type { KubeList, KubeObject, ListMeta, Status, WatchEventType } from '@certkit/apimachinery';

/**
 * The runtime's client contract: what informers, caches, the manager and leader election use to talk to any
 * Kubernetes API server (ours or kube-apiserver), over plain JSON objects. client/ implements it.
 */

/** A resource as discovery describes it; `kind` is the kind of its objects. */
export interface ResourceRef {
  group: string;
  version: string;
  /** Plural name, as in the URL: `secrets`, `certificates`. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

/**
 * Objects as full JSON, or as PartialObjectMetadata (`metadata` mode: nothing but metadata crosses the wire).
 */
export type ReadMode = 'full' | 'metadata';

/** Query parameters of a list request. */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  timeoutSeconds?: number;
}

/** Query parameters of a watch request. */
export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  /**
   * Client-side only: how long the stream may stay silent before the iterator fails with a
   * WatchInactivityError (a half-open connection). Default timeoutSeconds + 30 s, or 5 minutes without it.
   */
  inactivityTimeoutMs?: number;
}

/** Query parameters of a create, update or patch. */
export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /**
   * `status` to write the status subresource; on create, a subresource of the object named by the body's
   * metadata.name (`token` of a ServiceAccount).
   */
  subresource?: string;
  /** Server-side apply only: take the fields other managers own instead of failing with a Conflict. */
  force?: boolean;
}

/**
 * `merge` (JSON merge patch), `json` (JSON patch), `strategic` (strategic merge patch, built-in kinds
 * only) or `apply` (server-side apply of the JSON given; needs a fieldManager).
 */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

/** The body of a delete: propagation policy, preconditions, grace period, dry run. */
export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

/** One event of a watch; ERROR events carry a Status (the reflector turns them into errors). */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T | Status;
}

/** What every request accepts: a signal that aborts it. */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** CRUD, list and watch of one resource. Failures are StatusErrors (isNotFound(err), isConflict(err), …). */
export interface ResourceClient<T extends KubeObject = KubeObject> {
  readonly ref: ResourceRef;
  readonly mode: ReadMode;
  /** Reads one object; a NotFound StatusError when there is none. */
  get(namespace: string | undefined, name: string, options?: RequestOptions): Promise<T>;
  /**
   * Lists the objects (of a namespace, or of all when `namespace` is undefined), one page when `limit` is
   * set.
   */
  list(namespace: string | undefined, options?: ListOptions & RequestOptions): Promise<KubeList<T>>;
  /**
   * Lists one page, decoding the response item by item: each item is passed to onItem (after which the
   * caller may transform or drop it) before the next is decoded, so a large list never sits in memory whole.
   * Returns the list's metadata (resourceVersion, continue).
   */
  listEach(
    namespace: string | undefined,
    options: ListOptions & RequestOptions,
    onItem: (item: T) => void,
  ): Promise<ListMeta>;
  /** Creates an object; resolves with it as stored. */
  create(namespace: string | undefined, obj: T, options?: WriteOptions & RequestOptions): Promise<T>;
  /** Replaces an object; its `metadata.resourceVersion` makes a concurrent change a Conflict. */
  update(obj: T, options?: WriteOptions & RequestOptions): Promise<T>;
  /** Patches an object with a patch of `type`. */
  patch(
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options?: WriteOptions & RequestOptions,
  ): Promise<T>;
  /** Deletes an object; resolves once the server accepted the deletion (finalizers may keep it a while). */
  delete(
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions & RequestOptions,
  ): Promise<void>;
  /**
   * Opens a watch. Resolves once the server accepted it (HTTP errors, e.g. 429 or 410, reject with a
   * StatusError); the events then arrive through the async iterator, which ends when the server ends the
   * stream, and throws if the connection breaks or stays silent longer than the inactivity timeout.
   * Aborting the signal ends it.
   */
  watch(
    namespace: string | undefined,
    options: WatchOptions & RequestOptions,
  ): Promise<AsyncIterable<WatchEvent<T>>>;
}

/**
 * What controllers are given to reach the API: a maker of ResourceClients, as controller-runtime's
 * client.Client. KubeClient is the real one; `client/fake` (FakeClient) is the in-memory one for unit tests.
 */
export interface Client {
  /** A client for one resource, reading full objects or only their metadata. */
  resource<T extends KubeObject = KubeObject>(ref: ResourceRef, mode?: ReadMode): ResourceClient<T>;
}
