/**
 * The storage contract: an MVCC key-value store with one global revision, the model etcd v3 offers and
 * kine emulates. Every backend (SQLite, etcd) passes the same contract suite (contract.ts).
 *
 * Keys are strings such as `/registry/secrets/default/tls`; values are serialized objects (JSON text).
 * Revisions are positive integers; each write gets the next one, and it becomes the object's resourceVersion.
 */

/** A key and its value: JSON text, or its UTF-8 bytes from rangeBytes. */
export interface KeyValue<V = string> {
  key: string;
  value: V;
  /** Revision of the write that produced this value. */
  modRevision: number;
  /** Revision of the write that created the key (carried across updates). */
  createRevision: number;
}

export interface RangeOptions {
  /** Read as of this revision (0 or absent: the current one). Older than the compacted revision: CompactedError. */
  revision?: number;
  /** Return at most this many keys (0 or absent: all). */
  limit?: number;
  /** Start at this key (inclusive) instead of the prefix's first key; it must lie within the prefix. */
  startKey?: string;
  /** Also count every key from startKey to the end of the prefix (for remainingItemCount). */
  count?: boolean;
}

export interface RangeResult<V = string> {
  kvs: KeyValue<V>[];
  /** The revision the read was served at: the store's current revision, or options.revision. */
  revision: number;
  /** True when keys remain after the last one returned. */
  more: boolean;
  /** With options.count: number of keys from startKey to the end of the prefix, returned or not. */
  count?: number;
}

export type StorageEventType = 'PUT' | 'DELETE';

export interface StorageEvent {
  type: StorageEventType;
  key: string;
  /** New value for PUT; the last value before deletion for DELETE. */
  value: string;
  /** The revision of this change. */
  revision: number;
  createRevision: number;
  /** Value before this change (absent for a create). */
  prevValue?: string;
  /** True when this PUT created the key. */
  created: boolean;
}

export interface WatchListener {
  /** Called with each change, in revision order, never two at once. */
  event(event: StorageEvent): void;
  /** Called once when the watch can no longer deliver events (compaction, lost connection, close of the store). */
  error(err: Error): void;
  /**
   * Optional progress notification: every change under the prefix up to this revision has been delivered, though
   * the store moved on through changes elsewhere. A cache uses it to know it is current (as etcd's progress
   * notifications let kube-apiserver's watch cache serve consistent reads). Backends that cannot tell never call it.
   */
  progress?(revision: number): void;
}

export interface StorageWatch {
  close(): void;
}

export interface Storage {
  /**
   * True when a watch reports progress (WatchListener.progress) for every write outside its prefix as it
   * happens, so that a watch which has delivered up to currentRevision() is known to be current: a watch cache
   * can then answer a consistent read itself (KEP-2340). etcd 3.4 sends progress notifications only now and
   * then, so its consistent reads go to storage.
   */
  readonly progressOnEveryWrite?: boolean;
  /** How writes were committed so far, for metrics; backends that commit one write at a time leave it out. */
  commitStats?(): CommitStats;
  /** The latest revision of the whole store. */
  currentRevision(): Promise<number>;
  /** The revision below which history is gone (0 when nothing was compacted). */
  compactedRevision(): Promise<number>;
  get(key: string): Promise<KeyValue | undefined>;
  /** Keys with the prefix, sorted by key. */
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;
  /**
   * range() with the values as their UTF-8 bytes, for reads that pass values on without parsing them (a
   * large list written out as it is read): no JavaScript string is made of each value, which for large
   * values would all land in the heap's large-object space until the next full collection.
   */
  rangeBytes(prefix: string, options?: RangeOptions): Promise<RangeResult<Uint8Array>>;
  /** Creates the key if absent; throws KeyExistsError otherwise. Returns the new revision. */
  create(key: string, value: string): Promise<number>;
  /**
   * Replaces the value if the key's modRevision equals expectedRevision. Throws NotFoundError when the key is
   * absent, ConflictError (carrying the current value) when the revision differs.
   */
  update(key: string, value: string, expectedRevision: number): Promise<number>;
  /**
   * Deletes the key, guarded by expectedRevision when given. Returns the deletion revision and the deleted value.
   * Throws NotFoundError or ConflictError as update does.
   */
  delete(key: string, expectedRevision?: number): Promise<{ revision: number; prev: KeyValue }>;
  /**
   * Delivers every change under the prefix with revision > afterRevision, in order, then follows new changes.
   * afterRevision below the compacted revision: the listener's error() gets a CompactedError (asynchronously).
   */
  watch(prefix: string, afterRevision: number, listener: WatchListener): StorageWatch;
  /** Discards history older than the revision; reads and watches before it fail with CompactedError. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

/** Counters of a group-committing store since it opened (storage/metrics.ts exposes them). */
export interface CommitStats {
  /** Group commits the writer carried out (failed ones included). */
  groups: number;
  /** Writes in those groups. */
  writes: number;
  /** Seconds from handing a group to the writer to its answer, summed: how busy committing kept the writer. */
  commitSeconds: number;
}

export class StorageError extends Error {}

export class KeyExistsError extends StorageError {
  readonly key: string;
  constructor(key: string) {
    super(`key exists: ${key}`);
    this.key = key;
  }
}

export class NotFoundError extends StorageError {
  readonly key: string;
  constructor(key: string) {
    super(`key not found: ${key}`);
    this.key = key;
  }
}

export class ConflictError extends StorageError {
  readonly key: string;
  /** The value the store holds now, so the caller can retry without another read. */
  readonly current: KeyValue;
  constructor(key: string, current: KeyValue) {
    super(`revision conflict on ${key}: current revision is ${current.modRevision}`);
    this.key = key;
    this.current = current;
  }
}

export class CompactedError extends StorageError {
  readonly requestedRevision: number;
  readonly compactedRevision: number;
  constructor(requestedRevision: number, compactedRevision: number) {
    super(
      `required revision ${requestedRevision} has been compacted (compacted revision ${compactedRevision})`,
    );
    this.requestedRevision = requestedRevision;
    this.compactedRevision = compactedRevision;
  }
}

/** A read at a revision the store has not reached yet (etcd's ErrFutureRev). */
export class FutureRevisionError extends StorageError {
  readonly requestedRevision: number;
  constructor(requestedRevision: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.requestedRevision = requestedRevision;
  }
}

/** The store cannot be reached (lost connection, closed). */
export class UnavailableError extends StorageError {}

/**
 * The store refused a write for its size: etcd takes requests up to its `--max-request-bytes` (1.5 MiB by
 * default), where the API server takes bodies up to 3 MiB. The client's to fix, so a 413, not a 500.
 */
export class ValueTooLargeError extends StorageError {}
