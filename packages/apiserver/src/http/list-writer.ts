import type { ServerResponse } from 'node:http';
import type { ListEncoding } from './render.ts';

/**
 * Writes a JSON body made of many pieces (a list's items) with back-pressure: pieces are gathered into
 * chunks of CHUNK_BYTES, and once a chunk is written to a connection that is not keeping up, the next
 * waits for it to drain. What a list costs the server while it is written is then one chunk and the
 * connection's buffers, not the whole encoded list, however many lists are written at once and however slow
 * their readers are. The bytes are the same as the whole body written at once.
 *
 * A body that fits in one chunk is sent as before, with a Content-Length; a larger one is sent chunked
 * (Transfer-Encoding: chunked), as kube-apiserver sends large lists.
 */

const CHUNK_BYTES = 64 * 1024;

/**
 * How long a list may wait for its connection to take more before the connection is closed, by default: a
 * client that stops reading must not hold the list's inflight slot (and the objects the list still refers
 * to) forever. kube-apiserver closes a connection whose non-long-running request outlives --request-timeout
 * (1 min).
 */
export const DEFAULT_STALLED_LIST_TIMEOUT_MS = 60_000;

/** Pieces at least this long (chars or bytes) are written as they are, not copied into a chunk first. */
const LARGE_PIECE = 16 * 1024;
/** UTF-8 takes at most 3 bytes for a UTF-16 code unit. */
const MAX_UTF8_PER_CHAR = 3;

export class ListBodyWriter {
  private readonly res: ServerResponse;
  private readonly code: number;
  private readonly stallTimeoutMs: number;
  /** The chunk being filled: small pieces are copied in, and it goes out when full. */
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private filled = 0;
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
   * Adds the next piece, text or UTF-8 bytes. False when the caller must wait for drain() before adding
   * more (the connection is full or gone).
   */
  write(piece: string | Uint8Array): boolean {
    if (piece.length >= LARGE_PIECE) {
      // A large piece (an object of a list of large objects) goes out as it is, a slice of the object's
      // text or a view of its stored bytes: copied into a chunk, it would cost a copy per object and list.
      this.flush();
      return this.send(piece);
    }
    const room = CHUNK_BYTES - this.filled;
    const fits = typeof piece === 'string' ? piece.length * MAX_UTF8_PER_CHAR <= room : piece.length <= room;
    // A piece that may not fit sends the chunk first: a fresh one holds any piece under LARGE_PIECE.
    const open = fits || this.flush();
    if (typeof piece === 'string') this.filled += this.chunk.write(piece, this.filled, 'utf8');
    else {
      this.chunk.set(piece, this.filled);
      this.filled += piece.length;
    }
    return open;
  }

  /** Writes what is left and ends the response. */
  end(): void {
    if (this.closed) return;
    const rest = this.chunk.subarray(0, this.filled);
    if (this.streaming) {
      this.res.end(rest);
      return;
    }
    // The whole body fits in one chunk: sent as a small list always was, with its length.
    this.res.writeHead(this.code, [
      'Content-Type',
      'application/json',
      'Content-Length',
      String(rest.length),
      'Cache-Control',
      'no-cache, private',
    ]);
    this.res.end(rest);
  }

  /**
   * Resolves to true once the connection takes more, to false when it is gone (the client left, or read
   * nothing for the stall timeout and was cut off): then the caller stops.
   */
  drain(): Promise<boolean> {
    const res = this.res;
    if (this.closed) return Promise.resolve(false);
    if (!res.writableNeedDrain) return Promise.resolve(true);
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

  /** Sends the chunk, and starts a new one (the one sent is the connection's until it is written). */
  private flush(): boolean {
    if (this.filled === 0) return true;
    const full = this.chunk.subarray(0, this.filled);
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.filled = 0;
    return this.send(full);
  }

  private send(piece: string | Uint8Array): boolean {
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(this.code, [
        'Content-Type',
        'application/json',
        'Cache-Control',
        'no-cache, private',
      ]);
    }
    if (this.closed) return false;
    return this.res.write(piece);
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
  if (!writer.write(encoding.head) && !(await writer.drain())) return;
  for await (const page of pages) {
    for (const entry of page) {
      let open = writer.write(separator);
      separator = ',';
      const item = encoding.item(entry);
      if (typeof item === 'string') open = writer.write(item) && open;
      else for (const part of item) open = writer.write(part) && open;
      if (!open && !(await writer.drain())) return;
    }
  }
  if (!writer.write(encoding.tail) && !(await writer.drain())) return;
  writer.end();
}
