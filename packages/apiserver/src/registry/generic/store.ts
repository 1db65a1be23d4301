/**
 * The generic registry store (kube-apiserver's registry/generic/registry.Store): one ObjectStore per served
 * resource, holding its CRUD over a Storage. The other operations live beside it, each in a module of its
 * own that takes the store: selectors.ts, list.ts, watch.ts, strategy.ts (the hooks create and update run),
 * deletion.ts (finalizers, graceful deletion, deletecollection); types.ts has their options and results.
 */

import {
  type FieldSelector,
  type KubeObject,
  type LabelSelector,
  type ListOptions,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newNotFound,
  OBJECT_MODIFIED,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import {
  ConflictError,
  KeyExistsError,
  type KeyValue,
  NotFoundError,
  type Storage,
} from '../../storage/types.ts';
import { GENERATE_NAME_ATTEMPTS, generateName } from '../metadata.ts';
import type { DeleteOptions, ListResult, PagedList, StoreContext, WatchSink, WriteOptions } from './types.ts';
import { apiVersionOf, objectKey, type ResourceDefinition, resourcePrefix } from '../resource.ts';
import { rememberStoredValue, utf8Text } from '../stored-json.ts';
import { checkFieldSelector, fieldsOf, matcher, metadataMatcher } from './selectors.ts';
import { list, listPaged } from './list.ts';
import { checkDecodable, prepareCreate, prepareUpdate } from './strategy.ts';
import {
  checkUpdateVersion,
  parseRequestedVersion,
  refuseVersionOnCreate,
  versionRequired,
} from './resource-version.ts';
import { deleteCollection, deleteObject, held } from './deletion.ts';
import { watch } from './watch.ts';

/** The members a stored value begins with, in order (see ObjectStore.encode). */
const STORED_HEAD = ['apiVersion', 'kind', 'metadata'];

/** Whether the object's first members are STORED_HEAD, so that its JSON is in the stored order. */
function inStoredOrder(obj: StoredObject): boolean {
  let i = 0;
  for (const key in obj) {
    if (key !== STORED_HEAD[i]) return false;
    if (++i === STORED_HEAD.length) return true;
  }
  return false;
}

/** How often a write retries on a conflict with another writer (guaranteedUpdate, deletion). */
export const MAX_PATCH_RETRIES = 16;

/** The generic registry store: CRUD, list and watch of one resource over a Storage, as kube-apiserver's. */
export class ObjectStore {
  readonly def: ResourceDefinition;
  readonly context: StoreContext;
  readonly storage: Storage;
  readonly prefix: string;
  readonly apiVersion: string;

  constructor(def: ResourceDefinition, context: StoreContext) {
    this.def = def;
    this.context = context;
    this.storage = def.storedAs?.(context.storage) ?? context.storage;
    this.prefix = resourcePrefix(def);
    this.apiVersion = apiVersionOf(def, def.versions[0]);
  }

  decode(value: string, revision: number): StoredObject {
    const obj = JSON.parse(value) as StoredObject;
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }

  /**
   * Stored without resourceVersion: the storage revision is the source of truth for it. apiVersion, kind and
   * metadata come first, whatever order the client sent, so that the resourceVersion can be spliced into the
   * text again (stored-json.ts).
   */
  encode(obj: StoredObject): string {
    // Objects usually are in that order already (a create's, a status update's): then as they are.
    if (obj.metadata.resourceVersion === undefined && inStoredOrder(obj)) return JSON.stringify(obj);
    const { resourceVersion: _, ...metadata } = obj.metadata;
    const { apiVersion, kind, metadata: __, ...rest } = obj;
    return JSON.stringify({ apiVersion, kind, metadata, ...rest });
  }

  key(namespace: string | undefined, name: string): string {
    return objectKey(this.def, namespace, name);
  }

  private notFound(name: string): StatusError {
    return newNotFound(this.def, name);
  }

  async get(namespace: string | undefined, name: string): Promise<StoredObject> {
    const { obj, value } = await this.getStored(namespace, name);
    rememberStoredValue(obj, value);
    return obj;
  }

  /** The object and the stored value it was decoded from (its encoding, see write()). */
  async getStored(
    namespace: string | undefined,
    name: string,
  ): Promise<{ obj: StoredObject; value: string }> {
    const kv = await this.storage.get(this.key(namespace, name));
    if (!kv) throw this.notFound(name);
    return { obj: this.decode(kv.value, kv.modRevision), value: kv.value };
  }

  /** Fields a field selector can name on this resource. */
  fieldsOf(obj: StoredObject): Record<string, string> {
    return fieldsOf(this, obj);
  }

  /** 400 for a field selector naming a field this resource cannot be selected by. */
  checkFieldSelector(selector: FieldSelector): void {
    return checkFieldSelector(this, selector);
  }

  matcher(labels: LabelSelector, fields: FieldSelector): (obj: StoredObject) => boolean {
    return matcher(this, labels, fields);
  }

  /**
   * matcher() on an object's metadata alone, for selectors that name nothing else (labels, metadata.name,
   * metadata.namespace); undefined for selectors that do.
   */
  metadataMatcher(
    labels: LabelSelector,
    fields: FieldSelector,
  ): ((meta: StoredObject['metadata']) => boolean) | undefined {
    return metadataMatcher(this, labels, fields);
  }

  async list(namespace: string | undefined, options: ListOptions): Promise<ListResult> {
    return list(this, namespace, options);
  }

  /**
   * A list without a limit, to be written out as it is read rather than held whole (a namespace may hold
   * gigabytes): the first page is read here, so that its revision is the list's resourceVersion and a
   * failure is still the request's to answer; the rest, at that revision, as `pages` is iterated. A page
   * holds about LIST_PAGE_BYTES of stored values, however large the objects are. Pages hold the stored
   * key-values that match, as bytes and undecoded: the caller encodes them one at a time (render.ts
   * storedListEncoding), so that a list of large objects makes no string of each.
   */
  async listPaged(namespace: string | undefined, options: ListOptions): Promise<PagedList> {
    return listPaged(this, namespace, options);
  }

  /** decode() of a value read as bytes. */
  decodeBytes(kv: KeyValue<Uint8Array>): StoredObject {
    return this.decode(utf8Text(kv.value), kv.modRevision);
  }

  async create(
    namespace: string | undefined,
    input: KubeObject,
    options: WriteOptions & { version?: string } = {},
  ): Promise<StoredObject> {
    const version = options.version ?? this.def.versions[0];
    const requestedVersion = input.metadata?.resourceVersion;
    const obj = await prepareCreate(
      this,
      namespace,
      input,
      version,
      options.inputOwned === true,
      options.applied,
      options.admission,
      options.user,
    );
    this.def.setRequester?.(obj, options.user);
    // As kube-apiserver's storage refuses it: after validation and admission, and not on a dry run (its dry-run
    // storage never gets there) nor on apply's create (its update path drops the version).
    if (!options.dryRun && !options.applied)
      refuseVersionOnCreate(this.def, obj.metadata.name ?? '', requestedVersion);
    const release = await this.def.reserve?.(obj, undefined, this.context, options.dryRun === true);
    const generated = !obj.metadata.name;
    for (let attempt = 1; ; attempt++) {
      if (generated) obj.metadata.name = generateName(obj.metadata.generateName!);
      const name = obj.metadata.name!;
      if (options.dryRun) return obj;
      try {
        const value = this.encode(obj);
        const revision = await this.storage.create(this.key(obj.metadata.namespace, name), value);
        obj.metadata.resourceVersion = String(revision);
        rememberStoredValue(obj, value);
        this.context.afterWrite?.(this.def, obj);
        return obj;
      } catch (err) {
        if (!(err instanceof KeyExistsError)) {
          await release?.();
          throw err;
        }
        if (!generated || attempt >= GENERATE_NAME_ATTEMPTS) {
          await release?.();
          throw newAlreadyExists(this.def, name);
        }
      }
    }
  }

  /**
   * Writes next over current (whose revision guards the write); an object whose last finalizer went is deleted.
   * An update that changes nothing is not written. currentValue is current's stored value when the caller has
   * it: stored values are encode()'s output, which JSON round-trips exactly, so it is encode(current) without
   * serialising current again.
   */
  async write(
    current: StoredObject,
    next: StoredObject,
    options: WriteOptions,
    currentValue: string = this.encode(current),
  ): Promise<StoredObject> {
    const currentRevision = Number(current.metadata.resourceVersion);
    const value = this.encode(next);
    if (value === currentValue) {
      rememberStoredValue(current, currentValue);
      return current;
    }
    const key = this.key(current.metadata.namespace, current.metadata.name!);
    // A dry run answers with the stored object's version, as kube-apiserver's dry-run storage hands the update
    // the current revision: `kubectl diff --server-side` then shows no resourceVersion line removed.
    if (options.dryRun) next.metadata.resourceVersion = current.metadata.resourceVersion;
    if (next.metadata.deletionTimestamp && !held(this, next)) {
      if (options.dryRun) return next;
      const { revision } = await this.storage.delete(key, currentRevision);
      next.metadata.resourceVersion = String(revision);
      return next;
    }
    const release = await this.def.reserve?.(next, current, this.context, options.dryRun === true);
    // What reserve filled in is part of what is stored.
    const stored = this.def.reserve ? this.encode(next) : value;
    if (options.dryRun) return next;
    try {
      const revision = await this.storage.update(key, stored, currentRevision);
      next.metadata.resourceVersion = String(revision);
      rememberStoredValue(next, stored);
      this.context.afterWrite?.(this.def, next);
      return next;
    } catch (err) {
      await release?.();
      throw err;
    }
  }

  async update(
    namespace: string | undefined,
    name: string,
    input: KubeObject,
    options: WriteOptions & { version?: string } = {},
  ): Promise<StoredObject> {
    const version = options.version ?? this.def.versions[0];
    // Before its metadata is read for the name and the precondition.
    checkDecodable(this, input, version);
    const inputMeta = (input.metadata ?? {}) as StoredObject['metadata'];
    if (inputMeta.name !== undefined && inputMeta.name !== name) {
      throw newBadRequest(
        `the name of the object (${inputMeta.name}) does not match the name on the URL (${name})`,
      );
    }
    if (this.def.namespaced && inputMeta.namespace && namespace && inputMeta.namespace !== namespace) {
      throw newBadRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const requested = inputMeta.resourceVersion;
    // Refused before the read, as the store parses it: a version that is no number, or none where one is needed.
    if (parseRequestedVersion(this.def, name, requested) === 0n && !this.def.allowUnconditionalUpdate)
      throw versionRequired(this.def, name);
    const { obj: current, value: currentValue } = await this.getStored(namespace, name);
    checkUpdateVersion(this.def, name, requested, current.metadata.resourceVersion);
    const prepared = prepareUpdate(
      this,
      current,
      { ...input, metadata: { ...inputMeta, name } },
      options,
      version,
      currentValue,
    );
    const next = prepared instanceof Promise ? await prepared : prepared;
    try {
      return await this.write(current, next, options, currentValue);
    } catch (err) {
      throw this.writeError(err, name);
    }
  }

  writeError(err: unknown, name: string): unknown {
    if (err instanceof ConflictError) return newConflict(this.def, name, OBJECT_MODIFIED);
    if (err instanceof NotFoundError) return this.notFound(name);
    return err;
  }

  /**
   * Applies a change computed from the current object, retrying on conflicts with fresh reads (as
   * GuaranteedUpdate). The change may throw a Status error to stop. A change that sets a resourceVersion
   * which no longer matches fails with 409 instead of being retried.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    change: (current: StoredObject) => KubeObject,
    options: WriteOptions & { version?: string } = {},
  ): Promise<StoredObject> {
    const version = options.version ?? this.def.versions[0];
    for (let attempt = 0; ; attempt++) {
      // current is handed to the change, which might keep or alter it: it is not taken as its stored value.
      const current = await this.get(namespace, name);
      const input = change(current);
      const requested = (input.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      // A version the change left (0 for none) is parsed and compared as the store does; none retries.
      const conditional = parseRequestedVersion(this.def, name, requested) !== 0n;
      if (conditional) checkUpdateVersion(this.def, name, requested, current.metadata.resourceVersion);
      const prepared = prepareUpdate(this, current, input, options, version);
      const next = prepared instanceof Promise ? await prepared : prepared;
      try {
        return await this.write(current, next, options);
      } catch (err) {
        if (err instanceof ConflictError && !conditional && attempt < MAX_PATCH_RETRIES) continue;
        throw this.writeError(err, name);
      }
    }
  }

  async delete(
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): Promise<StoredObject> {
    return deleteObject(this, namespace, name, options);
  }

  async deleteCollection(
    namespace: string | undefined,
    listOptions: ListOptions,
    options: DeleteOptions = {},
  ): Promise<StoredObject[]> {
    return deleteCollection(this, namespace, listOptions, options);
  }

  /**
   * Streams changes as watch events. Without a resourceVersion (or with sendInitialEvents) it first sends the
   * current objects as ADDED; from resourceVersion N it sends every change after N, or 410 if N is compacted.
   * Returns a function that stops the watch.
   */
  async watch(namespace: string | undefined, options: ListOptions, sink: WatchSink): Promise<() => void> {
    return watch(this, namespace, options, sink);
  }
}

export type { KeyValue };
