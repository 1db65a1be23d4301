/**
 * A resource served from another resource's storage in another form: kube-apiserver's cohabitating resources
 * (events.k8s.io/v1 Events live with core/v1 Events). The view maps its own key prefix onto the stored one and
 * converts every value on the way in and out, so the generic store above it (get, list, watch, create, update,
 * patch, delete, continue tokens) works on its own form unchanged and every write lands in the one stored set.
 */

import {
  ConflictError,
  type KeyValue,
  type RangeOptions,
  type RangeResult,
  type Storage,
  type StorageEvent,
  type StorageWatch,
  type WatchListener,
} from '../storage/types.ts';

/** How a value reads in the view (`read`) and how the view's value is stored (`write`), as JSON text. */
export interface ValueConversion {
  read(stored: string): string;
  write(value: string): string;
}

export class ConvertedStorage implements Storage {
  readonly #base: Storage;
  /** The view's key prefix and the stored one it stands for. */
  readonly #viewPrefix: string;
  readonly #storedPrefix: string;
  readonly #convert: ValueConversion;

  constructor(base: Storage, viewPrefix: string, storedPrefix: string, convert: ValueConversion) {
    this.#base = base;
    this.#viewPrefix = viewPrefix;
    this.#storedPrefix = storedPrefix;
    this.#convert = convert;
  }

  get progressOnEveryWrite(): boolean | undefined {
    return this.#base.progressOnEveryWrite;
  }

  /** A key of the view as stored; keys outside the view's prefix are no keys of it. */
  #stored(key: string): string {
    if (!key.startsWith(this.#viewPrefix)) throw new Error(`key ${key} is outside ${this.#viewPrefix}`);
    return this.#storedPrefix + key.slice(this.#viewPrefix.length);
  }

  #view(key: string): string {
    return this.#viewPrefix + key.slice(this.#storedPrefix.length);
  }

  #readKv(kv: KeyValue): KeyValue {
    return { ...kv, key: this.#view(kv.key), value: this.#convert.read(kv.value) };
  }

  /** A conflict carries the stored value, which the caller reads in the view's form. */
  #mapError(err: unknown): unknown {
    return err instanceof ConflictError
      ? new ConflictError(this.#view(err.key), this.#readKv(err.current))
      : err;
  }

  currentRevision(): Promise<number> {
    return this.#base.currentRevision();
  }

  compactedRevision(): Promise<number> {
    return this.#base.compactedRevision();
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.#base.get(this.#stored(key));
    return kv && this.#readKv(kv);
  }

  #rangeOptions(options: RangeOptions | undefined): RangeOptions | undefined {
    return options?.startKey === undefined
      ? options
      : { ...options, startKey: this.#stored(options.startKey) };
  }

  async range(prefix: string, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.#base.range(this.#stored(prefix), this.#rangeOptions(options));
    return { ...result, kvs: result.kvs.map((kv) => this.#readKv(kv)) };
  }

  async rangeBytes(prefix: string, options?: RangeOptions): Promise<RangeResult<Uint8Array>> {
    const result = await this.#base.range(this.#stored(prefix), this.#rangeOptions(options));
    const encoder = new TextEncoder();
    return {
      ...result,
      kvs: result.kvs.map((kv) => {
        const read = this.#readKv(kv);
        return { ...read, value: encoder.encode(read.value) };
      }),
    };
  }

  create(key: string, value: string): Promise<number> {
    return this.#base.create(this.#stored(key), this.#convert.write(value));
  }

  async update(key: string, value: string, expectedRevision: number): Promise<number> {
    try {
      return await this.#base.update(this.#stored(key), this.#convert.write(value), expectedRevision);
    } catch (err) {
      throw this.#mapError(err);
    }
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; prev: KeyValue }> {
    try {
      const { revision, prev } = await this.#base.delete(this.#stored(key), expectedRevision);
      return { revision, prev: this.#readKv(prev) };
    } catch (err) {
      throw this.#mapError(err);
    }
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): StorageWatch {
    const read = (value: string | undefined) => (value === undefined ? undefined : this.#convert.read(value));
    return this.#base.watch(this.#stored(prefix), afterRevision, {
      event: (event: StorageEvent) =>
        listener.event({
          ...event,
          key: this.#view(event.key),
          value: this.#convert.read(event.value),
          prevValue: read(event.prevValue),
        }),
      error: (err) => listener.error(err),
      ...(listener.progress ? { progress: (revision: number) => listener.progress!(revision) } : {}),
    });
  }

  /** Compaction is the stored resource's storage's business, not a view's. */
  compact(): Promise<void> {
    return Promise.resolve();
  }

  /** The view closes nothing: the storage is the server's, closed with it. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
