/**
 * Watches on etcd v3 for EtcdStorage (store.ts).
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
 */

import { Buffer } from 'node:buffer';
import { Etcd3, type IDuplexStream, type IEvent, type IWatchRequest, type IWatchResponse } from 'etcd3';
import { EventDelivery } from '../delivery.ts';
import {
  CompactedError,
  StorageError,
  type StorageEvent,
  type StorageWatch,
  UnavailableError,
  type WatchListener,
} from '../types.ts';
import { messageOf } from './faults.ts';

type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

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
export class WatchMux {
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
    this.#failAll(err);
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
    this.#clearTimers();
    // A stream still being tried is dropped; the next watch opens a fresh one.
    this.#failAll(err);
  }

  /** Ends every watch with `err` and drops the stream they were on: on close, and when reconnecting gave up. */
  #failAll(err: Error): void {
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    for (const watch of watches) watch.fail(err);
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
export class EtcdWatch implements StorageWatch {
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
