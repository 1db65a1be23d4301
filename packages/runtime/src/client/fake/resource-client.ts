import { randomUUID } from 'node:crypto';
import {
  formatTime,
  INITIAL_EVENTS_END_ANNOTATION,
  jsonEqual,
  type KubeList,
  type KubeObject,
  type ListMeta,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newExpired,
  newInvalid,
  newNotFound,
  newUnsupportedMediaType,
  OBJECT_MODIFIED,
  parseFieldSelector,
  parseLabelSelector,
  toPartialObjectMetadata,
} from '@certkit/apimachinery';
import fastJsonPatch from 'fast-json-patch';
import jsonMergePatch from 'json-merge-patch';
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
} from '../types.ts';
import { PATCH_CONTENT_TYPES } from '../resource-client.ts';
import { type ObjectTracker, objectKeyOf, resourceKey } from './tracker.ts';
import { WatchQueue } from './watch.ts';

/**
 * One resource of the in-memory client: the ResourceClient contract with the API server's answers for what
 * controllers depend on — a resourceVersion per write, 409 Conflict on a stale update or a failed delete
 * precondition, 409 AlreadyExists, 404 NotFound, 422 Invalid for a nameless create, all as Kubernetes
 * `Status` errors (isConflict(err), isNotFound(err)… work on them); the status subresource; generateName;
 * label and field selectors; deletion that waits for finalizers (deletionTimestamp); metadata.generation
 * bumped when anything but metadata and status changes; watches from a resourceVersion or with initial
 * events; 410 Expired for a list, continue token or watch from before the tracker's last compaction (as a
 * server reading etcd); 422 for a watch-list when the client is told the server lacks it. Not modelled, as in controller-runtime's fake client: admission, defaulting, schema validation,
 * owner-reference garbage collection, managedFields and strategic merge patch.
 */

/**
 * One call the client answered, in order (client-go's testing.Action): reads as they were asked, writes as
 * they succeeded, with what they stored. A write that failed (a conflict, say) or was a dry run is not one.
 */
export interface FakeAction {
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
  /** `resource.group`, as in `kubectl get`: `secrets`, `certificates.cert-manager.io`. */
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** What a write stored (a copy); for a delete, the object's last state (or, held by finalizers, marked). */
  object?: KubeObject;
}

export interface FakeResourceClientOptions {
  /** Whether `status` is a subresource: then only status writes change it, and creates drop it. */
  statusSubresource: boolean;
  /** Whether watches may ask for initial events (the WatchList feature); false answers them 422. */
  watchList: boolean;
  now: () => Date;
  record: (action: FakeAction) => void;
}

/** As the API server's names.SimpleNameGenerator: five characters from a reduced alphabet. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return suffix;
}

/** Everything outside metadata and status: what bumps metadata.generation when it changes. */
function specOf(obj: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = obj as Record<string, unknown>;
  return rest;
}

export class TrackedResourceClient<T extends KubeObject = KubeObject> implements ResourceClient<T> {
  readonly ref: ResourceRef;
  readonly mode: ReadMode;
  readonly #tracker: ObjectTracker;
  readonly #options: FakeResourceClientOptions;
  readonly #resource: string;

  constructor(tracker: ObjectTracker, ref: ResourceRef, mode: ReadMode, options: FakeResourceClientOptions) {
    this.ref = ref;
    this.mode = mode;
    this.#tracker = tracker;
    this.#options = options;
    this.#resource = resourceKey(ref);
  }

  async get(namespace: string | undefined, name: string, _options?: RequestOptions): Promise<T> {
    this.#record({ verb: 'get', namespace, name });
    return this.#render(this.#existing(namespace, name));
  }

  async list(
    namespace: string | undefined,
    options: ListOptions & RequestOptions = {},
  ): Promise<KubeList<T>> {
    const items: T[] = [];
    const metadata = await this.listEach(namespace, options, (item) => items.push(item));
    const kind = this.mode === 'metadata' ? 'PartialObjectMetadataList' : `${this.ref.kind}List`;
    const apiVersion = this.mode === 'metadata' ? 'meta.k8s.io/v1' : this.#apiVersion();
    return { apiVersion, kind, metadata, items };
  }

  async listEach(
    namespace: string | undefined,
    options: ListOptions & RequestOptions,
    onItem: (item: T) => void,
  ): Promise<ListMeta> {
    this.#record({ verb: 'list', namespace });
    const matches = this.#matcher(namespace, options);
    const all = this.#tracker.list(this.#resource).filter(matches);
    // A continue token is the offset and the revision of the first page (items are in key order).
    const [offset, revision] = options.continue
      ? options.continue.split(':').map(Number)
      : [0, this.#tracker.revision];
    if (options.continue && revision < this.#tracker.compactedRevision) {
      throw newExpired('The provided continue parameter is too old');
    }
    if (!options.continue && options.resourceVersion && options.resourceVersion !== '0') {
      this.#checkNotCompacted(Number(options.resourceVersion));
    }
    const end = options.limit ? Math.min(all.length, offset + options.limit) : all.length;
    for (let i = offset; i < end; i++) onItem(this.#render(all[i]));
    const meta: ListMeta = { resourceVersion: String(revision) };
    if (end < all.length) meta.continue = `${end}:${revision}`;
    return meta;
  }

  async create(
    namespace: string | undefined,
    obj: T,
    options: WriteOptions & RequestOptions = {},
  ): Promise<T> {
    if (options.subresource) throw newBadRequest(`create is not supported on ${options.subresource}`);
    const ns = this.#namespaceFor(namespace, obj);
    const metadata = { ...obj.metadata };
    if (metadata.resourceVersion) {
      throw newBadRequest('resourceVersion should not be set on objects to be created');
    }
    if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName}${randomSuffix()}`;
    if (!metadata.name) {
      throw newInvalid(this.ref.group, this.ref.kind, '', [
        { type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' },
      ]);
    }
    if (this.#tracker.get(this.#resource, objectKeyOf(ns, metadata.name))) {
      throw newAlreadyExists(this.ref, metadata.name);
    }
    if (ns) metadata.namespace = ns;
    metadata.uid = randomUUID();
    metadata.creationTimestamp = formatTime(this.#options.now());
    metadata.generation = 1;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    const created: KubeObject = {
      apiVersion: this.#apiVersion(),
      kind: this.ref.kind,
      ...structuredClone(obj),
      metadata,
    };
    // The status subresource's strategy resets status on create: only status writes set it.
    if (this.#options.statusSubresource) delete (created as { status?: unknown }).status;
    if (options.dryRun) return this.#render({ ...created, metadata: { ...metadata, resourceVersion: '0' } });
    const stored = this.#tracker.put(this.#resource, created);
    this.#recordWrite('create', stored, options.subresource);
    return this.#render(stored);
  }

  async update(obj: T, options: WriteOptions & RequestOptions = {}): Promise<T> {
    const namespace = obj.metadata?.namespace;
    const name = obj.metadata?.name ?? '';
    const existing = this.#existingFor(namespace, name, options.subresource);
    this.#checkResourceVersion(existing, obj.metadata?.resourceVersion);
    if (obj.metadata?.uid && obj.metadata.uid !== existing.metadata?.uid) {
      throw newConflict(
        this.ref,
        name,
        `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${existing.metadata?.uid}`,
      );
    }
    return this.#write('update', existing, structuredClone(obj), options);
  }

  async patch(
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions & RequestOptions = {},
  ): Promise<T> {
    const existing = this.#existingFor(namespace, name, options.subresource);
    let patched: KubeObject;
    if (type === 'merge') {
      patched = jsonMergePatch.apply(structuredClone(existing), structuredClone(patch)) as KubeObject;
    } else if (type === 'json') {
      const operations = structuredClone(patch) as fastJsonPatch.Operation[];
      try {
        patched = fastJsonPatch.applyPatch(structuredClone(existing), operations, true, false).newDocument;
      } catch (err) {
        // As the server: a patch that does not apply (a failed test, a missing path) is a 422.
        throw newInvalid(this.ref.group, this.ref.kind, name, [
          { type: 'FieldValueInvalid', field: 'patch', value: '', detail: (err as Error).message },
        ]);
      }
    } else {
      // Strategic merge and server-side apply need the Go types' patch strategies, which a schema-less fake
      // does not know.
      throw newUnsupportedMediaType(PATCH_CONTENT_TYPES[type], [
        'application/json-patch+json',
        'application/merge-patch+json',
      ]);
    }
    // A patch naming a resourceVersion is conditional on it, as on the server.
    this.#checkResourceVersion(existing, (patch as KubeObject | undefined)?.metadata?.resourceVersion);
    const identity = { name: existing.metadata?.name, namespace: existing.metadata?.namespace };
    return this.#write(
      'patch',
      existing,
      { ...patched, metadata: { ...patched.metadata, ...identity } },
      options,
    );
  }

  async delete(
    namespace: string | undefined,
    name: string,
    options: DeleteOptions & RequestOptions = {},
  ): Promise<void> {
    const existing = this.#existing(namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== existing.metadata?.uid) {
      throw newConflict(
        this.ref,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata?.uid}`,
      );
    }
    if (resourceVersion && resourceVersion !== existing.metadata?.resourceVersion) {
      throw newConflict(
        this.ref,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${existing.metadata?.resourceVersion}`,
      );
    }
    if (options.dryRun) return;
    if (existing.metadata?.finalizers?.length) {
      // Finalizers hold the object: it is only marked, once, and goes when the last finalizer is removed.
      if (existing.metadata.deletionTimestamp) return;
      const marked = this.#tracker.put(this.#resource, {
        ...existing,
        metadata: {
          ...existing.metadata,
          deletionTimestamp: formatTime(this.#options.now()),
          deletionGracePeriodSeconds: 0,
        },
      });
      this.#recordWrite('delete', marked);
      return;
    }
    this.#tracker.remove(this.#resource, objectKeyOf(existing.metadata?.namespace, name));
    this.#recordWrite('delete', existing);
  }

  async watch(
    namespace: string | undefined,
    options: WatchOptions & RequestOptions,
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    this.#record({ verb: 'watch', namespace });
    if (options.sendInitialEvents && !this.#options.watchList) {
      // As a server without the WatchList feature gate: clients fall back to list-then-watch.
      throw newInvalid('meta.k8s.io', 'ListOptions', '', [
        {
          type: 'FieldValueForbidden',
          field: 'sendInitialEvents',
          detail: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        },
      ]);
    }
    const matches = this.#matcher(namespace, options);
    const bookmark = options.allowWatchBookmarks
      ? (revision: number) => this.#bookmark(revision, false)
      : undefined;
    const watch = new WatchQueue<T>(matches, (obj) => this.#render(obj), options.signal, bookmark);
    const current = this.#tracker.revision;
    const from =
      options.resourceVersion && options.resourceVersion !== '0' ? Number(options.resourceVersion) : 0;
    if (!options.sendInitialEvents && from) this.#checkNotCompacted(from);
    if (options.sendInitialEvents || !from) {
      // Watch-list, or a watch from no particular version: the current state first, as ADDED events.
      for (const obj of this.#tracker.list(this.#resource)) {
        if (matches(obj)) watch.push({ type: 'ADDED', object: this.#render(obj) });
      }
      if (options.sendInitialEvents && options.allowWatchBookmarks) {
        watch.push({ type: 'BOOKMARK', object: this.#bookmark(current, true) });
      }
    } else {
      for (const change of this.#tracker.changesSince(this.#resource, from)) {
        if (matches(change.object)) watch.push({ type: change.type, object: this.#render(change.object) });
      }
    }
    this.#tracker.addWatch(this.#resource, watch as unknown as WatchQueue);
    return watch;
  }

  // -- internals -----------------------------------------------------------------------------------------

  /**
   * The update or patch result stored: system metadata kept from the stored object, status from the body only
   * through the status subresource (and only status through it), generation bumped when the rest changed.
   * An unchanged object is not written (no new resourceVersion, no event), as on the server.
   */
  #write(verb: 'update' | 'patch', existing: KubeObject, body: KubeObject, options: WriteOptions): T {
    const statusWrite = options.subresource === 'status';
    let next: KubeObject;
    if (statusWrite) {
      next = { ...existing, status: (body as { status?: unknown }).status };
    } else {
      next = { apiVersion: existing.apiVersion, kind: existing.kind, ...body };
      if (this.#options.statusSubresource)
        (next as { status?: unknown }).status = (existing as { status?: unknown }).status;
      const kept = existing.metadata ?? {};
      next.metadata = {
        ...body.metadata,
        name: kept.name,
        namespace: kept.namespace,
        uid: kept.uid,
        creationTimestamp: kept.creationTimestamp,
        generation: kept.generation,
        resourceVersion: kept.resourceVersion,
        deletionTimestamp: kept.deletionTimestamp,
        deletionGracePeriodSeconds: kept.deletionGracePeriodSeconds,
      };
      if (!jsonEqual(specOf(next), specOf(existing))) next.metadata.generation = (kept.generation ?? 0) + 1;
      for (const [key, value] of Object.entries(next.metadata)) {
        if (value === undefined) delete (next.metadata as Record<string, unknown>)[key];
      }
    }
    if ((next as { status?: unknown }).status === undefined) delete (next as { status?: unknown }).status;
    if (jsonEqual(next, existing)) return this.#render(existing);
    if (options.dryRun) return this.#render(next);
    const key = objectKeyOf(existing.metadata?.namespace, existing.metadata?.name ?? '');
    if (next.metadata?.deletionTimestamp && !next.metadata.finalizers?.length) {
      // The last finalizer went: the object goes with it.
      const removed = this.#tracker.remove(this.#resource, key)!;
      this.#recordWrite(verb, removed, options.subresource);
      return this.#render(removed);
    }
    const stored = this.#tracker.put(this.#resource, next);
    this.#recordWrite(verb, stored, options.subresource);
    return this.#render(stored);
  }

  #existing(namespace: string | undefined, name: string): KubeObject {
    const obj = this.#tracker.get(
      this.#resource,
      objectKeyOf(this.ref.namespaced ? namespace : undefined, name),
    );
    if (!obj) throw newNotFound(this.ref, name);
    return obj;
  }

  /** The stored object for a write; a subresource other than status does not exist here. */
  #existingFor(namespace: string | undefined, name: string, subresource: string | undefined): KubeObject {
    if (subresource && (subresource !== 'status' || !this.#options.statusSubresource)) {
      throw newNotFound(this.ref, name);
    }
    return this.#existing(namespace, name);
  }

  #checkResourceVersion(existing: KubeObject, resourceVersion: string | undefined): void {
    if (resourceVersion && resourceVersion !== existing.metadata?.resourceVersion) {
      throw newConflict(this.ref, existing.metadata?.name ?? '', OBJECT_MODIFIED);
    }
  }

  /** A read from before the last compaction: the history it needs is gone (410, as etcd answers). */
  #checkNotCompacted(revision: number): void {
    const compacted = this.#tracker.compactedRevision;
    if (revision < compacted) throw newExpired(`too old resource version: ${revision} (${compacted})`);
  }

  #namespaceFor(namespace: string | undefined, obj: KubeObject): string | undefined {
    if (!this.ref.namespaced) return undefined;
    const own = obj.metadata?.namespace;
    if (namespace && own && own !== namespace) {
      throw newBadRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const resolved = namespace || own;
    if (!resolved) throw newBadRequest('the namespace of the object is required');
    return resolved;
  }

  #matcher(namespace: string | undefined, options: ListOptions): (obj: KubeObject) => boolean {
    const labels = options.labelSelector ? parseLabelSelector(options.labelSelector) : undefined;
    const fields = options.fieldSelector ? parseFieldSelector(options.fieldSelector) : undefined;
    return (obj) => {
      if (this.ref.namespaced && namespace && obj.metadata?.namespace !== namespace) return false;
      if (labels && !labels.matches(obj.metadata?.labels)) return false;
      if (fields) {
        const values: Record<string, string> = {
          'metadata.name': obj.metadata?.name ?? '',
          'metadata.namespace': obj.metadata?.namespace ?? '',
        };
        if (typeof obj.type === 'string') values.type = obj.type;
        if (!fields.matches(values)) return false;
      }
      return true;
    };
  }

  #render(obj: KubeObject): T {
    const copy = structuredClone(obj);
    if (this.mode === 'metadata') return toPartialObjectMetadata(copy) as unknown as T;
    copy.apiVersion ??= this.#apiVersion();
    copy.kind ??= this.ref.kind;
    return copy as T;
  }

  #apiVersion(): string {
    return this.ref.group ? `${this.ref.group}/${this.ref.version}` : this.ref.version;
  }

  /** A BOOKMARK's object; the one that ends a watch-list's initial events carries the annotation saying so. */
  #bookmark(revision: number, initialEventsEnd: boolean): T {
    const metadata = initialEventsEnd
      ? { resourceVersion: String(revision), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } }
      : { resourceVersion: String(revision) };
    const object =
      this.mode === 'metadata'
        ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }
        : { apiVersion: this.#apiVersion(), kind: this.ref.kind, metadata };
    return object as unknown as T;
  }

  /** A read, as it was asked. */
  #record(action: Omit<FakeAction, 'resource'>): void {
    const recorded: FakeAction = { verb: action.verb, resource: this.#resource };
    if (action.namespace) recorded.namespace = action.namespace;
    if (action.name) recorded.name = action.name;
    this.#options.record(recorded);
  }

  #recordWrite(verb: FakeAction['verb'], object: KubeObject, subresource?: string): void {
    const action: FakeAction = {
      verb,
      resource: this.#resource,
      name: object.metadata?.name,
      object: structuredClone(object),
    };
    if (object.metadata?.namespace) action.namespace = object.metadata.namespace;
    if (subresource) action.subresource = subresource;
    this.#options.record(action);
  }
}
