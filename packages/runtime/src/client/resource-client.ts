import {
  type KubeList,
  type KubeObject,
  type ListMeta,
  listOptionsToQuery,
  pathSegmentNameErrors,
  toPartialObjectMetadata,
} from '@certkit/apimachinery';
import { ListScanner } from './list-scanner.ts';
import type { HttpRequestSpec, Transport } from './transport.ts';
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
} from './types.ts';
import { WatchStream } from './watch-stream.ts';

/**
 * ResourceClient over REST: URLs as kube-apiserver lays them out, metadata-only reads through content
 * negotiation, lists decoded item by item, watches as async iterators.
 */

/** What metadata mode asks for; the trailing plain JSON lets servers that cannot do it answer anyway. */
export const METADATA_ACCEPT =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
/** What metadata-mode lists ask for: a PartialObjectMetadataList, or plain JSON from servers that cannot. */
export const METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** The Content-Type of each patch type. */
export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // JSON is YAML: the server reads an apply body of JSON as it reads kubectl's.
  apply: 'application/apply-patch+yaml',
};

/**
 * A silent watch is declared dead after timeoutSeconds + 30 s: the server ends a healthy watch at
 * timeoutSeconds, so anything past that (plus slack for a slow close) means the connection is gone. Without
 * timeoutSeconds, 5 minutes (client-go's minimum watch timeout): a quiet resource then re-watches every
 * 5 minutes, which costs one request; missing a dead connection for an hour would cost stale caches.
 */
export const WATCH_INACTIVITY_SLACK_MS = 30_000;
/** How long a watch without timeoutSeconds may stay silent before it is taken for dead. */
export const DEFAULT_WATCH_INACTIVITY_MS = 5 * 60_000;

export function watchInactivityTimeoutMs(options: WatchOptions): number {
  if (options.inactivityTimeoutMs !== undefined) return options.inactivityTimeoutMs;
  if (options.timeoutSeconds) return options.timeoutSeconds * 1000 + WATCH_INACTIVITY_SLACK_MS;
  return DEFAULT_WATCH_INACTIVITY_MS;
}

/**
 * The name or namespace, refused as client-go's request builder refuses it when it cannot be one path
 * segment: sent, a `..` name was resolved away with the segment before it, so that deleting the Secret `..`
 * of a namespace deleted the namespace.
 */
function pathSegment(what: 'namespace' | 'resource name', value: string): string {
  const errors = pathSegmentNameErrors(value);
  if (errors.length > 0) throw new Error(`invalid ${what} ${JSON.stringify(value)}: [${errors.join(' ')}]`);
  return value;
}

/** The URL path of a resource's collection or one of its objects. */
export function resourcePath(
  ref: ResourceRef,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): string {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  // Namespace is ignored for cluster-scoped resources, as controller-runtime's NamespaceIfScoped.
  if (ref.namespaced && namespace)
    path += `/namespaces/${encodeURIComponent(pathSegment('namespace', namespace))}`;
  path += `/${ref.resource}`;
  if (name !== undefined) path += `/${encodeURIComponent(pathSegment('resource name', name))}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

function isPartialObjectMetadata(obj: KubeObject): boolean {
  return (
    obj.kind === 'PartialObjectMetadata' &&
    typeof obj.apiVersion === 'string' &&
    obj.apiVersion.startsWith('meta.k8s.io/')
  );
}

export class RestResourceClient<T extends KubeObject = KubeObject> implements ResourceClient<T> {
  readonly ref: ResourceRef;
  readonly mode: ReadMode;
  readonly #transport: Transport;
  readonly #qualified: string;

  constructor(transport: Transport, ref: ResourceRef, mode: ReadMode = 'full') {
    this.#transport = transport;
    this.ref = ref;
    this.mode = mode;
    this.#qualified = ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
  }

  async get(namespace: string | undefined, name: string, options: RequestOptions = {}): Promise<T> {
    return this.#object({
      method: 'GET',
      verb: 'get',
      path: this.#objectPath(namespace, name, 'get'),
      target: this.#target(name),
      signal: options.signal,
    });
  }

  async list(
    namespace: string | undefined,
    options: ListOptions & RequestOptions = {},
  ): Promise<KubeList<T>> {
    const list = await this.#transport.json<KubeList<KubeObject>>(this.#listRequest(namespace, options));
    const items = (list.items ?? []).map((item) => this.#decodeItem(item));
    if (this.mode === 'metadata') {
      return {
        apiVersion: 'meta.k8s.io/v1',
        kind: 'PartialObjectMetadataList',
        metadata: list.metadata ?? {},
        items,
      };
    }
    return { ...list, metadata: list.metadata ?? {}, items };
  }

  async listEach(
    namespace: string | undefined,
    options: ListOptions & RequestOptions,
    onItem: (item: T) => void,
  ): Promise<ListMeta> {
    const { request, response } = await this.#transport.stream(this.#listRequest(namespace, options));
    return new Promise<ListMeta>((resolve, reject) => {
      const scanner = new ListScanner((item) => onItem(this.#decodeItem(item as KubeObject)));
      let failed = false;
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        request.destroy();
        response.destroy();
        reject(err);
      };
      response.on('data', (chunk: Buffer) => {
        if (failed) return;
        try {
          scanner.write(chunk);
        } catch (err) {
          fail(err); // a malformed body, or onItem threw: stop reading either way
        }
      });
      response.once('end', () => {
        if (failed) return;
        try {
          scanner.end();
        } catch (err) {
          fail(err);
          return;
        }
        resolve((scanner.fields.metadata as ListMeta | undefined) ?? {});
      });
      response.on('error', fail);
      response.once('close', () => {
        if (!response.complete) fail(new Error(`list of ${this.#qualified}: connection closed mid-response`));
      });
    });
  }

  async create(
    namespace: string | undefined,
    obj: T,
    options: WriteOptions & RequestOptions = {},
  ): Promise<T> {
    const ns = namespace ?? obj.metadata?.namespace;
    if (this.ref.namespaced && !ns) throw this.#namespaceRequired('create', obj.metadata?.name ?? '');
    if (options.subresource && !obj.metadata?.name) {
      throw new TypeError(
        `create of ${this.#qualified}/${options.subresource}: the body has no metadata.name`,
      );
    }
    return this.#object({
      method: 'POST',
      verb: 'create',
      // A subresource is created on a named object (serviceaccounts/NAME/token), as client-go's
      // SubResource(...).Create; `obj` is then the subresource's body, named after its parent.
      path: options.subresource
        ? resourcePath(this.ref, ns, obj.metadata!.name, options.subresource)
        : resourcePath(this.ref, ns),
      query: writeQuery(options),
      body: obj,
      target: this.#target(obj.metadata?.name),
      signal: options.signal,
    });
  }

  async update(obj: T, options: WriteOptions & RequestOptions = {}): Promise<T> {
    const name = obj.metadata?.name;
    if (!name) throw new TypeError(`update of ${this.#qualified}: the object has no metadata.name`);
    return this.#object({
      method: 'PUT',
      verb: 'update',
      path: resourcePath(
        this.ref,
        this.#requireNamespace(obj.metadata?.namespace, name, 'update'),
        name,
        options.subresource,
      ),
      query: writeQuery(options),
      body: obj,
      target: this.#target(name),
      signal: options.signal,
    });
  }

  async patch(
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions & RequestOptions = {},
  ): Promise<T> {
    const contentType = PATCH_CONTENT_TYPES[type];
    if (!contentType) throw new TypeError(`unknown patch type ${JSON.stringify(type)}`);
    return this.#object({
      method: 'PATCH',
      verb: 'patch',
      path: resourcePath(
        this.ref,
        this.#requireNamespace(namespace, name, 'patch'),
        name,
        options.subresource,
      ),
      query: writeQuery(options),
      body: patch,
      contentType,
      target: this.#target(name),
      signal: options.signal,
    });
  }

  async delete(
    namespace: string | undefined,
    name: string,
    options: DeleteOptions & RequestOptions = {},
  ): Promise<void> {
    const body = deleteBody(options);
    await this.#transport.json<unknown>({
      method: 'DELETE',
      verb: 'delete',
      path: this.#objectPath(namespace, name, 'delete'),
      ...(body ? { body } : {}),
      target: this.#target(name),
      signal: options.signal,
    });
  }

  async watch(
    namespace: string | undefined,
    options: WatchOptions & RequestOptions = {},
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    const { request, response } = await this.#transport.stream({
      method: 'GET',
      verb: 'watch',
      path: resourcePath(this.ref, namespace),
      query: listOptionsToQuery({ ...listQueryFields(options), watch: true }),
      accept: this.mode === 'metadata' ? METADATA_ACCEPT : 'application/json',
      target: this.#target(),
      signal: options.signal,
    });
    const what =
      this.ref.namespaced && namespace ? `${this.#qualified} in namespace "${namespace}"` : this.#qualified;
    return new WatchStream<T>(request, response, {
      what,
      inactivityTimeoutMs: watchInactivityTimeoutMs(options),
      signal: options.signal,
      decode: (event) =>
        event.type === 'ERROR'
          ? (event as WatchEvent<T>)
          : { type: event.type, object: this.#decodeItem(event.object as KubeObject) },
    });
  }

  async #object(spec: Omit<HttpRequestSpec, 'accept'>): Promise<T> {
    const obj = await this.#transport.json<KubeObject>({
      ...spec,
      accept: this.mode === 'metadata' ? METADATA_ACCEPT : 'application/json',
    });
    return (
      this.mode === 'metadata' && !isPartialObjectMetadata(obj) ? toPartialObjectMetadata(obj) : obj
    ) as T;
  }

  /**
   * Items of a list carry no apiVersion/kind from kube-apiserver while watch events do; we fill them in so
   * an informer's cache holds the same shape whichever way an object arrived. In metadata mode, a server that
   * sent full objects anyway has them stripped here: callers only ever see metadata.
   */
  /** The GET of a collection, as list (one JSON body) and listEach (items streamed) send it. */
  #listRequest(namespace: string | undefined, options: ListOptions & RequestOptions): HttpRequestSpec {
    return {
      method: 'GET',
      verb: 'list',
      path: resourcePath(this.ref, namespace),
      query: listQuery(options),
      accept: this.mode === 'metadata' ? METADATA_LIST_ACCEPT : 'application/json',
      target: this.#target(),
      signal: options.signal,
    };
  }

  #decodeItem(item: KubeObject): T {
    if (this.mode === 'metadata') {
      if (isPartialObjectMetadata(item)) return item as T;
      return toPartialObjectMetadata(item) as unknown as T;
    }
    item.apiVersion ??= this.ref.group ? `${this.ref.group}/${this.ref.version}` : this.ref.version;
    item.kind ??= this.ref.kind;
    return item as T;
  }

  #objectPath(namespace: string | undefined, name: string, verb: string): string {
    return resourcePath(this.ref, this.#requireNamespace(namespace, name, verb), name);
  }

  #requireNamespace(namespace: string | undefined, name: string, verb: string): string | undefined {
    if (this.ref.namespaced && !namespace) throw this.#namespaceRequired(verb, name);
    return namespace;
  }

  #namespaceRequired(verb: string, name: string): TypeError {
    return new TypeError(
      `${verb} ${this.#qualified} "${name}": ${this.ref.resource} are namespaced, a namespace is required`,
    );
  }

  #target(name?: string): HttpRequestSpec['target'] {
    return { group: this.ref.group, resource: this.ref.resource, ...(name ? { name } : {}) };
  }
}

function listQueryFields(options: WatchOptions): Parameters<typeof listOptionsToQuery>[0] {
  return {
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    limit: options.limit,
    continue: options.continue,
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch,
    timeoutSeconds: options.timeoutSeconds,
    allowWatchBookmarks: options.allowWatchBookmarks,
    sendInitialEvents: options.sendInitialEvents,
  };
}

function listQuery(options: ListOptions): URLSearchParams {
  return listOptionsToQuery(listQueryFields(options));
}

function writeQuery(options: WriteOptions): URLSearchParams | undefined {
  if (!options.dryRun && !options.fieldManager && !options.force) return undefined;
  const query = new URLSearchParams();
  if (options.dryRun) query.set('dryRun', 'All');
  if (options.fieldManager) query.set('fieldManager', options.fieldManager);
  if (options.force) query.set('force', 'true');
  return query;
}

function deleteBody(options: DeleteOptions): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
  if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
  if (options.preconditions) body.preconditions = options.preconditions;
  if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options.dryRun) body.dryRun = ['All'];
  return Object.keys(body).length > 2 ? body : undefined;
}
