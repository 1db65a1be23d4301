import type { ServerResponse } from 'node:http';
import { newBadRequest, parseGoDuration } from '@certkit/apimachinery';

/**
 * kube-apiserver's request deadline (its WithRequestDeadline and WithTimeoutForNonLongRunningRequests
 * filters): every request that is not long-running must finish within --request-timeout (1 min), or within
 * its `?timeout=` when that is shorter and positive, counted from its arrival. One that does not gets kube's
 * 504, or, when its answer had begun, its connection closed; what its handler writes afterwards goes nowhere.
 */

/** kube-apiserver's default --request-timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** kube's long-running requests (BasicLongRunningRequestCheck): no deadline, no in-flight slot. */
export const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
export const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export function isLongRunning({ verb, subresource }: { verb: string; subresource?: string }): boolean {
  return (
    LONG_RUNNING_VERBS.has(verb) || (subresource !== undefined && LONG_RUNNING_SUBRESOURCES.has(subresource))
  );
}

/**
 * A cheap first look, so that the path is parsed again only for what may be a watch: the only long-running
 * requests served here are watches (GET with `watch`, or under a legacy `/watch/` path); the subresources kube
 * counts as long-running (exec, log, …) are not served, and their 404 comes at once.
 */
export function mayBeLongRunning(
  method: string,
  target: { pathname: string; searchParams: URLSearchParams },
): boolean {
  return method === 'GET' && (target.searchParams.has('watch') || target.pathname.includes('/watch/'));
}

/**
 * The filter reads `?timeout=` on every request that is not long-running, before authentication: a value Go's
 * time.ParseDuration refuses is a 400, worded as the filter words it.
 */
export function refuseMalformedTimeout(query: URLSearchParams, isLongRunning: () => boolean): void {
  const value = query.get('timeout');
  if (!value || isLongRunning()) return;
  try {
    parseGoDuration(value);
  } catch (err) {
    throw newBadRequest(`invalid timeout specified in the request URL - ${(err as Error).message}`);
  }
}

/** How long the request may take: `?timeout=` when positive and below the server's maximum, else the maximum. */
export function requestTimeoutMs(query: URLSearchParams, maximumMs: number): number {
  const value = query.get('timeout');
  if (!value) return maximumMs;
  // Nanoseconds; a timeout of 1ns is still a deadline, so whole milliseconds are rounded up.
  const askedNs = parseGoDuration(value);
  const askedMs = Number((askedNs + 999_999n) / 1_000_000n);
  return askedNs > 0n && askedMs < maximumMs ? askedMs : maximumMs;
}

/**
 * kube's answer (apierrors.NewTimeoutError, encoded by the timeout filter itself): a Status without kind or
 * apiVersion, which Go's server sends as sniffed text. Clients read it as a 504 from the server in time.
 */
export const TIMEOUT_BODY = `${JSON.stringify({
  metadata: {},
  status: 'Failure',
  message: 'Timeout: request did not complete within the allotted timeout',
  reason: 'Timeout',
  details: {},
  code: 504,
})}\n`;

/**
 * Runs `handle` under a deadline `timeoutMs` after `startedAt` (performance.now() at the request's arrival).
 * Settles when the handler does or when the deadline passes, whichever is first; a handler that fails after
 * the deadline is reported to `lateFailure` (kube's "post-timeout activity"), never to the client.
 */
export function withRequestDeadline(
  res: ServerResponse,
  startedAt: number,
  timeoutMs: number,
  handle: () => Promise<void>,
  lateFailure: (err: unknown) => void,
): Promise<void> {
  const handling = handle();
  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        answerTimeout(res);
        resolve();
      },
      Math.max(0, startedAt + timeoutMs - performance.now()),
    );
    handling.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (timedOut) lateFailure(err);
        else reject(err);
      },
    );
  });
}

/**
 * The 504 when nothing of the answer was sent yet, else the connection closed (kube aborts the handler, which
 * ends an HTTP/1.1 connection). Then the response is sealed, as Go's timeout writer is: the handler still
 * runs, and what it writes or ends is dropped rather than written after the end (an error Node would throw).
 */
function answerTimeout(res: ServerResponse): void {
  if (res.headersSent || res.writableEnded) res.destroy();
  else {
    res.writeHead(504, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(TIMEOUT_BODY)),
      'Cache-Control': 'no-cache, private',
      // A body still arriving would be read at the client's pace on a kept-alive connection: closed instead,
      // as Go's server closes one with a body left unread.
      ...(res.req.complete ? {} : { Connection: 'close' }),
    });
    res.end(TIMEOUT_BODY);
  }
  seal(res);
}

function seal(res: ServerResponse): void {
  res.writeHead = () => res;
  res.setHeader = () => res;
  res.appendHeader = () => res;
  res.removeHeader = () => {};
  res.flushHeaders = () => {};
  res.write = (...args: unknown[]) => {
    const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  };
  res.end = (...args: unknown[]) => {
    const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    callback?.();
    return res;
  };
  // The 504 is on its way: a handler that fails late (sendError destroys a response whose headers went out)
  // must not cut the connection under it.
  res.destroy = () => res;
}
