import type { KubeObject } from '@certkit/apimachinery';
import type { WatchEvent } from '../types.ts';

/**
 * One open watch on the in-memory client: an unbounded queue of events read through an async iterator, as a
 * watch stream is read from the real client. It ends when the caller's signal aborts or the tracker closes it,
 * and breaks (the iterator throws) when the tracker fails it, as a stream cut by the network.
 */
export class WatchQueue<T extends KubeObject = KubeObject> implements AsyncIterable<WatchEvent<T>> {
  readonly #queue: (WatchEvent<T> | 'end' | { error: Error })[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  /** Which stored objects this watch is for (namespace and selectors). */
  readonly matches: (obj: KubeObject) => boolean;
  /** A stored object as this watch's reader gets it: a copy, in full or as PartialObjectMetadata. */
  readonly render: (obj: KubeObject) => T;
  /** The BOOKMARK object at a revision, when the watcher asked for bookmarks (allowWatchBookmarks). */
  readonly bookmark: ((revision: number) => T) | undefined;

  constructor(
    matches: (obj: KubeObject) => boolean,
    render: (obj: KubeObject) => T,
    signal?: AbortSignal,
    bookmark?: (revision: number) => T,
  ) {
    this.matches = matches;
    this.render = render;
    this.bookmark = bookmark;
    signal?.addEventListener('abort', () => this.end(), { once: true });
  }

  get closed(): boolean {
    return this.#closed;
  }

  push(event: WatchEvent<T>): void {
    if (this.#closed) return;
    this.#queue.push(event);
    this.#wake?.();
  }

  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.push('end');
    this.#wake?.();
  }

  /** Breaks the stream: the reader's next read throws `error` (after the events already queued). */
  fail(error: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.push({ error });
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    try {
      for (;;) {
        while (this.#queue.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        const item = this.#queue.shift()!;
        if (item === 'end') return;
        if ('error' in item) throw item.error;
        yield item;
      }
    } finally {
      this.#closed = true;
    }
  }
}
