import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListOptions,
  type StatusError,
  type StoredObject,
  toPartialObjectMetadata,
  type WatchEventType,
} from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { WatchSink } from '../registry/generic/types.ts';
import { inVersion, type RenderOptions, table } from './render.ts';

/**
 * Serves a watch as kube-apiserver does: a 200 response of newline-delimited WatchEvent JSON, bookmarks about
 * every minute (and 2 s before the deadline) when asked, the end-of-initial-events bookmark for
 * sendInitialEvents, ERROR events for failures after the stream started, and a clean end at timeoutSeconds.
 * Events come from the watch cache as shared pre-serialised frames, or from storage as objects.
 */

const BOOKMARK_INTERVAL_MS = 60_000;
const BOOKMARK_BEFORE_DEADLINE_MS = 2_000;
/** Unset timeoutSeconds: kube-apiserver picks minRequestTimeout × (1 + rand), 30 to 60 minutes. */
const MIN_REQUEST_TIMEOUT_S = 1800;
/** A watcher that stops reading is cut off once this much is queued, so it cannot grow the server's memory. */
export const MAX_WATCH_BUFFER_BYTES = 8 * 1024 * 1024;
/** Initial events wait for the connection to drain once this much is unsent (well below the bound above). */
const INITIAL_EVENTS_BACKLOG_BYTES = 1024 * 1024;
/** The longest delay setTimeout takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Starts the events flowing into the sink; returns the function that stops them. */
export type WatchStarter = (sink: WatchSink) => Promise<() => void>;

export interface WatchCounters {
  opened(): void;
  closed(): void;
}

export async function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  def: ResourceDefinition,
  options: ListOptions,
  render: RenderOptions,
  start: WatchStarter,
  counters?: WatchCounters,
): Promise<void> {
  let lastResourceVersion = options.resourceVersion || '0';
  let headSent = false;
  let closed = false;
  let corked = false;
  let stop: () => void = () => {};
  let tableColumnsSent = false;

  const release = () => {
    if (closed) return;
    closed = true;
    stop();
    clearInterval(bookmarkTimer);
    clearTimeout(bookmarkBeforeDeadline);
    clearTimeout(deadline);
    if (headSent) counters?.closed();
  };

  const finish = () => {
    release();
    if (!res.writableEnded) res.end();
  };

  const ensureHead = () => {
    if (headSent) return;
    headSent = true;
    counters?.opened();
    // Without a Content-Length Node frames the stream itself: chunked for HTTP/1.1, and for an HTTP/1.0
    // client (nginx's proxy_pass by default), which knows no chunks, the body until the connection closes,
    // as Go's server does. Naming the encoding here sent chunks to HTTP/1.0 clients too.
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
    });
  };

  /** Events of one tick go out together: one chunk and one TLS record instead of one per event. */
  const writeRaw = (data: string | Buffer) => {
    if (closed) return;
    ensureHead();
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        res.uncork();
      });
    }
    res.write(data);
    if (res.writableLength > MAX_WATCH_BUFFER_BYTES) {
      // Ending politely would queue behind the backlog; drop the connection and its buffers now.
      release();
      res.destroy();
    }
  };

  const write = (type: WatchEventType, object: unknown) => writeRaw(`${JSON.stringify({ type, object })}\n`);

  const render1 = (obj: StoredObject): unknown => {
    if (render.rendering === 'metadata') return toPartialObjectMetadata(obj);
    if (render.rendering === 'table') {
      const t = table(
        def,
        [obj],
        render,
        { resourceVersion: obj.metadata.resourceVersion },
        !tableColumnsSent,
      );
      tableColumnsSent = true;
      return t;
    }
    return inVersion(obj, render.apiVersion);
  };

  const emit = (type: WatchEventType, obj: StoredObject) => {
    lastResourceVersion = obj.metadata.resourceVersion ?? lastResourceVersion;
    write(type, render1(obj));
  };

  const bookmark = (annotations?: Record<string, string>) => {
    const metadata: Record<string, unknown> = { resourceVersion: lastResourceVersion };
    if (annotations) metadata.annotations = annotations;
    const object =
      render.rendering === 'metadata'
        ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata }
        : { kind: def.kind, apiVersion: render.apiVersion, metadata };
    write('BOOKMARK', object);
  };

  // timeoutSeconds=0 means the default, as unset does; a negative one ends the watch at once (kube's timer).
  // Node's timers take at most 2^31-1 ms (24.8 days) and fire at once beyond it: a month-long watch ended as
  // it began, and its client came straight back. Clamped, as if no timer could wait longer. A negative
  // delay is clamped to 0 too: Node would also fire it at once, but print a TimeoutNegativeWarning per request.
  const timeoutMs = Math.max(
    0,
    Math.min((options.timeoutSeconds || MIN_REQUEST_TIMEOUT_S * (1 + Math.random())) * 1000, MAX_TIMER_MS),
  );
  const deadline = setTimeout(finish, timeoutMs);
  const bookmarkTimer = setInterval(() => {
    if (options.allowWatchBookmarks) bookmark();
  }, BOOKMARK_INTERVAL_MS);
  const bookmarkBeforeDeadline = setTimeout(
    () => {
      if (options.allowWatchBookmarks) bookmark();
    },
    Math.max(0, timeoutMs - BOOKMARK_BEFORE_DEADLINE_MS),
  );
  req.on('close', finish);
  res.on('close', finish);

  try {
    stop = await start({
      added: (obj) => emit('ADDED', obj),
      modified: (obj) => emit('MODIFIED', obj),
      deleted: (obj) => emit('DELETED', obj),
      frame: (bytes, resourceVersion) => {
        lastResourceVersion = resourceVersion;
        writeRaw(bytes);
      },
      initialEventsEnd: (rv) => {
        lastResourceVersion = rv;
        if (options.allowWatchBookmarks) bookmark({ [INITIAL_EVENTS_END_ANNOTATION]: 'true' });
      },
      error: (status: StatusError) => {
        write('ERROR', status.status);
        finish();
      },
      end: finish,
      backlog: () => {
        if (closed || res.writableLength <= INITIAL_EVENTS_BACKLOG_BYTES) return undefined;
        return new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      },
    });
  } catch (err) {
    // Before the stream started the caller answers with a Status; after, the stream just ends.
    if (!headSent) {
      release();
      throw err;
    }
    finish();
    return;
  }
  if (closed) {
    stop();
    return;
  }
  ensureHead();
  res.flushHeaders();
}
