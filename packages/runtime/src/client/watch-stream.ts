import type { ClientRequest, IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { KubeObject } from '@certkit/apimachinery';
import type { WatchEvent } from './types.ts';

/**
 * The events of one watch response (newline-delimited JSON WatchEvents) as an async iterator, with:
 * - back-pressure: the socket is paused while unread events pile up;
 * - an inactivity timeout: a connection that delivers nothing for that long ends the iterator with a
 *   WatchInactivityError, so a half-open TCP connection (a load balancer dropped it, a node vanished) is
 *   noticed instead of leaving an informer silently stale;
 * - explicit lifetime: return() (a `break` out of for-await), an aborted signal, or the end of the stream
 *   destroy the request, so no socket outlives its watch.
 * Ending because the caller aborted is a clean end, not an error: the caller asked for it.
 */

export class WatchInactivityError extends Error {
  readonly timeoutMs: number;
  constructor(what: string, timeoutMs: number) {
    super(
      `watch of ${what} received nothing for ${Math.round(timeoutMs / 1000)} s; assuming the connection is dead`,
    );
    this.name = 'WatchInactivityError';
    this.timeoutMs = timeoutMs;
  }
}

export interface WatchStreamOptions<T extends KubeObject> {
  /** For error messages: `configmaps in namespace "x"`. */
  what: string;
  inactivityTimeoutMs: number;
  signal?: AbortSignal;
  /** Maps each decoded event (e.g. metadata-mode stripping); may throw to fail the stream. */
  decode(event: WatchEvent): WatchEvent<T>;
}

/** Unread events beyond which reading from the socket pauses. */
const HIGH_WATER_EVENTS = 1000;

export class WatchStream<T extends KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  readonly #request: ClientRequest;
  readonly #response: IncomingMessage;
  readonly #options: WatchStreamOptions<T>;
  readonly #decoder = new StringDecoder('utf8');
  readonly #queue: WatchEvent<T>[] = [];
  /** Start of the queue: shifting a long array is O(n), so consumed slots are trimmed in batches. */
  #head = 0;
  #partialLine: string[] = [];
  #finished = false;
  #error: Error | undefined;
  #waiter: { resolve(r: IteratorResult<WatchEvent<T>>): void; reject(e: unknown): void } | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort = () => this.#finish();

  constructor(request: ClientRequest, response: IncomingMessage, options: WatchStreamOptions<T>) {
    this.#request = request;
    this.#response = response;
    this.#options = options;
    this.#timer = setTimeout(() => {
      this.#fail(new WatchInactivityError(options.what, options.inactivityTimeoutMs));
    }, options.inactivityTimeoutMs);
    // An idle watch must not keep a process alive that has nothing else to do.
    this.#timer.unref();
    response.on('data', (chunk: Buffer) => this.#onData(chunk));
    response.once('end', () => this.#onEnd());
    response.on('error', (err) => this.#fail(err));
    response.once('close', () => {
      if (!response.complete) this.#fail(new Error(`watch of ${options.what}: connection closed mid-stream`));
    });
    if (options.signal) {
      if (options.signal.aborted) this.#finish();
      else options.signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#head < this.#queue.length) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#error) {
      const error = this.#error;
      this.#error = undefined;
      return Promise.reject(error);
    }
    if (this.#finished) return Promise.resolve({ value: undefined, done: true });
    if (this.#waiter) return Promise.reject(new Error('WatchStream.next() called while a call is pending'));
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.#finish();
    this.#queue.length = 0;
    this.#head = 0;
    this.#error = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  #take(): WatchEvent<T> {
    const event = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined as never;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    if (
      this.#response.isPaused() &&
      !this.#finished &&
      this.#queue.length - this.#head < HIGH_WATER_EVENTS / 2
    ) {
      this.#response.resume();
    }
    return event;
  }

  #onData(chunk: Buffer): void {
    if (this.#finished) return;
    this.#timer.refresh();
    const text = this.#decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      this.#partialLine.push(text.slice(start, nl));
      start = nl + 1;
      const line = this.#partialLine.length === 1 ? this.#partialLine[0] : this.#partialLine.join('');
      this.#partialLine = [];
      if (!this.#pushLine(line)) return;
    }
    if (start < text.length) this.#partialLine.push(text.slice(start));
    if (this.#queue.length - this.#head >= HIGH_WATER_EVENTS) this.#response.pause();
    this.#wake();
  }

  #onEnd(): void {
    const rest = this.#partialLine.join('') + this.#decoder.end();
    this.#partialLine = [];
    if (!this.#pushLine(rest)) return;
    this.#finish();
  }

  /** Decodes one line into the queue; false if it failed the stream. */
  #pushLine(line: string): boolean {
    if (line.trim() === '') return true;
    let event: WatchEvent<T>;
    try {
      const raw = JSON.parse(line) as WatchEvent;
      if (typeof raw?.type !== 'string' || typeof raw.object !== 'object' || raw.object === null) {
        throw new Error(`not a watch event: ${line.slice(0, 200)}`);
      }
      event = this.#options.decode(raw);
    } catch (err) {
      this.#fail(new Error(`watch of ${this.#options.what}: ${(err as Error).message}`, { cause: err }));
      return false;
    }
    this.#queue.push(event);
    return true;
  }

  #wake(): void {
    if (!this.#waiter) return;
    const waiter = this.#waiter;
    if (this.#head < this.#queue.length) {
      this.#waiter = undefined;
      waiter.resolve({ value: this.#take(), done: false });
    } else if (this.#error) {
      this.#waiter = undefined;
      const error = this.#error;
      this.#error = undefined;
      waiter.reject(error);
    } else if (this.#finished) {
      this.#waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
  }

  /** Ends with an error, after the events already received have been read. */
  #fail(error: Error): void {
    if (this.#finished) return;
    // An abort by the caller shows up as a socket error; it is a clean end.
    if (!this.#options.signal?.aborted) this.#error = error;
    this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#timer);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#request.destroy();
    this.#response.destroy();
    this.#wake();
  }
}
