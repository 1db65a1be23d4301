/**
 * Storage on etcd v3, through the etcd3 npm client's raw gRPC stubs (KV and Watch, over one channel per endpoint).
 *
 * Keys live under an optional prefix, so several stores (e.g. test suites) can share one etcd. The contract maps
 * onto etcd as Kubernetes' own etcd3 store does:
 *   - create: Txn(mod_revision(key) == 0 → Put); a failed compare is KeyExistsError.
 *   - update / guarded delete: Txn(mod_revision(key) == expected → Put|DeleteRange(prev_kv), else → Range(key));
 *     the else branch tells NotFoundError from ConflictError (which carries the current value).
 *   - unguarded delete: DeleteRange(prev_kv); nothing deleted is NotFoundError (etcd takes no revision then).
 *   - range: one Range with range_end = the prefix's end; etcd always reports the number of keys in
 *     [key, range_end), which is what `count` asks for.
 *
 * Watches use the raw bidirectional Watch stream, not etcd3's Watcher: that one resumes after a reconnect from
 * the last response's header revision and can skip events. One stream per store multiplexes every watch by a
 * watch_id we choose. Each watch remembers the last revision it queued and is re-created from there:
 *
 *   - A watch after revision R is created with start_revision R (not R + 1) and drops the events of revision R.
 *     etcd refuses a start below its compacted revision C, so this fails exactly when R < C: the event at C would
 *     otherwise lack its previous value (compaction at C drops the versions it superseded), as in the SQLite store.
 *   - If the stream breaks (etcd restarted, member killed, network), it is reopened with backoff (50 ms doubling to
 *     1 s, on any endpoint) and every watch re-created from its last revision: no event lost or repeated. When no
 *     stream has been re-established within watchReconnectTimeoutMs (default 5 s), every watch gets an
 *     UnavailableError instead; the caller re-lists, as after any watch error.
 *   - A compacted start (or a watcher etcd could not keep up with) arrives as a canceled response carrying
 *     compact_revision: CompactedError.
 *
 * compactedRevision(): etcd has no API for it. The store keeps the highest revision it compacted to or learned of
 * (canceled watches); it checks that watermark with one Range at that revision (refused when etcd has been
 * compacted further, e.g. by another client or after a reconnect), and then finds the exact value by binary search
 * over Ranges at older revisions. So it is exact, and costs one round trip when nothing changed.
 *
 * Requests that fail because etcd cannot be reached are retried for up to requestRetryMs (default 2 s) when the
 * request cannot have been applied: reads and compactions always; writes only when the connection was never
 * established or etcd refused them before proposing (no leader). A write whose outcome is unknown (connection lost
 * mid-request, timeout) fails with UnavailableError: it may or may not have been applied.
 */

import { Buffer } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ClientClosedError,
  Etcd3,
  GRPCDeadlineExceededError,
  GRPCUnavailableError,
  type IDuplexStream,
  type IEvent,
  type IKeyValue,
  type IOptions,
  type IRangeRequest,
  type IRangeResponse,
  type ITxnRequest,
  type ITxnResponse,
  type IWatchRequest,
  type IWatchResponse,
  type KVClient,
} from 'etcd3';
import { EventDelivery } from './delivery.ts';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  type KeyValue,
  NotFoundError,
  type RangeOptions,
  type RangeResult,
  type Storage,
  StorageError,
  type StorageEvent,
  type StorageWatch,
  UnavailableError,
  type WatchListener,
} from './types.ts';

export interface EtcdStorageOptions {
  /** Client URLs, e.g. http://127.0.0.1:2379 (the scheme is optional). */
  endpoints: string[];
  /** Prepended to every key in etcd (default none); the store's own keys never show it. */
  prefix?: string;
  /** How long connect() keeps trying to reach etcd, in ms (default 5000). */
  dialTimeoutMs?: number;
  /** Deadline of each request, in ms (default 10000). */
  requestTimeoutMs?: number;
  /** How long requests that cannot have been applied are retried while etcd is unreachable, in ms (default 2000). */
  requestRetryMs?: number;
  /** How long broken watches try to resume before failing with UnavailableError, in ms (default 5000). */
  watchReconnectTimeoutMs?: number;
}

type CallOptions = NonNullable<Parameters<KVClient['range']>[1]>;
type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

const NEVER_ABORTED = new AbortController().signal;

/**
 * Replaces etcd3's default fault handling (3 retries of anything "recoverable", and a circuit breaker that refuses
 * calls for 5 s after 3 failures): retrying a write whose response was lost would report a KeyExistsError or
 * ConflictError for the caller's own write, and the breaker would delay recovery after an etcd restart. Retries
 * happen in EtcdStorage, which knows which requests are safe to repeat.
 */
const passThrough = {
  // async: a function that throws synchronously (etcd3's markFailed passes one) must become a rejection.
  execute: async <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    fn({ signal: NEVER_ABORTED }),
} as unknown as Policy;

/** Thrown instead of calling an endpoint that just refused connections; etcd3 then tries the next endpoint. */
class EndpointSkipped extends Error {}

/**
 * With several endpoints: after an endpoint refuses a connection, skip it for a while so that requests (and the
 * watch stream) go to the others at once instead of failing and being retried. A single endpoint is never skipped.
 */
function skipRefusingEndpoint(skipMs: number): Policy {
  let skipUntil = 0;
  return {
    async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
      if (skipUntil > Date.now())
        throw new EndpointSkipped('etcd endpoint skipped after a refused connection');
      try {
        return await fn({ signal: NEVER_ABORTED });
      } catch (err) {
        if (isUnsent(err)) skipUntil = Date.now() + skipMs;
        throw err;
      }
    },
  } as unknown as Policy;
}

const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';

/** etcd refused the request before it could be applied: safe to retry even a write. */
function isUnsent(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return (
    message.includes('No connection established') ||
    message.includes('failed to connect') ||
    message.includes('etcdserver: no leader') ||
    message.includes('etcdserver: too many requests') ||
    message.includes('etcdserver: not capable') ||
    err instanceof EndpointSkipped ||
    err instanceof ClientClosedError
  );
}

/** etcd could not be reached or did not answer in time; the request may or may not have been applied. */
function isUnavailable(err: unknown): boolean {
  if (err instanceof GRPCUnavailableError || err instanceof GRPCDeadlineExceededError) return true;
  const message = err instanceof Error ? err.message : '';
  return (
    isUnsent(err) ||
    message.includes('etcdserver: leader changed') ||
    message.includes('etcdserver: request timed out') ||
    message.includes('etcdserver: server stopped') ||
    message.includes('raft proposal dropped')
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const ZERO_KEY = Buffer.from([0]);

/** The first key of a prefix range: etcd refuses an empty key, and "\0" is the smallest non-empty one. */
function rangeStart(prefix: Buffer): Buffer {
  return prefix.length === 0 ? ZERO_KEY : prefix;
}

/** The exclusive end of the keys starting with prefix, in etcd's byte order ("\0" = no end). */
function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.allocUnsafe(i + 1);
      prefix.copy(end, 0, 0, i + 1);
      end[i]++;
      return end;
    }
  }
  return ZERO_KEY;
}

export class EtcdStorage implements Storage {
  readonly #client: Etcd3;
  readonly #kv: KVClient;
  readonly #prefix: string;
  readonly #prefixBytes: number;
  readonly #requestTimeoutMs: number;
  readonly #requestRetryMs: number;
  readonly #watches: WatchMux;
  /** Any key: currentRevision() and the compaction probes read it only for the response's header. */
  readonly #probeKey: Buffer;
  #compacted = 0;
  #closed = false;

  /** Connects to etcd and waits (up to dialTimeoutMs) until it answers a read. */
  static async connect(options: EtcdStorageOptions): Promise<EtcdStorage> {
    if (options.endpoints.length === 0) throw new StorageError('no etcd endpoints given');
    const storage = new EtcdStorage(options);
    try {
      await storage.#dial(options.dialTimeoutMs ?? 5000);
    } catch (err) {
      await storage.close();
      throw err;
    }
    return storage;
  }

  private constructor(options: EtcdStorageOptions) {
    this.#prefix = options.prefix ?? '';
    this.#prefixBytes = Buffer.byteLength(this.#prefix);
    this.#probeKey = rangeStart(Buffer.from(this.#prefix));
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#requestRetryMs = options.requestRetryMs ?? 2000;
    this.#client = new Etcd3({
      hosts: options.endpoints,
      grpcOptions: {
        // Large lists and watch catch-ups exceed gRPC's default 4 MB; etcd bounds what it sends itself.
        'grpc.max_receive_message_length': -1,
        // Notice a dead connection (e.g. a hung member) under a quiet watch. etcd accepts pings every 5 s at most.
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
        // Reconnect quickly after an etcd restart (gRPC's default backoff grows to 2 minutes).
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1_000,
      },
      faultHandling: {
        global: passThrough,
        host: () => (options.endpoints.length > 1 ? skipRefusingEndpoint(1000) : passThrough),
      },
    });
    this.#kv = this.#client.kv;
    this.#watches = new WatchMux(
      this.#client,
      this.#prefixBytes,
      options.watchReconnectTimeoutMs ?? 5000,
      (rev) => this.#noteCompacted(rev),
    );
  }

  async currentRevision(): Promise<number> {
    const res = await this.#range({ key: this.#probeKey, count_only: true });
    return Number(res.header.revision);
  }

  async compactedRevision(): Promise<number> {
    this.#checkOpen();
    const known = this.#compacted;
    if (await this.#readableAt(Math.max(1, known))) return known;
    // Compacted past what we knew: the watermark is the oldest readable revision, found by bisection.
    let unreadable = Math.max(1, known);
    let readable = await this.currentRevision();
    while (readable - unreadable > 1) {
      const mid = Math.floor((readable + unreadable) / 2);
      if (await this.#readableAt(mid)) readable = mid;
      else unreadable = mid;
    }
    this.#noteCompacted(readable);
    return this.#compacted;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.#range({ key: this.#etcdKey(key) });
    return res.kvs.length === 0 ? undefined : this.#toKeyValue(res.kvs[0]);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    return this.#rangeWith(prefix, options, (kv) => this.#toKeyValue(kv));
  }

  async rangeBytes(prefix: string, options: RangeOptions = {}): Promise<RangeResult<Uint8Array>> {
    // etcd hands values over as bytes already.
    return this.#rangeWith(prefix, options, (kv) => ({ ...this.#toKeyValue(kv, false), value: kv.value }));
  }

  async #rangeWith<V>(
    prefix: string,
    options: RangeOptions,
    toKeyValue: (kv: IKeyValue) => KeyValue<V>,
  ): Promise<RangeResult<V>> {
    const requested = options.revision && options.revision > 0 ? options.revision : 0;
    const prefixKey = this.#etcdKey(prefix);
    let startKey = rangeStart(prefixKey);
    if (options.startKey) {
      const start = this.#etcdKey(options.startKey);
      if (Buffer.compare(start, prefixKey) > 0) startKey = start;
    }
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const req: IRangeRequest = { key: startKey, range_end: prefixEnd(prefixKey) };
    if (limit > 0) req.limit = limit;
    if (requested > 0) req.revision = requested;
    let res: IRangeResponse;
    try {
      res = await this.#range(req);
    } catch (err) {
      throw await this.#revisionError(err, requested);
    }
    const n = res.kvs.length;
    const kvs: KeyValue<V>[] = new Array(n);
    for (let i = 0; i < n; i++) kvs[i] = toKeyValue(res.kvs[i]);
    const result: RangeResult<V> = {
      kvs,
      revision: requested > 0 ? requested : Number(res.header.revision),
      more: res.more,
    };
    if (options.count) result.count = Number(res.count);
    return result;
  }

  async create(key: string, value: string): Promise<number> {
    const k = this.#etcdKey(key);
    const res = await this.#txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: 0 }],
      success: [{ request_put: { key: k, value: Buffer.from(value) } }],
    });
    if (!res.succeeded) throw new KeyExistsError(key);
    return Number(res.header.revision);
  }

  async update(key: string, value: string, expectedRevision: number): Promise<number> {
    const k = this.#etcdKey(key);
    // mod_revision == 0 would match an absent key and create it.
    if (!(expectedRevision > 0)) throw this.#mismatch(key, (await this.#range({ key: k })).kvs);
    const res = await this.#txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRevision }],
      success: [{ request_put: { key: k, value: Buffer.from(value) } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.#mismatch(key, res.responses[0].response_range.kvs);
    return Number(res.header.revision);
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; prev: KeyValue }> {
    const k = this.#etcdKey(key);
    if (expectedRevision === undefined) {
      const res = await this.#call(true, (o) => this.#kv.deleteRange({ key: k, prev_kv: true }, o));
      if (res.prev_kvs.length === 0) throw new NotFoundError(key);
      return { revision: Number(res.header.revision), prev: this.#toKeyValue(res.prev_kvs[0]) };
    }
    if (!(expectedRevision > 0)) throw this.#mismatch(key, (await this.#range({ key: k })).kvs);
    const res = await this.#txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRevision }],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.#mismatch(key, res.responses[0].response_range.kvs);
    const prev = res.responses[0].response_delete_range.prev_kvs;
    if (prev.length === 0) throw new NotFoundError(key);
    return { revision: Number(res.header.revision), prev: this.#toKeyValue(prev[0]) };
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): StorageWatch {
    const key = this.#etcdKey(prefix);
    const watch = new EtcdWatch(
      this.#watches,
      rangeStart(key),
      prefixEnd(key),
      Math.max(0, afterRevision),
      listener,
    );
    if (this.#closed) watch.fail(new UnavailableError('storage is closed'));
    else this.#watches.add(watch);
    return watch;
  }

  /**
   * Compacts etcd's history (the whole etcd, not only this store's prefix: etcd has one revision history).
   * Compacting to or below the compacted revision is a no-op; a future revision is refused.
   */
  async compact(revision: number): Promise<void> {
    if (revision <= this.#compacted) {
      this.#checkOpen();
      return;
    }
    try {
      await this.#call(false, (o) => this.#kv.compact({ revision }, o));
    } catch (err) {
      if (!messageOf(err).includes(COMPACTED)) throw err;
      // etcd says "compacted" for a revision at or below its watermark: nothing to do.
      return;
    }
    this.#noteCompacted(revision);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watches.close(new UnavailableError('storage is closed'));
    this.#client.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw new UnavailableError('storage is closed');
  }

  #etcdKey(key: string): Buffer {
    return Buffer.from(this.#prefix + key);
  }

  #toKeyValue(kv: IKeyValue, withValue = true): KeyValue {
    return {
      key: kv.key.toString('utf8', this.#prefixBytes),
      value: withValue ? kv.value.toString('utf8') : '',
      modRevision: Number(kv.mod_revision),
      createRevision: Number(kv.create_revision),
    };
  }

  /** The error for a guarded write whose compare failed, from the key's current state. */
  #mismatch(key: string, kvs: IKeyValue[]): StorageError {
    return kvs.length === 0 ? new NotFoundError(key) : new ConflictError(key, this.#toKeyValue(kvs[0]));
  }

  #noteCompacted(revision: number): void {
    if (revision > this.#compacted) this.#compacted = revision;
  }

  async #dial(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.#kv.range(
          { key: this.#probeKey, count_only: true },
          { deadline: Math.min(deadline, Date.now() + 1000) },
        );
        return;
      } catch (err) {
        if (this.#closed) throw new UnavailableError('storage is closed', { cause: err });
        if (!isUnavailable(err)) throw new StorageError(`etcd: ${messageOf(err)}`, { cause: err });
        if (Date.now() + 50 >= deadline) {
          throw new UnavailableError(`etcd unreachable after ${timeoutMs} ms: ${messageOf(err)}`, {
            cause: err,
          });
        }
        await sleep(50);
      }
    }
  }

  /** Whether a read at the revision is allowed (false when it has been compacted). */
  async #readableAt(revision: number): Promise<boolean> {
    try {
      await this.#range({ key: this.#probeKey, count_only: true, revision });
      return true;
    } catch (err) {
      if (messageOf(err).includes(COMPACTED)) return false;
      throw err;
    }
  }

  /** Maps a Range failure at a given revision to CompactedError or a StorageError for the future. */
  async #revisionError(err: unknown, requested: number): Promise<unknown> {
    const message = messageOf(err);
    if (message.includes(COMPACTED)) {
      return new CompactedError(requested, await this.compactedRevision());
    }
    if (message.includes(FUTURE)) {
      return new FutureRevisionError(requested, `required revision ${requested} is a future revision`, {
        cause: err,
      });
    }
    return err;
  }

  #range(req: IRangeRequest): Promise<IRangeResponse> {
    return this.#call(false, (o) => this.#kv.range(req, o));
  }

  #txn(req: ITxnRequest): Promise<ITxnResponse> {
    return this.#call(true, (o) => this.#kv.txn(req, o));
  }

  /**
   * Runs a request with a deadline, retrying while etcd is unreachable and the request is safe to repeat (see the
   * file comment), and maps failures to the contract's errors.
   */
  async #call<T>(write: boolean, fn: (options: CallOptions) => Promise<T>): Promise<T> {
    this.#checkOpen();
    const retryUntil = Date.now() + this.#requestRetryMs;
    // The first retry is immediate: with several endpoints it goes to another one.
    let delay = 0;
    for (;;) {
      try {
        return await fn({ deadline: Date.now() + this.#requestTimeoutMs });
      } catch (err) {
        if (this.#closed) throw new UnavailableError('storage is closed', { cause: err });
        if (!isUnavailable(err)) {
          const message = messageOf(err);
          // Kept as is for the callers that map it (range, compact).
          if (message.includes(COMPACTED)) throw err;
          throw new StorageError(`etcd: ${message}`, { cause: err });
        }
        const retry = write ? isUnsent(err) : true;
        if (!retry || Date.now() + delay > retryUntil) {
          throw new UnavailableError(
            `etcd unavailable${write && !isUnsent(err) ? ' (the write may have been applied)' : ''}: ${messageOf(err)}`,
            { cause: err },
          );
        }
        await sleep(delay);
        delay = Math.min(Math.max(delay * 2, 25), 250);
      }
    }
  }
}

/** Turns an etcd watch event into the contract's event; the key loses the store's prefix. */
function toStorageEvent(e: IEvent, prefixBytes: number): StorageEvent {
  const kv = e.kv;
  const revision = Number(kv.mod_revision);
  const key = kv.key.toString('utf8', prefixBytes);
  const prev = e.prev_kv;
  if (e.type === 'Delete') {
    // The DELETE's kv is a tombstone; the deleted value and its create revision come from prev_kv.
    const value = prev ? prev.value.toString('utf8') : '';
    return {
      type: 'DELETE',
      key,
      value,
      revision,
      createRevision: prev ? Number(prev.create_revision) : 0,
      prevValue: value,
      created: false,
    };
  }
  const createRevision = Number(kv.create_revision);
  const event: StorageEvent = {
    type: 'PUT',
    key,
    value: kv.value.toString('utf8'),
    revision,
    createRevision,
    created: createRevision === revision,
  };
  if (prev && !event.created) event.prevValue = prev.value.toString('utf8');
  return event;
}

/**
 * One Watch stream shared by all of a store's watches, re-opened (and the watches re-created) when it breaks.
 */
class WatchMux {
  readonly #client: Etcd3;
  readonly #prefixBytes: number;
  readonly #reconnectTimeoutMs: number;
  readonly #onCompacted: (revision: number) => void;
  readonly #watches = new Map<string, EtcdWatch>();
  #nextId = 1;
  #stream: WatchStream | undefined;
  #opening = false;
  #closed = false;
  /** When the stream broke and no replacement has yet confirmed a watch; undefined while healthy. */
  #brokenSince: number | undefined;
  #lastError: unknown;
  #backoffMs = 50;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #giveUpTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    client: Etcd3,
    prefixBytes: number,
    reconnectTimeoutMs: number,
    onCompacted: (revision: number) => void,
  ) {
    this.#client = client;
    this.#prefixBytes = prefixBytes;
    this.#reconnectTimeoutMs = reconnectTimeoutMs;
    this.#onCompacted = onCompacted;
  }

  get prefixBytes(): number {
    return this.#prefixBytes;
  }

  nextId(): number {
    return this.#nextId++;
  }

  add(watch: EtcdWatch): void {
    this.#watches.set(watch.idString, watch);
    if (this.#stream) this.#sendCreate(this.#stream, watch);
    else if (!this.#opening && this.#retryTimer === undefined) void this.#open();
  }

  remove(watch: EtcdWatch): void {
    if (this.#watches.get(watch.idString) !== watch) return;
    this.#watches.delete(watch.idString);
    const stream = this.#stream;
    if (stream && watch.sentOn === stream) {
      try {
        stream.write({ cancel_request: { watch_id: watch.id } });
      } catch {
        // the stream is going away; its watches with it
      }
    }
  }

  close(err: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clearTimers();
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    for (const watch of watches) watch.fail(err);
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream) stream.cancel();
  }

  async #open(): Promise<void> {
    if (this.#closed || this.#opening || this.#stream) return;
    this.#opening = true;
    let stream: WatchStream;
    try {
      stream = await this.#client.watchClient.watch();
    } catch (err) {
      this.#opening = false;
      this.#broken(err);
      return;
    }
    this.#opening = false;
    if (this.#closed) {
      stream.cancel();
      return;
    }
    this.#stream = stream;
    stream.on('data', (res: IWatchResponse) => this.#onResponse(stream, res));
    stream.on('error', (err: Error) => this.#onStreamEnd(stream, err));
    stream.on('end', () => this.#onStreamEnd(stream, new Error('watch stream ended')));
    for (const watch of this.#watches.values()) this.#sendCreate(stream, watch);
  }

  #sendCreate(stream: WatchStream, watch: EtcdWatch): void {
    watch.sentOn = stream;
    // From the last queued revision itself (its events are dropped): see the file comment.
    watch.floor = watch.cursor;
    stream.write({
      create_request: {
        key: watch.key,
        range_end: watch.rangeEnd,
        start_revision: Math.max(1, watch.cursor),
        prev_kv: true,
        watch_id: watch.id,
      },
    });
  }

  #onResponse(stream: WatchStream, res: IWatchResponse): void {
    if (stream !== this.#stream) return;
    if (res.created && !res.canceled) this.#healthy();
    const watch = this.#watches.get(res.watch_id);
    if (watch === undefined || watch.sentOn !== stream) return;
    const compactRevision = Number(res.compact_revision);
    if (compactRevision > 0) {
      this.#watches.delete(watch.idString);
      this.#onCompacted(compactRevision);
      watch.fail(new CompactedError(watch.cursor, compactRevision));
      return;
    }
    if (res.canceled) {
      this.#watches.delete(watch.idString);
      watch.fail(new StorageError(`etcd canceled the watch: ${res.cancel_reason || 'no reason given'}`));
      return;
    }
    if (res.events.length > 0) watch.offer(res.events);
  }

  #onStreamEnd(stream: WatchStream, err: unknown): void {
    if (stream !== this.#stream) return;
    this.#stream = undefined;
    try {
      stream.cancel();
    } catch {
      // already finished
    }
    this.#broken(err);
  }

  /** The stream is gone (or could not be opened): retry with backoff, within the reconnect window. */
  #broken(err: unknown): void {
    if (this.#closed) return;
    this.#lastError = err;
    if (this.#watches.size === 0) {
      // Nothing to resume; the next watch opens a new stream.
      this.#brokenSince = undefined;
      this.#clearTimers();
      return;
    }
    if (this.#brokenSince === undefined) {
      this.#brokenSince = Date.now();
      this.#giveUpTimer = setTimeout(() => this.#giveUp(), this.#reconnectTimeoutMs);
    }
    if (this.#retryTimer === undefined) {
      const delay = this.#backoffMs;
      this.#backoffMs = Math.min(this.#backoffMs * 2, 1000);
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        void this.#open();
      }, delay);
    }
  }

  #healthy(): void {
    if (this.#brokenSince === undefined) return;
    this.#brokenSince = undefined;
    this.#backoffMs = 50;
    if (this.#giveUpTimer !== undefined) clearTimeout(this.#giveUpTimer);
    this.#giveUpTimer = undefined;
  }

  #giveUp(): void {
    this.#giveUpTimer = undefined;
    if (this.#closed || this.#brokenSince === undefined) return;
    const elapsed = Date.now() - this.#brokenSince;
    const err = new UnavailableError(
      `etcd watch stream lost and not re-established within ${elapsed} ms: ${messageOf(this.#lastError)}`,
      { cause: this.#lastError },
    );
    this.#brokenSince = undefined;
    this.#backoffMs = 50;
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    for (const watch of watches) watch.fail(err);
    // A stream still being tried is dropped; the next watch opens a fresh one.
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream) stream.cancel();
  }

  #clearTimers(): void {
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    if (this.#giveUpTimer !== undefined) clearTimeout(this.#giveUpTimer);
    this.#retryTimer = undefined;
    this.#giveUpTimer = undefined;
  }
}

/** One watch: queues what the stream delivers and hands it to the listener one event at a time. */
class EtcdWatch implements StorageWatch {
  readonly id: number;
  readonly idString: string;
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  /** The highest revision queued (or the start revision): a re-created watch resumes after it. */
  cursor: number;
  /** Events at or below this revision are repeats (the stream was (re)created from it) and are dropped. */
  floor: number;
  /** The stream the watch was last created on. */
  sentOn: WatchStream | undefined;
  readonly #mux: WatchMux;
  readonly #delivery: EventDelivery;

  constructor(mux: WatchMux, key: Buffer, rangeEnd: Buffer, afterRevision: number, listener: WatchListener) {
    this.#mux = mux;
    this.id = mux.nextId();
    this.idString = String(this.id);
    this.key = key;
    this.rangeEnd = rangeEnd;
    this.cursor = afterRevision;
    this.floor = afterRevision;
    this.#delivery = new EventDelivery(listener, () => mux.remove(this));
  }

  /** Queues a response's events. One response holds whole revisions, so the floor is checked per response. */
  offer(events: IEvent[]): void {
    if (!this.#delivery.active) return;
    const floor = this.floor;
    const prefixBytes = this.#mux.prefixBytes;
    const queued: StorageEvent[] = [];
    for (const e of events) {
      const revision = Number(e.kv.mod_revision);
      if (revision <= floor) continue;
      queued.push(toStorageEvent(e, prefixBytes));
      if (revision > this.cursor) this.cursor = revision;
    }
    this.floor = this.cursor;
    this.#delivery.pushAll(queued);
  }

  /** Ends the watch with an error, after the events already queued. */
  fail(err: Error): void {
    this.#delivery.fail(err);
  }

  close(): void {
    this.#delivery.close();
  }
}
