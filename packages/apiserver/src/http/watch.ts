import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListOptions,
  type StatusError,
  type StoredObject,
  toPartialObjectMetadata,
  type WatchEventType,
} from '@certkit/apimachinery';
import type { ObjectStore } from '../registry/store.ts';
import { inVersion, type RenderOptions, table } from './render.ts';

/**
 * Serves a watch as kube-apiserver does: a 200 response of newline-delimited WatchEvent JSON, bookmarks about
 * every minute (and 2 s before the deadline) when asked, the end-of-initial-events bookmark for
 * sendInitialEvents, ERROR events for failures after the stream started, and a clean end at timeoutSeconds.
 */

const BOOKMARK_INTERVAL_MS = 60_000;
const BOOKMARK_BEFORE_DEADLINE_MS = 2_000;
/** Unset timeoutSeconds: kube-apiserver picks minRequestTimeout × (1 + rand), 30 to 60 minutes. */
const MIN_REQUEST_TIMEOUT_S = 1800;
/** A watcher that stops reading is cut off once this much is queued, so it cannot grow the server's memory. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export async function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  store: ObjectStore,
  namespace: string | undefined,
  options: ListOptions,
  render: RenderOptions,
): Promise<void> {
  const def = store.def;
  let lastResourceVersion = options.resourceVersion || '0';
  let headSent = false;
  let closed = false;
  let stop: () => void = () => {};
  let tableColumnsSent = false;

  const finish = () => {
    if (closed) return;
    closed = true;
    stop();
    clearInterval(bookmarkTimer);
    clearTimeout(bookmarkBeforeDeadline);
    clearTimeout(deadline);
    if (!res.writableEnded) res.end();
  };

  const ensureHead = () => {
    if (headSent) return;
    headSent = true;
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
  };

  const write = (type: WatchEventType, object: unknown) => {
    if (closed) return;
    ensureHead();
    res.write(`${JSON.stringify({ type, object })}\n`);
    if (res.writableLength > MAX_BUFFERED_BYTES) finish();
  };

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

  const timeoutMs = (options.timeoutSeconds ?? MIN_REQUEST_TIMEOUT_S * (1 + Math.random())) * 1000;
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
    stop = await store.watch(namespace, options, {
      added: (obj) => emit('ADDED', obj),
      modified: (obj) => emit('MODIFIED', obj),
      deleted: (obj) => emit('DELETED', obj),
      initialEventsEnd: (rv) => {
        lastResourceVersion = rv;
        if (options.allowWatchBookmarks) bookmark({ [INITIAL_EVENTS_END_ANNOTATION]: 'true' });
      },
      error: (status: StatusError) => {
        write('ERROR', status.status);
        finish();
      },
    });
  } catch (err) {
    finish();
    if (!headSent) throw err;
    return;
  }
  if (closed) {
    stop();
    return;
  }
  ensureHead();
  res.flushHeaders();
}
