import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  SqliteWriter,
  toFailure,
  type WriterFailure,
  type WriterOptions,
  type WriterRequest,
} from './sqlite-writer.ts';

/** How the store reaches its writer: requests are carried out one at a time, in order. */
export interface WriterClient {
  /** Resolves with the request's result, or rejects with a WriterFailure. */
  send(request: WriterRequest): Promise<number | string | undefined>;
  close(): Promise<void>;
}

export type ThreadMessage =
  { id: number; close?: false; request: WriterRequest } | { id: number; close: true };

type ThreadReply =
  { id: number; ok: true; value?: number | string } | { id: number; ok: false; failure: WriterFailure };

/** The writer on the store's own connection, for databases another thread cannot open (in-memory ones). */
export class InlineWriter implements WriterClient {
  readonly #writer: SqliteWriter;

  constructor(writer: SqliteWriter) {
    this.#writer = writer;
  }

  send(request: WriterRequest): Promise<number | string | undefined> {
    try {
      return Promise.resolve(this.#writer.apply(request));
    } catch (err) {
      return Promise.reject(toFailure(err));
    }
  }

  async close(): Promise<void> {
    // The connection is the store's, which closes it.
  }
}

/**
 * The thread's module, beside this one: `.ts` when the sources run (tests), `.js` when the build does
 * (production). The compiler rewrites import specifiers, not URLs, so the extension is taken from this module.
 */
const WRITER_THREAD_MODULE = new URL(`./sqlite-writer-thread${extname(import.meta.url)}`, import.meta.url);

/** The writer on a thread of its own, with its own connection to the database file. */
export class ThreadWriter implements WriterClient {
  readonly #worker: Worker;
  readonly #pending = new Map<number, PromiseWithResolvers<number | string | undefined>>();
  #nextId = 0;
  /** Set once the thread failed or exited: every request after fails with it. */
  #gone: WriterFailure | undefined;
  #closing = false;

  constructor(path: string, options: WriterOptions) {
    this.#worker = new Worker(WRITER_THREAD_MODULE, {
      workerData: { path, options },
      // The process's own flags are not the thread's business, and some (--input-type, --eval) would fail it.
      execArgv: [],
    });
    // Only requests in flight keep the process alive, as a connection on the main thread would not either.
    this.#worker.unref();
    this.#worker.on('message', (reply: ThreadReply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      // While closing, the thread's exit is still to come and must keep the process alive until it happens.
      if (this.#pending.size === 0 && !this.#closing) this.#worker.unref();
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(reply.failure);
    });
    this.#worker.on('error', (err) => this.#fail(toFailure(err)));
    this.#worker.on('exit', (code) => {
      if (!this.#closing) this.#fail({ message: `the SQLite writer thread exited with code ${code}` });
    });
  }

  send(request: WriterRequest): Promise<number | string | undefined> {
    return this.#post({ id: ++this.#nextId, request });
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#gone) return;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    await this.#post({ id: ++this.#nextId, close: true });
    await exited;
  }

  #post(message: ThreadMessage): Promise<number | string | undefined> {
    if (this.#gone) return Promise.reject(this.#gone);
    const pending = Promise.withResolvers<number | string | undefined>();
    if (this.#pending.size === 0) this.#worker.ref();
    this.#pending.set(message.id, pending);
    this.#worker.postMessage(message);
    return pending.promise;
  }

  #fail(failure: WriterFailure): void {
    this.#gone ??= failure;
    for (const pending of this.#pending.values()) pending.reject(failure);
    this.#pending.clear();
    this.#worker.unref();
  }
}
