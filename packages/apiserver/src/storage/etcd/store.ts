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
 *
 * Watches: watch-mux.ts.
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
  Etcd3,
  type IKeyValue,
  type IRangeRequest,
  type IRangeResponse,
  type ITxnRequest,
  type ITxnResponse,
  type KVClient,
} from 'etcd3';
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
  type StorageWatch,
  UnavailableError,
  ValueTooLargeError,
  type WatchListener,
} from '../types.ts';
import {
  COMPACTED,
  FUTURE,
  isUnavailable,
  isUnsent,
  messageOf,
  passThrough,
  skipRefusingEndpoint,
  TOO_LARGE,
} from './faults.ts';
import { prefixEnd, rangeStart } from './keys.ts';
import { EtcdWatch, WatchMux } from './watch-mux.ts';

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
          if (write && TOO_LARGE.test(message))
            throw new ValueTooLargeError(`etcd: ${message}`, { cause: err });
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
