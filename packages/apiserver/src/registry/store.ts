import {
  decodeContinueToken,
  encodeContinueToken,
  type FieldError,
  type FieldSelector,
  formatTime,
  type KubeObject,
  type LabelSelector,
  type ListOptions,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newExpired,
  newForbidden,
  newInternalError,
  newInvalid,
  newNotFound,
  newTimeout,
  OBJECT_MODIFIED,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  type KeyValue,
  NotFoundError,
  type Storage,
  type StorageEvent,
} from '../storage/types.ts';
import {
  dropEmptyMetadataFields,
  FOREGROUND_FINALIZER,
  GENERATE_NAME_ATTEMPTS,
  generateName,
  newUid,
  ORPHAN_FINALIZER,
  specChanged,
} from './metadata.ts';
import { apiVersionOf, listPrefix, objectKey, type ResourceDefinition, resourcePrefix } from './resource.ts';
import { cloneJson, isObject } from '@certkit/apimachinery';
import { objectMetaTypeError } from './go-types.ts';
import { parseMetadataBytes, rememberStoredValue, utf8Text } from './stored-json.ts';
import { applySchemaFor, updateManagedFields } from './managed-fields.ts';
import {
  dns1123Label,
  dns1123Subdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  dryRun?: boolean;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** `status` for the status subresource. */
  subresource?: string;
  /**
   * The input is the store's to keep and change: a request body parsed for this call alone. It is then used
   * as it is instead of being copied first (copying whole objects is a large part of a write's cost).
   */
  inputOwned?: boolean;
  /** The field manager of the write, asked only for objects that carry managedFields. */
  fieldManager?: () => string;
  /** The input's managedFields were computed by server-side apply: stored as they are. */
  applied?: boolean;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A list read from storage a page at a time (ObjectStore.listPaged). */
export interface PagedList {
  resourceVersion: string;
  /** The matching objects as stored (UTF-8 bytes), a page at a time; storage is read as they are iterated. */
  pages: AsyncIterable<KeyValue<Uint8Array>[]> | Iterable<KeyValue<Uint8Array>[]>;
}

interface ListStart {
  matches: (obj: StoredObject) => boolean;
  /** The namespace listed (from the path or a metadata.namespace field selector). */
  ns: string | undefined;
  prefix: string;
  revision: number;
  startKey: string;
  /** The one name a metadata.name field selector asks for, when the list is then a single key. */
  exactName: string | undefined;
}

/** Receives a watch's events; objects carry their resourceVersion. */
export interface WatchSink {
  added(obj: StoredObject): void;
  modified(obj: StoredObject): void;
  deleted(obj: StoredObject): void;
  /** The initial events of sendInitialEvents are done (the caller sends the bookmark if asked to). */
  initialEventsEnd(resourceVersion: string): void;
  /** The watch cannot go on; the Status is sent as an ERROR event and the stream ends. */
  error(status: StatusError): void;
  /** An event already serialised (shared by every watcher that wants these bytes); see watchcache/frames.ts. */
  frame(bytes: Buffer, resourceVersion: string): void;
  /** The source is gone (watch cache re-initialising): end the stream cleanly so the client re-watches. */
  end(): void;
  /** While the connection holds much unsent, a promise of its draining (initial events wait for it). */
  backlog?(): Promise<void> | undefined;
}

/** What a store needs from the rest of the server. */
export interface StoreContext {
  storage: Storage;
  /**
   * Finds a namespace, so objects are not created in one that is missing or terminating: at once when it
   * is at hand (every namespaced create asks), else through a promise.
   */
  getNamespace?(name: string): StoredObject | undefined | Promise<StoredObject | undefined>;
  /** Called after an object is created or updated (CRDs use it to start serving). */
  afterWrite?(def: ResourceDefinition, obj: StoredObject): void;
  /**
   * Validating admission beyond the schema (what a validating webhook does in a real cluster): field errors
   * refuse the write with 422. Runs on create and on every update, with the stored object as `old`; a
   * status subresource update says so in `subresource` (AdmissionRequest.subResource): a webhook registered
   * for every subresource, as cert-manager's is, sees those too and judges them by what a status may change.
   */
  admit?(
    def: ResourceDefinition,
    obj: StoredObject,
    old: StoredObject | undefined,
    subresource?: string,
  ): FieldError[];
}

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

const MAX_PATCH_RETRIES = 16;
/** Keys read per storage round trip when a selective list filters out what it reads. */
const SELECTIVE_LIST_CHUNK = 1000;
/** Stored bytes a page of a paged list holds about (ObjectStore.listPaged). */
const LIST_PAGE_BYTES = 1024 * 1024;
/** Keys of a paged list's first page, before the objects' size is known. */
const FIRST_LIST_PAGE_KEYS = 16;
const MAX_LIST_PAGE_KEYS = 1000;

/** How many keys the next page of a paged list reads, from the size of the objects on the last one. */
function keysPerPage(last: KeyValue<Uint8Array>[]): number {
  let bytes = 0;
  for (const kv of last) bytes += kv.value.length;
  const average = bytes / last.length || 1;
  return Math.max(1, Math.min(MAX_LIST_PAGE_KEYS, Math.floor(LIST_PAGE_BYTES / average)));
}

/** How long a read at a future resourceVersion waits for it (kube-apiserver's blockTimeout). */
const FRESHNESS_WAIT_MS = 3000;

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
    this.storage = context.storage;
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

  private key(namespace: string | undefined, name: string): string {
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
  private async getStored(
    namespace: string | undefined,
    name: string,
  ): Promise<{ obj: StoredObject; value: string }> {
    const kv = await this.storage.get(this.key(namespace, name));
    if (!kv) throw this.notFound(name);
    return { obj: this.decode(kv.value, kv.modRevision), value: kv.value };
  }

  /** Fields a field selector can name on this resource. */
  fieldsOf(obj: StoredObject): Record<string, string> {
    const fields = this.metadataFields(obj.metadata);
    return this.def.fieldValues ? { ...fields, ...this.def.fieldValues(obj) } : fields;
  }

  private metadataFields(meta: StoredObject['metadata']): Record<string, string> {
    const fields: Record<string, string> = { 'metadata.name': meta.name ?? '' };
    if (this.def.namespaced) fields['metadata.namespace'] = meta.namespace ?? '';
    return fields;
  }

  /** 400 for a field selector naming a field this resource cannot be selected by. */
  checkFieldSelector(selector: FieldSelector): void {
    for (const r of selector.requirements) {
      const known =
        r.field === 'metadata.name' ||
        (this.def.namespaced && r.field === 'metadata.namespace') ||
        this.def.selectableFields.includes(r.field);
      if (!known) throw newBadRequest(`field label not supported: ${r.field}`);
    }
  }

  matcher(labels: LabelSelector, fields: FieldSelector): (obj: StoredObject) => boolean {
    if (labels.empty && fields.empty) return () => true;
    return (obj) =>
      labels.matches(obj.metadata.labels) && (fields.empty || fields.matches(this.fieldsOf(obj)));
  }

  /**
   * matcher() on an object's metadata alone, for selectors that name nothing else (labels, metadata.name,
   * metadata.namespace); undefined for selectors that do.
   */
  metadataMatcher(
    labels: LabelSelector,
    fields: FieldSelector,
  ): ((meta: StoredObject['metadata']) => boolean) | undefined {
    if (fields.requirements.some((r) => r.field !== 'metadata.name' && r.field !== 'metadata.namespace')) {
      return undefined;
    }
    return (meta) =>
      labels.matches(meta.labels) && (fields.empty || fields.matches(this.metadataFields(meta)));
  }

  /** Where a list starts: its key range, the revision to read at (0: current), and its selector. */
  private async listStart(namespace: string | undefined, options: ListOptions): Promise<ListStart> {
    this.checkFieldSelector(options.fieldSelector);
    const matches = this.matcher(options.labelSelector, options.fieldSelector);
    const ns = namespace || options.fieldSelector.requiresExactMatch('metadata.namespace') || undefined;
    const prefix = listPrefix(this.def, ns);
    let revision = 0;
    let startKey = prefix;
    if (options.continue) {
      const token = decodeContinueToken(options.continue);
      revision = token.resourceVersion === -1 ? 0 : token.resourceVersion;
      startKey = this.prefix + token.startKey;
      if (!startKey.startsWith(prefix))
        throw newBadRequest('invalid continue token: key outside the requested range');
    } else if (
      options.resourceVersionMatch === 'Exact' ||
      (options.resourceVersion !== '' &&
        options.resourceVersion !== '0' &&
        options.limit > 0 &&
        options.resourceVersionMatch === '')
    ) {
      revision = Number(options.resourceVersion);
    } else if (options.resourceVersion !== '' && options.resourceVersion !== '0') {
      await this.waitForRevision(Number(options.resourceVersion));
    }
    // A name in the field selector is a single key: no need to read the whole range.
    const name = options.fieldSelector.requiresExactMatch('metadata.name');
    const exactName =
      name !== undefined && (!this.def.namespaced || ns) && !options.continue ? name : undefined;
    return { matches, ns, prefix, revision, startKey, exactName };
  }

  async list(namespace: string | undefined, options: ListOptions): Promise<ListResult> {
    const start = await this.listStart(namespace, options);
    const { matches, ns, prefix, exactName } = start;
    let { revision, startKey } = start;
    if (exactName !== undefined) return this.listOne(ns, exactName, revision, matches);

    const limit = options.limit;
    const selective = !options.labelSelector.empty || !options.fieldSelector.empty;
    const items: StoredObject[] = [];
    let more = false;
    let lastKey = '';
    let count: number | undefined;
    try {
      for (;;) {
        const want =
          limit > 0
            ? selective
              ? Math.max(limit - items.length, SELECTIVE_LIST_CHUNK)
              : limit - items.length
            : 0;
        const page = await this.storage.range(prefix, {
          revision,
          startKey,
          limit: want,
          count: limit > 0 && !selective && revision === 0 && items.length === 0,
        });
        revision = page.revision;
        if (page.count !== undefined) count = page.count;
        for (const kv of page.kvs) {
          const obj = this.decode(kv.value, kv.modRevision);
          lastKey = kv.key;
          if (!matches(obj)) continue;
          items.push(obj);
          if (limit > 0 && items.length === limit) break;
        }
        const stoppedEarly = limit > 0 && items.length === limit && lastKey !== page.kvs.at(-1)?.key;
        more = stoppedEarly || page.more;
        if (limit === 0 || items.length >= limit || !page.more) break;
        startKey = `${lastKey}\u0000`;
      }
    } catch (err) {
      if (err instanceof CompactedError) throw this.expired(options, prefix);
      // Exact (or a continue token) at a revision not written yet: as kube-apiserver, wait briefly for it and
      // then answer 504 "Too large resource version" (storage's listReadError), rather than fail.
      if (err instanceof FutureRevisionError && items.length === 0) {
        await this.waitForRevision(err.requestedRevision);
        return this.list(namespace, options);
      }
      throw err;
    }
    const result: ListResult = { items, resourceVersion: String(revision) };
    if (more && limit > 0) {
      result.continue = encodeContinueToken(revision, `${lastKey.slice(this.prefix.length)}\u0000`);
      if (count !== undefined) result.remainingItemCount = count - items.length;
    }
    return result;
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
    if (options.limit > 0) throw new Error('listPaged is for lists without a limit');
    const { matches, ns, prefix, revision, startKey, exactName } = await this.listStart(namespace, options);
    const read = (revision: number, startKey: string, limit: number) =>
      this.storage.rangeBytes(prefix, { revision, startKey, limit }).catch((err) => {
        throw err instanceof CompactedError ? this.expired(options, prefix) : err;
      });
    // Exact (or a continue token) at a revision not written yet: wait briefly for it, then 504 "Too large
    // resource version", as list() does; later pages read at the first one's revision, which exists.
    const readFirst = (startKey: string, limit: number) =>
      read(revision, startKey, limit).catch(async (err) => {
        if (!(err instanceof FutureRevisionError)) throw err;
        await this.waitForRevision(err.requestedRevision);
        return read(revision, startKey, limit);
      });
    const keep = this.storedMatcher(options, matches);
    if (exactName !== undefined) {
      // A name in the field selector is a single key: no need to read the whole range.
      const key = this.key(ns, exactName);
      const page = await readFirst(key, 1);
      return {
        resourceVersion: String(page.revision),
        pages: [page.kvs.filter((kv) => kv.key === key && (keep?.(kv) ?? true))],
      };
    }
    let page = await readFirst(startKey, FIRST_LIST_PAGE_KEYS);
    const at = page.revision;
    async function* pages(): AsyncGenerator<KeyValue<Uint8Array>[]> {
      for (;;) {
        const { kvs, more } = page;
        yield keep === undefined ? kvs : kvs.filter(keep);
        if (!more || kvs.length === 0) return;
        page = await read(at, `${kvs[kvs.length - 1].key}\u0000`, keysPerPage(kvs));
      }
    }
    return { resourceVersion: String(at), pages: pages() };
  }

  /**
   * Selects stored key-values by the list's selectors: by their metadata alone when the selectors name
   * nothing else (parsing a few hundred bytes rather than the object), else by the decoded object.
   * Undefined when there are no selectors.
   */
  private storedMatcher(
    options: ListOptions,
    matches: (obj: StoredObject) => boolean,
  ): ((kv: KeyValue<Uint8Array>) => boolean) | undefined {
    if (options.labelSelector.empty && options.fieldSelector.empty) return undefined;
    const onMetadata = this.metadataMatcher(options.labelSelector, options.fieldSelector);
    return (kv) => {
      const metadata = onMetadata && parseMetadataBytes(kv.value);
      if (metadata !== undefined) return onMetadata!(metadata);
      return matches(this.decodeBytes(kv));
    };
  }

  /** decode() of a value read as bytes. */
  decodeBytes(kv: KeyValue<Uint8Array>): StoredObject {
    return this.decode(utf8Text(kv.value), kv.modRevision);
  }

  private async listOne(
    namespace: string | undefined,
    name: string,
    revision: number,
    matches: (obj: StoredObject) => boolean,
  ): Promise<ListResult> {
    const key = this.key(namespace, name);
    const page = await this.storage.range(key, { revision, limit: 1 }).catch(async (err) => {
      if (err instanceof CompactedError)
        throw newExpired('The resourceVersion for the provided list is too old.');
      if (err instanceof FutureRevisionError) {
        await this.waitForRevision(err.requestedRevision);
        return this.storage.range(key, { revision, limit: 1 });
      }
      throw err;
    });
    const kv = page.kvs.find((k) => k.key === key);
    const obj = kv && this.decode(kv.value, kv.modRevision);
    return { items: obj && matches(obj) ? [obj] : [], resourceVersion: String(page.revision) };
  }

  private expired(options: ListOptions, prefix: string): StatusError {
    if (!options.continue) return newExpired('The resourceVersion for the provided list is too old.');
    const token = decodeContinueToken(options.continue);
    const err = newExpired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
    err.status.metadata.continue = encodeContinueToken(
      -1,
      token.startKey || prefix.slice(this.prefix.length),
    );
    return err;
  }

  /** A read "not older than N" waits briefly for N to exist, then answers 504 as kube-apiserver does. */
  private async waitForRevision(revision: number): Promise<void> {
    const deadline = Date.now() + FRESHNESS_WAIT_MS;
    for (;;) {
      const current = await this.storage.currentRevision();
      if (current >= revision) return;
      if (Date.now() >= deadline) {
        const err = newTimeout(`Too large resource version: ${revision}, current: ${current}`, 1);
        err.status.details!.causes = [
          { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
        ];
        throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Checks and fills an object for create; throws 4xx Status errors. */
  private async prepareCreate(
    namespace: string | undefined,
    input: KubeObject,
    version: string,
    inputOwned: boolean,
    applied = false,
  ): Promise<StoredObject> {
    const def = this.def;
    this.checkTypeMeta(input, version);
    const obj = (inputOwned ? input : cloneJson(input)) as StoredObject;
    obj.metadata = { ...(obj.metadata ?? {}) };
    const meta = obj.metadata;
    if (def.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw newBadRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace ?? meta.namespace;
    } else {
      delete meta.namespace;
    }
    obj.apiVersion = this.apiVersion;
    obj.kind = def.kind;
    meta.uid = newUid();
    meta.creationTimestamp = formatTime(new Date());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    // Objects carry managedFields once applied (server-side apply); other creates store none.
    const managedFields = applied ? meta.managedFields : undefined;
    delete meta.managedFields;
    delete meta.selfLink;
    if (def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (def.custom && def.statusSubresource) delete obj.status;
    def.normalize?.(obj);
    def.defaults?.(obj);
    dropEmptyMetadataFields(obj);
    const errors: FieldError[] = [];
    if (def.admit) errors.push(...def.admit(obj, version));
    // A generated name is validated as one sample of what generateName gives.
    const named =
      meta.name === undefined && meta.generateName
        ? { ...obj, metadata: { ...meta, name: generateName(meta.generateName) } }
        : obj;
    errors.push(...validateObjectMeta(named, def.namespaced, this.nameValidator()));
    if (def.validate) errors.push(...def.validate(obj, undefined, version));
    // Validating admission (cert-manager's webhook) sees only objects the schema and the generic checks
    // passed, as in kube-apiserver, where webhooks run after the strategy's validation: it may then rely on
    // the schema's types.
    if (this.context.admit && errors.length === 0) errors.push(...this.context.admit(def, obj, undefined));
    if (errors.length > 0)
      throw newInvalid(def.group, def.kind, meta.name ?? meta.generateName ?? '', errors);
    def.onCreate?.(obj);
    if (managedFields) meta.managedFields = managedFields;
    if (def.namespaced) {
      const open = this.checkNamespaceOpen(meta.namespace!, meta.name ?? meta.generateName ?? '');
      if (open) await open;
    }
    return obj;
  }

  private nameValidator(): (name: string) => string[] {
    return this.def.resource === 'namespaces' ? dns1123Label : dns1123Subdomain;
  }

  /**
   * The decode kube-apiserver does before anything else: apiVersion, kind and metadata of the wrong JSON type
   * are a 400 with Go's decoding error (handlers' transformDecodeError), never seen by the checks after it.
   */
  private checkDecodable(input: KubeObject, version: string): void {
    if (!isObject(input)) {
      throw newBadRequest(
        `the object provided is unrecognized (must be of type ${this.def.kind}): json: cannot unmarshal ${Array.isArray(input) ? 'array' : typeof input} into Go value of type map[string]interface {}`,
      );
    }
    const err = objectMetaTypeError(input, this.def.custom ? undefined : this.def.kind);
    if (err === undefined) return;
    if (err.startsWith("couldn't get version/kind")) {
      const text = JSON.stringify(input);
      const summary = text.length > 30 ? `${text.slice(0, 30)} ...` : text;
      throw newBadRequest(
        `the object provided is unrecognized (must be of type ${this.def.kind}): ${err} (${summary})`,
      );
    }
    throw newBadRequest(
      `${this.def.kind} in version "${version}" cannot be handled as a ${this.def.kind}: ${err}`,
    );
  }

  private checkTypeMeta(input: KubeObject, version: string): void {
    this.checkDecodable(input, version);
    // What nearly every request sends: its type at the storage version.
    if (input.apiVersion === this.apiVersion && input.kind === this.def.kind) return;
    const expected = apiVersionOf(this.def, version);
    if (
      input.apiVersion &&
      input.apiVersion !== expected &&
      !this.def.versions.some((v) => apiVersionOf(this.def, v) === input.apiVersion)
    ) {
      throw newBadRequest(
        `the API version in the data (${input.apiVersion}) does not match the expected API version (${expected})`,
      );
    }
    if (input.kind && input.kind !== this.def.kind) {
      throw newBadRequest(
        `the kind in the data (${input.kind}) does not match the expected kind (${this.def.kind})`,
      );
    }
  }

  /** Synchronous when the namespace is at hand, so that a create need not wait a turn of promises for it. */
  private checkNamespaceOpen(namespace: string, name: string): void | Promise<void> {
    const found = this.context.getNamespace?.(namespace);
    if (found instanceof Promise) return found.then((ns) => this.checkOpen(ns, namespace, name));
    if (this.context.getNamespace) this.checkOpen(found, namespace, name);
  }

  private checkOpen(ns: StoredObject | undefined, namespace: string, name: string): void {
    if (!ns) throw newNotFound({ group: '', resource: 'namespaces' }, namespace);
    if (ns.metadata.deletionTimestamp) {
      throw newForbidden(
        `${this.def.resource} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  async create(
    namespace: string | undefined,
    input: KubeObject,
    options: WriteOptions & { version?: string } = {},
  ): Promise<StoredObject> {
    const version = options.version ?? this.def.versions[0];
    const obj = await this.prepareCreate(
      namespace,
      input,
      version,
      options.inputOwned === true,
      options.applied,
    );
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
        if (!(err instanceof KeyExistsError)) throw err;
        if (!generated || attempt >= GENERATE_NAME_ATTEMPTS) throw newAlreadyExists(this.def, name);
      }
    }
  }

  /**
   * Turns the object a client sent into the object to store, given the current one: system fields kept, status
   * or spec preserved per subresource, generation bumped on spec changes, then validated.
   */
  private prepareUpdate(
    current: StoredObject,
    input: KubeObject,
    options: WriteOptions,
    version: string,
    currentValue?: string,
  ): StoredObject {
    const def = this.def;
    this.checkTypeMeta(input, version);
    const owned = options.inputOwned === true;
    let obj: StoredObject;
    const statusUpdate = options.subresource === 'status';
    if (statusUpdate) {
      // Current with the client's status. Given its stored value, current was decoded for this update alone
      // and is only compared with from here on: obj may share its members, which nothing below changes
      // (admission re-prunes and re-defaults them, which leaves them as they were stored). Otherwise
      // current is the caller's too, and copied whole.
      obj =
        currentValue === undefined ? cloneJson(current) : { ...current, metadata: { ...current.metadata } };
      if ('status' in input) obj.status = owned ? input.status : cloneJson(input.status);
      else delete obj.status;
    } else {
      obj = (owned ? input : cloneJson(input)) as StoredObject;
      obj.metadata = { ...(obj.metadata ?? {}) };
      if (def.statusSubresource) {
        if ('status' in current) obj.status = cloneJson(current.status);
        else delete obj.status;
      }
    }
    const meta = obj.metadata;
    const old = current.metadata;
    obj.apiVersion = this.apiVersion;
    obj.kind = def.kind;
    if (def.namespaced && meta.namespace === undefined) meta.namespace = old.namespace;
    if (!meta.uid) meta.uid = old.uid;
    meta.creationTimestamp = old.creationTimestamp;
    if (old.deletionTimestamp) {
      meta.deletionTimestamp = old.deletionTimestamp;
      meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    const incomingFields = options.applied ? input.metadata?.managedFields : meta.managedFields;
    delete meta.managedFields;
    delete meta.selfLink;
    if (def.tracksGeneration) {
      meta.generation = old.generation ?? 1;
    } else delete meta.generation;
    def.normalize?.(obj);
    def.defaults?.(obj);
    dropEmptyMetadataFields(obj);
    // The namespace's spec and status are owned by its lifecycle, not by clients.
    if (def.resource === 'namespaces') {
      obj.spec = current.spec;
      obj.status = current.status;
    }
    const errors: FieldError[] = [];
    const admit = statusUpdate && def.admitStatus ? def.admitStatus : def.admit;
    if (admit) errors.push(...admit(obj, version, current));
    if (def.tracksGeneration && specChanged(obj, current, def.statusSubresource))
      meta.generation = (old.generation ?? 1) + 1;
    errors.push(...validateObjectMeta(obj, def.namespaced, this.nameValidator()));
    errors.push(...validateObjectMetaUpdate(obj, current));
    if (def.validate) errors.push(...def.validate(obj, current, version));
    // As on create: admission only sees objects that passed the schema and the generic checks.
    if (this.context.admit && errors.length === 0)
      errors.push(...this.context.admit(def, obj, current, options.subresource));
    if (errors.length > 0) throw newInvalid(def.group, def.kind, meta.name ?? '', errors);
    if (options.applied && incomingFields) meta.managedFields = incomingFields;
    else if (
      old.managedFields !== undefined &&
      !(Array.isArray(incomingFields) && incomingFields.length === 0)
    ) {
      // Only objects that were applied carry managedFields: the cheap path above stays for the rest.
      const fields = updateManagedFields(current, obj, old.managedFields, {
        manager: options.fieldManager?.() ?? '',
        apiVersion: apiVersionOf(def, version),
        subresource: options.subresource,
        statusSubresource: def.statusSubresource,
        schema: applySchemaFor(def, version),
      });
      if (fields.length > 0) meta.managedFields = fields;
    }
    return obj;
  }

  /** True while something still holds a deleting object: finalizers, or a namespace's own spec finalizers. */
  private held(obj: StoredObject): boolean {
    if ((obj.metadata.finalizers ?? []).length > 0) return true;
    return (
      this.def.resource === 'namespaces' &&
      ((obj.spec as { finalizers?: string[] })?.finalizers ?? []).length > 0
    );
  }

  /**
   * Writes next over current (whose revision guards the write); an object whose last finalizer went is deleted.
   * An update that changes nothing is not written. currentValue is current's stored value when the caller has
   * it: stored values are encode()'s output, which JSON round-trips exactly, so it is encode(current) without
   * serialising current again.
   */
  private async write(
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
    if (options.dryRun) return next;
    const key = this.key(current.metadata.namespace, current.metadata.name!);
    if (next.metadata.deletionTimestamp && !this.held(next)) {
      const { revision } = await this.storage.delete(key, currentRevision);
      next.metadata.resourceVersion = String(revision);
      return next;
    }
    const revision = await this.storage.update(key, value, currentRevision);
    next.metadata.resourceVersion = String(revision);
    rememberStoredValue(next, value);
    this.context.afterWrite?.(this.def, next);
    return next;
  }

  async update(
    namespace: string | undefined,
    name: string,
    input: KubeObject,
    options: WriteOptions & { version?: string } = {},
  ): Promise<StoredObject> {
    const version = options.version ?? this.def.versions[0];
    // Before its metadata is read for the name and the precondition.
    this.checkDecodable(input, version);
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
    if (!requested && !this.def.allowUnconditionalUpdate) {
      throw newInvalid(this.def.group, this.def.kind, name, [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.resourceVersion',
          value: 0,
          detail: 'must be specified for an update',
        },
      ]);
    }
    const { obj: current, value: currentValue } = await this.getStored(namespace, name);
    if (requested && requested !== current.metadata.resourceVersion)
      throw newConflict(this.def, name, OBJECT_MODIFIED);
    const next = this.prepareUpdate(
      current,
      { ...input, metadata: { ...inputMeta, name } },
      options,
      version,
      currentValue,
    );
    try {
      return await this.write(current, next, options, currentValue);
    } catch (err) {
      throw this.writeError(err, name);
    }
  }

  private writeError(err: unknown, name: string): unknown {
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
      if (requested && requested !== current.metadata.resourceVersion)
        throw newConflict(this.def, name, OBJECT_MODIFIED);
      const next = this.prepareUpdate(current, input, options, version);
      try {
        return await this.write(current, next, options);
      } catch (err) {
        if (err instanceof ConflictError && !requested && attempt < MAX_PATCH_RETRIES) continue;
        throw this.writeError(err, name);
      }
    }
  }

  async delete(
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): Promise<StoredObject> {
    for (let attempt = 0; ; attempt++) {
      const { obj: current, value } = await this.getStored(namespace, name);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw newConflict(
          this.def,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw newConflict(
          this.def,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      const next = this.markDeleting(current, options);
      if (options.dryRun) return next;
      const key = this.key(namespace, name);
      try {
        if (this.held(next)) return await this.write(current, next, options);
        const { revision } = await this.storage.delete(key, Number(current.metadata.resourceVersion));
        current.metadata.resourceVersion = String(revision);
        rememberStoredValue(current, value);
        return current;
      } catch (err) {
        if (err instanceof ConflictError && attempt < MAX_PATCH_RETRIES) continue;
        throw this.writeError(err, name);
      }
    }
  }

  /** The object as it is once deletion starts: GC finalizers per propagation policy, deletionTimestamp if held. */
  private markDeleting(current: StoredObject, options: DeleteOptions): StoredObject {
    const policy =
      options.propagationPolicy ??
      (options.orphanDependents === true
        ? 'Orphan'
        : options.orphanDependents === false
          ? 'Background'
          : undefined);
    // Only metadata (and a namespace's status) change, by replacing members: a copy of those two levels
    // leaves current as it was, without a deep copy of the whole object.
    const next: StoredObject = { ...current, metadata: { ...current.metadata } };
    let finalizers = [...(next.metadata.finalizers ?? [])];
    if (policy === 'Foreground') {
      finalizers = [
        ...finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
        FOREGROUND_FINALIZER,
      ];
    } else if (policy === 'Orphan') {
      finalizers = [
        ...finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
        ORPHAN_FINALIZER,
      ];
    } else if (policy === 'Background') {
      finalizers = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
    }
    if (finalizers.length > 0) next.metadata.finalizers = finalizers;
    else delete next.metadata.finalizers;
    if (this.held(next) && !next.metadata.deletionTimestamp) {
      next.metadata.deletionTimestamp = formatTime(new Date());
      next.metadata.deletionGracePeriodSeconds = 0;
      if (this.def.tracksGeneration && (next.metadata.generation ?? 0) > 0) next.metadata.generation! += 1;
      if (this.def.resource === 'namespaces')
        next.status = { ...(next.status as object), phase: 'Terminating' };
    }
    return next;
  }

  async deleteCollection(
    namespace: string | undefined,
    listOptions: ListOptions,
    options: DeleteOptions = {},
  ): Promise<StoredObject[]> {
    const { items } = await this.list(namespace, { ...listOptions, limit: 0, continue: '' });
    const deleted: StoredObject[] = [];
    for (const item of items) {
      try {
        deleted.push(await this.delete(item.metadata.namespace, item.metadata.name!, options));
      } catch (err) {
        if ((err as StatusError).status?.reason !== 'NotFound') throw err;
      }
    }
    return deleted;
  }

  /**
   * Streams changes as watch events. Without a resourceVersion (or with sendInitialEvents) it first sends the
   * current objects as ADDED; from resourceVersion N it sends every change after N, or 410 if N is compacted.
   * Returns a function that stops the watch.
   */
  async watch(namespace: string | undefined, options: ListOptions, sink: WatchSink): Promise<() => void> {
    this.checkFieldSelector(options.fieldSelector);
    const matches = this.matcher(options.labelSelector, options.fieldSelector);
    const ns = namespace || options.fieldSelector.requiresExactMatch('metadata.namespace') || undefined;
    const prefix = listPrefix(this.def, ns);
    const rv = options.resourceVersion;
    const initial = options.sendInitialEvents === true || rv === '' || rv === '0';
    let after: number;
    if (initial) {
      const page = await this.storage.range(prefix, {});
      for (const kv of page.kvs) {
        const obj = this.decode(kv.value, kv.modRevision);
        if (!matches(obj)) continue;
        sink.added(obj);
        // At the connection's pace; what changes meanwhile comes from the storage watch from page.revision.
        const backlog = sink.backlog?.();
        if (backlog) await backlog;
      }
      after = page.revision;
      if (options.sendInitialEvents) sink.initialEventsEnd(String(after));
    } else {
      after = Number(rv);
    }
    const watch = this.storage.watch(prefix, after, {
      event: (ev) => this.dispatch(ev, matches, sink),
      error: (err) => {
        if (err instanceof CompactedError) {
          sink.error(newExpired(`too old resource version: ${after} (${err.compactedRevision})`));
        } else {
          sink.error(newInternalError(err.message));
        }
      },
    });
    return () => watch.close();
  }

  /** Selectors apply to both sides of a change: entering the selection is ADDED, leaving it DELETED. */
  private dispatch(ev: StorageEvent, matches: (obj: StoredObject) => boolean, sink: WatchSink): void {
    if (ev.type === 'DELETE') {
      const obj = this.decode(ev.value, ev.revision);
      if (matches(obj)) sink.deleted(obj);
      return;
    }
    const obj = this.decode(ev.value, ev.revision);
    const now = matches(obj);
    if (ev.created || ev.prevValue === undefined) {
      if (now) sink.added(obj);
      return;
    }
    const previous = this.decode(ev.prevValue, ev.revision);
    const before = matches(previous);
    if (before && now) sink.modified(obj);
    else if (now) sink.added(obj);
    else if (before) sink.deleted(previous);
  }
}

export type { KeyValue };
