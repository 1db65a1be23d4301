import {
  INITIAL_EVENTS_END_ANNOTATION,
  isGone,
  isStatus,
  isTooManyRequests,
  type KubeObject,
  StatusError,
} from '@certkit/apimachinery';
import type { ResourceClient, WatchEvent, WatchOptions } from '../client/types.ts';
import { Backoff, type BackoffOptions, sleep } from './backoff.ts';
import {
  isClientRequestError,
  isProbableEOF,
  isRetriableWatchStartError,
  isTooLargeResourceVersion,
  retryAfterMs,
} from './errors.ts';
import { defaultLogger, describeError, type LogEntry, type Logger } from '../log.ts';
import type { TransformFunc } from './objects.ts';
import { objectKey } from './store.ts';

/**
 * client-go's Reflector: keeps a store in step with the server by listing once and then watching from the
 * list's resourceVersion, relisting only when the server says the watch cannot continue (410) or the watch
 * failed in a way that may have lost events. See client-go tools/cache/reflector.go for the semantics
 * this follows, and the comments marked "deviation" for where it does not.
 */

/** Where the reflector delivers what it learns. replace() receives transformed objects only. */
export interface ReflectorStore {
  /** Replaces the whole contents with a fresh list, at its resourceVersion. */
  replace(items: Iterable<KubeObject>, resourceVersion: string): void;
  /** An object was added. */
  add(obj: KubeObject): void;
  /** An object was modified. */
  update(obj: KubeObject): void;
  /** An object was deleted. */
  delete(obj: KubeObject): void;
}

/**
 * Whether a server serves watch-list (KEP-3157) requests. One instance is shared by all reflectors talking
 * to the same server, so that only the first of them pays for finding out.
 */
export class WatchListSupport {
  #supported: boolean | undefined;

  /** Unknown counts as supported: the first request finds out. */
  get usable(): boolean {
    return this.#supported !== false;
  }

  get known(): boolean | undefined {
    return this.#supported;
  }

  /** The server answered a watch-list: use it again. */
  markSupported(): void {
    this.#supported = true;
  }

  /** The server refused a watch-list: list instead from now on. */
  markUnsupported(): void {
    this.#supported = false;
  }
}

/** Options of a Reflector: the resource client, the store, selectors, and how it lists and retries. */
export interface ReflectorOptions {
  client: ResourceClient;
  store: ReflectorStore;
  /** '' or undefined: all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Applied to every object before it reaches the store; must be idempotent. */
  transform?: TransformFunc;
  /** Ask for BOOKMARK events on watches (default true). Watch-list requests always ask, as they must. */
  allowWatchBookmarks?: boolean;
  /** Try a watch-list for the initial list (default true); falls back to LIST when the server refuses it. */
  useWatchList?: boolean;
  watchListSupport?: WatchListSupport;
  /** Page size of the initial LIST (default 500). */
  pageSize?: number;
  /** Watches ask for a timeout in [min, 2·min) seconds (default 300), spreading reconnects out. */
  minWatchTimeoutSeconds?: number;
  backoff?: BackoffOptions;
  /** A watch that ends sooner than this with no event at all counts as a failure (default 1000 ms). */
  shortWatchMs?: number;
  /**
   * How long a watch-list may go without any event before its end bookmark; then it is abandoned for a
   * LIST (default 10 s; client-go only warns here and can hang forever, see §4.1).
   */
  watchListIdleMs?: number;
  log?: Logger;
  /** For logs: what is being reflected. */
  name?: string;
}

/** What a consumed stream ended with. */
type StreamEnd = 'ended' | 'initial-events-end';

/** The LIST's continue token expired (410 on a page after the first). */
class ContinueExpired extends Error {}

/**
 * client-go's Reflector: lists (or watch-lists) a resource, then watches it from the list's resourceVersion,
 * relisting after a 410 and backing off on failures, delivering everything to a store.
 */
export class Reflector {
  readonly #client: ResourceClient;
  readonly #store: ReflectorStore;
  readonly #namespace: string | undefined;
  readonly #labelSelector: string | undefined;
  readonly #fieldSelector: string | undefined;
  readonly #transform: TransformFunc | undefined;
  readonly #allowWatchBookmarks: boolean;
  readonly #useWatchList: boolean;
  readonly #watchListSupport: WatchListSupport;
  readonly #pageSize: number;
  readonly #minWatchTimeoutSeconds: number;
  readonly #backoff: Backoff;
  readonly #shortWatchMs: number;
  readonly #watchListIdleMs: number;
  readonly #log: Logger;
  readonly #name: string;

  #lastSyncResourceVersion = '';
  /** The last list or watch-list failed with 410/Expired: the next one asks for the latest state ("" RV). */
  #resourceVersionUnavailable = false;
  /** A LIST at RV "0" came back paginated: the server honours limits there, so keep paginating relists. */
  #paginatedResult = false;
  #synced = false;
  #running = false;

  constructor(options: ReflectorOptions) {
    this.#client = options.client;
    this.#store = options.store;
    this.#namespace = options.namespace || undefined;
    this.#labelSelector = options.labelSelector || undefined;
    this.#fieldSelector = options.fieldSelector || undefined;
    this.#transform = options.transform;
    this.#allowWatchBookmarks = options.allowWatchBookmarks ?? true;
    this.#useWatchList = options.useWatchList ?? true;
    this.#watchListSupport = options.watchListSupport ?? new WatchListSupport();
    this.#pageSize = options.pageSize ?? 500;
    this.#minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? 300;
    this.#backoff = new Backoff(options.backoff);
    this.#shortWatchMs = options.shortWatchMs ?? 1000;
    this.#watchListIdleMs = options.watchListIdleMs ?? 10_000;
    this.#log = options.log ?? defaultLogger;
    const ref = options.client.ref;
    this.#name =
      options.name ?? `${ref.group ? `${ref.resource}.${ref.group}` : ref.resource} (${options.client.mode})`;
  }

  /** The resourceVersion of the last list, or of the last event or bookmark watched since. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
  }

  /** True once the first list (or watch-list) has been delivered to the store. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Lists and watches until the signal aborts (client-go's `BackoffUntil(ListAndWatch)`, sliding): every
   * return of listAndWatch, clean or not, is followed by one backoff delay before the next list.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`reflector ${this.#name} is already running`);
    this.#running = true;
    try {
      while (!signal.aborted) {
        try {
          await this.#listAndWatch(signal);
        } catch (err) {
          if (signal.aborted) break;
          this.#note('warn', 'list and watch failed', err);
        }
        if (signal.aborted) break;
        await sleep(this.#backoff.next(), signal);
      }
    } finally {
      this.#running = false;
    }
  }

  async #listAndWatch(signal: AbortSignal): Promise<void> {
    let events: AsyncIterator<WatchEvent> | undefined;
    if (this.#useWatchList && this.#watchListSupport.usable) {
      events = await this.#watchList(signal);
      if (signal.aborted) return;
    }
    if (!events) await this.#list(signal);
    await this.#watch(signal, events);
  }

  // ---------------------------------------------------------------------------------------------------
  // Initial state: LIST

  /** The RV to relist at: "0" (any, watch-cache-served) first, then the last synced one, "" after a 410. */
  #relistResourceVersion(): string {
    if (this.#resourceVersionUnavailable) return '';
    return this.#lastSyncResourceVersion === '' ? '0' : this.#lastSyncResourceVersion;
  }

  async #list(signal: AbortSignal): Promise<void> {
    let resourceVersion = this.#relistResourceVersion();
    let result: { items: KubeObject[]; resourceVersion: string };
    try {
      result = await this.#listPages(resourceVersion, signal);
    } catch (err) {
      if (!(isGone(err) || isTooLargeResourceVersion(err)) || signal.aborted) throw err;
      // The RV we asked for is compacted, or the server's cache has not reached it: ask for the latest
      // state instead, right away, so the reflector makes progress.
      this.#resourceVersionUnavailable = true;
      resourceVersion = this.#relistResourceVersion();
      result = await this.#listPages(resourceVersion, signal);
    }
    this.#resourceVersionUnavailable = false;
    this.#store.replace(result.items, result.resourceVersion);
    this.#lastSyncResourceVersion = result.resourceVersion;
    this.#synced = true;
    this.#log({
      level: 'debug',
      msg: 'listed',
      reflector: this.#name,
      items: result.items.length,
      resourceVersion: result.resourceVersion,
    });
  }

  /**
   * client-go's pager: pages of 500 when listing at RV "0" or "" (or when the server paginated before);
   * unpaginated at a specific RV so the watch cache can serve it. Items go through the transform one by
   * one as they are decoded, so a page never sits in memory untransformed. A continue token that expires
   * mid-way restarts as one full list at the same RV (FullListIfExpired).
   */
  async #listPages(
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const paginate = resourceVersion === '0' || resourceVersion === '' || this.#paginatedResult;
    try {
      return await this.#collectPages(resourceVersion, paginate ? this.#pageSize : undefined, signal);
    } catch (err) {
      if (!(err instanceof ContinueExpired)) throw err;
      this.#log({ level: 'info', msg: 'continue token expired, listing in full', reflector: this.#name });
      return this.#collectPages(resourceVersion, undefined, signal);
    }
  }

  async #collectPages(
    resourceVersion: string,
    limit: number | undefined,
    signal: AbortSignal,
  ): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const items: KubeObject[] = [];
    let continueToken = '';
    let listResourceVersion = '';
    do {
      let meta;
      try {
        meta = await this.#client.listEach(
          this.#namespace,
          {
            labelSelector: this.#labelSelector,
            fieldSelector: this.#fieldSelector,
            limit,
            // A continue token carries its own RV; sending one too is an error.
            resourceVersion: continueToken ? undefined : resourceVersion,
            continue: continueToken || undefined,
            signal,
          },
          (item) => {
            const obj = this.#transformed(item);
            if (obj) items.push(obj);
          },
        );
      } catch (err) {
        if (continueToken && isGone(err)) throw new ContinueExpired();
        throw err;
      }
      listResourceVersion = meta.resourceVersion ?? listResourceVersion;
      if (meta.continue && !continueToken && resourceVersion === '0') this.#paginatedResult = true;
      continueToken = meta.continue ?? '';
    } while (continueToken);
    return { items, resourceVersion: listResourceVersion };
  }

  // ---------------------------------------------------------------------------------------------------
  // Initial state: watch-list (KEP-3157)

  /**
   * Opens a watch with sendInitialEvents, collects the initial events in a temporary map until the
   * bookmark that ends them, replaces the store with them, and returns the still-open stream for #watch
   * to continue with. Returns undefined when a LIST should be used instead (this time, or for good when
   * the server refused the request with a 4xx).
   */
  async #watchList(signal: AbortSignal): Promise<AsyncIterator<WatchEvent> | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const idle = new AbortController();
      const watchSignal = AbortSignal.any([signal, idle.signal]);
      let events: AsyncIterator<WatchEvent>;
      try {
        const stream = await this.#client.watch(this.#namespace, {
          // Deviation: client-go asks for "" (a consistent read) on the first watch-list; we ask for what
          // the LIST path asks for ("0" first, then the last synced RV, "" after a 410), so both paths
          // promise the same freshness and a watch cache that cannot prove it is current (no progress
          // notifications) still answers at once instead of timing out with "Too large resource version".
          ...this.#watchOptions(this.#relistResourceVersion()),
          allowWatchBookmarks: true,
          sendInitialEvents: true,
          resourceVersionMatch: 'NotOlderThan',
          signal: watchSignal,
        });
        events = stream[Symbol.asyncIterator]();
      } catch (err) {
        if (signal.aborted) return undefined;
        if (isRetriableWatchStartError(err)) {
          await this.#backoffSleep(err, signal);
          continue;
        }
        if (isGone(err)) {
          this.#resourceVersionUnavailable = true;
          continue;
        }
        if (isTooLargeResourceVersion(err)) {
          // The server's cache is behind the RV we asked for; a LIST at "" is served from storage.
          this.#resourceVersionUnavailable = true;
          return undefined;
        }
        if (isClientRequestError(err)) {
          this.#watchListSupport.markUnsupported();
          this.#note('info', 'watch-list refused, using LIST', err);
          return undefined;
        }
        this.#note('warn', 'watch-list failed, falling back to LIST', err);
        return undefined;
      }

      const initial = new Map<string, KubeObject>();
      const progress = { events: 0, resourceVersion: '' };
      let idleTimer: NodeJS.Timeout | undefined;
      let idledOut = false;
      const armIdleTimer = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          idledOut = true;
          idle.abort();
        }, this.#watchListIdleMs);
      };
      armIdleTimer();
      let end: StreamEnd;
      try {
        end = await this.#consume(events, progress, initial, armIdleTimer);
      } catch (err) {
        await closeQuietly(events);
        if (signal.aborted) return undefined;
        if (idledOut) {
          // A server that ignores sendInitialEvents streams a plain watch and never sends the end bookmark.
          this.#watchListSupport.markUnsupported();
          this.#note('warn', 'watch-list sent no end bookmark, using LIST');
          return undefined;
        }
        if (isGone(err)) {
          this.#resourceVersionUnavailable = true;
          continue;
        }
        if (isTooManyRequests(err)) {
          await this.#backoffSleep(err, signal);
          continue;
        }
        this.#note('warn', 'watch-list failed, falling back to LIST', err);
        return undefined;
      } finally {
        clearTimeout(idleTimer);
      }
      if (end === 'ended') {
        // Deviation: client-go retries the watch-list forever here, which hangs servers that never send
        // the end bookmark; a LIST makes progress either way.
        await closeQuietly(events);
        if (signal.aborted) return undefined;
        if (idledOut) this.#watchListSupport.markUnsupported();
        this.#note('warn', 'watch-list ended before its initial events did, using LIST');
        return undefined;
      }
      this.#watchListSupport.markSupported();
      this.#resourceVersionUnavailable = false;
      this.#store.replace(initial.values(), progress.resourceVersion);
      initial.clear();
      this.#lastSyncResourceVersion = progress.resourceVersion;
      this.#synced = true;
      return events;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Watch

  #watchOptions(resourceVersion: string): WatchOptions {
    const timeoutSeconds = Math.floor(this.#minWatchTimeoutSeconds * (1 + Math.random()));
    return {
      labelSelector: this.#labelSelector,
      fieldSelector: this.#fieldSelector,
      resourceVersion,
      timeoutSeconds,
      allowWatchBookmarks: this.#allowWatchBookmarks,
    };
  }

  /**
   * Watches from the last synced RV, re-watching after every clean end, until something needs a relist:
   * returns (after a 410) or throws (any other failure) to #run, which backs off and relists.
   */
  async #watch(signal: AbortSignal, events: AsyncIterator<WatchEvent> | undefined): Promise<void> {
    try {
      for (;;) {
        if (signal.aborted) return;
        if (!events) {
          try {
            const stream = await this.#client.watch(this.#namespace, {
              ...this.#watchOptions(this.#lastSyncResourceVersion),
              signal,
            });
            events = stream[Symbol.asyncIterator]();
          } catch (err) {
            if (signal.aborted) return;
            if (isRetriableWatchStartError(err)) {
              // The server is down or overloaded: wait, then pick up where we were; a relist would only
              // add load and lose nothing the watch would not replay.
              this.#note('info', 'watch failed to start, backing off', err);
              await this.#backoffSleep(err, signal);
              continue;
            }
            throw err;
          }
        }

        const started = Date.now();
        const progress = { events: 0, resourceVersion: '' };
        try {
          await this.#consume(events, progress);
        } catch (err) {
          await closeQuietly(events);
          events = undefined;
          if (signal.aborted) return;
          if (isGone(err)) {
            // Relist at the last synced RV: a LIST with an RV returns data at least that fresh, so it is
            // not marked unavailable (client-go does the same).
            this.#note('info', 'watch expired, relisting', err);
            return;
          }
          if (isTooManyRequests(err)) {
            await this.#backoffSleep(err, signal);
            continue;
          }
          // A dropped connection is the end of the stream, not a failure (client-go's IsProbableEOF).
          if (!isProbableEOF(err)) throw err;
          this.#note('debug', 'watch stream broke', err);
        }
        events = undefined;
        if (progress.events === 0 && Date.now() - started < this.#shortWatchMs) {
          throw new Error(
            `very short watch: ${this.#name}: Unexpected watch close - watch lasted less than a second and no items received`,
          );
        }
      }
    } finally {
      if (events) await closeQuietly(events);
    }
  }

  /**
   * Applies events until the stream ends. With `initial`, events are collected there instead of in the
   * store, and the end-of-initial-events bookmark returns (leaving the stream open).
   */
  async #consume(
    events: AsyncIterator<WatchEvent>,
    progress: { events: number; resourceVersion: string },
    initial?: Map<string, KubeObject>,
    onEvent?: () => void,
  ): Promise<StreamEnd> {
    // A watch started at "" or "0" opens with synthetic ADDED events in no particular RV order; the RV is
    // only trustworthy from the first other event on.
    let propagateResourceVersion =
      initial === undefined && !['', '0'].includes(this.#lastSyncResourceVersion);
    for (;;) {
      const next = await events.next();
      if (next.done) return 'ended';
      const event = next.value;
      progress.events++;
      onEvent?.();
      if (event.type === 'ERROR') throw errorFromEvent(event.object);
      const obj = event.object as KubeObject;
      const resourceVersion = obj?.metadata?.resourceVersion;
      if (typeof resourceVersion !== 'string') {
        this.#log({
          level: 'error',
          msg: 'watch event without metadata, skipped',
          reflector: this.#name,
          type: event.type,
        });
        continue;
      }
      if (event.type === 'BOOKMARK') {
        if (initial) {
          if (obj.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
            progress.resourceVersion = resourceVersion;
            return 'initial-events-end';
          }
        } else {
          this.#lastSyncResourceVersion = resourceVersion;
        }
        continue;
      }
      const transformed = this.#transformed(obj);
      if (!transformed) continue;
      if (initial) {
        if (event.type === 'DELETED') initial.delete(objectKey(transformed));
        else initial.set(objectKey(transformed), transformed);
        continue;
      }
      switch (event.type) {
        case 'ADDED':
          this.#store.add(transformed);
          break;
        case 'MODIFIED':
          this.#store.update(transformed);
          break;
        case 'DELETED':
          this.#store.delete(transformed);
          break;
        default:
          this.#log({
            level: 'error',
            msg: 'unknown watch event type, skipped',
            reflector: this.#name,
            type: event.type,
          });
          continue;
      }
      if (event.type !== 'ADDED') propagateResourceVersion = true;
      if (propagateResourceVersion) this.#lastSyncResourceVersion = resourceVersion;
    }
  }

  #note(level: LogEntry['level'], msg: string, err?: unknown): void {
    const entry: LogEntry = { level, msg, reflector: this.#name };
    if (err !== undefined) entry.err = describeError(err);
    this.#log(entry);
  }

  #transformed(obj: KubeObject): KubeObject | undefined {
    if (!obj || typeof obj !== 'object' || !obj.metadata) {
      this.#log({ level: 'error', msg: 'object without metadata, skipped', reflector: this.#name });
      return undefined;
    }
    return this.#transform ? this.#transform(obj) : obj;
  }

  /** The backoff delay, but never shorter than what the server asked for in Retry-After. */
  async #backoffSleep(err: unknown, signal: AbortSignal): Promise<void> {
    await sleep(Math.max(this.#backoff.next(), retryAfterMs(err)), signal);
  }
}

function errorFromEvent(object: unknown): Error {
  if (isStatus(object)) return new StatusError(object);
  return new Error(`unexpected watch ERROR event: ${JSON.stringify(object)}`);
}

async function closeQuietly(events: AsyncIterator<WatchEvent>): Promise<void> {
  try {
    await events.return?.();
  } catch {
    // The stream is already broken; nothing to release.
  }
}
