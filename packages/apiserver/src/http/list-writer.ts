import type { ServerResponse } from 'node:http';
import type { ListEncoding } from './render.ts';
import { sendJsonText } from './respond.ts';

/**
 * Writes a JSON body made of many pieces (a list's items) with back-pressure: pieces are gathered into
 * chunks of about CHUNK_CHARS, and once a chunk is written to a connection that is not keeping up, the next
 * waits for it to drain. What a list costs the server while it is written is then one chunk and the
 * connection's buffers, not the whole encoded list, however many lists are written at once and however slow
 * their readers are. The bytes are the same as the whole body written at once.
 *
 * A body that fits in one chunk is sent as before, with a Content-Length; a larger one is sent chunked
 * (Transfer-Encoding: chunked), as kube-apiserver sends large lists.
 */

const CHUNK_CHARS = 64 * 1024;

/**
 * How long a list may wait for its connection to take more before the connection is closed, by default: a client that
 * stops reading must not hold the list's inflight slot (and the objects the list still refers to) forever.
 * kube-apiserver closes a connection whose non-long-running request outlives --request-timeout (1 min).
 */
export const DEFAULT_STALLED_LIST_TIMEOUT_MS = 60_000;

export class ListBodyWriter {
  private readonly res: ServerResponse;
  private readonly code: number;
  private readonly stallTimeoutMs: number;
  private pieces: string[] = [];
  private size = 0;
  private streaming = false;
  private closed = false;

  constructor(res: ServerResponse, stallTimeoutMs = DEFAULT_STALLED_LIST_TIMEOUT_MS, code = 200) {
    this.res = res;
    this.code = code;
    this.stallTimeoutMs = stallTimeoutMs;
    res.once('close', () => {
      this.closed = true;
    });
  }

  /**
   * Adds the next piece. Returns a promise when the caller must wait before adding more (the connection
   * is full): it resolves to true once the connection drained, to false when the connection is gone (the
   * client left, or stalled and was cut off), and then the caller stops.
   */
  write(piece: string): Promise<boolean> | undefined {
    this.pieces.push(piece);
    this.size += piece.length;
    if (this.size < CHUNK_CHARS) return undefined;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(this.code, [
        'Content-Type',
        'application/json',
        'Cache-Control',
        'no-cache, private',
      ]);
    }
    const chunk = this.pieces.join('');
    this.pieces = [];
    this.size = 0;
    if (this.closed) return Promise.resolve(false);
    return this.res.write(chunk) ? undefined : this.drained();
  }

  /** Writes what is left and ends the response. */
  end(): void {
    const rest = this.pieces.join('');
    this.pieces = [];
    if (this.closed) return;
    if (this.streaming) this.res.end(rest);
    else sendJsonText(this.res, this.code, rest);
  }

  private drained(): Promise<boolean> {
    const res = this.res;
    return new Promise<boolean>((resolve) => {
      const done = (open: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(open);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        done(false);
        res.destroy();
      }, this.stallTimeoutMs);
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  }
}

/**
 * Writes a list, its items taken a page at a time from `pages` (from storage as they are read, or one page
 * of watch cache entries), waiting for the connection whenever it is full. Stops when the client is gone.
 */
export async function writeList<T>(
  writer: ListBodyWriter,
  encoding: ListEncoding<T>,
  pages: Iterable<readonly T[]> | AsyncIterable<readonly T[]>,
): Promise<void> {
  let separator = '';
  let wait = writer.write(encoding.head);
  if (wait && !(await wait)) return;
  for await (const page of pages) {
    for (const entry of page) {
      writer.write(separator);
      separator = ',';
      wait = writer.write(encoding.item(entry));
      if (wait && !(await wait)) return;
    }
  }
  wait = writer.write(encoding.tail);
  if (wait && !(await wait)) return;
  writer.end();
}
