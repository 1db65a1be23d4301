import { isTooManyRequests, StatusError } from '@certkit/apimachinery';

/**
 * How the reflector classifies transport failures, after client-go: `utilnet.IsConnectionRefused` (retry
 * the watch after a backoff, no relist) and `utilnet.IsProbableEOF` (the stream merely ended; re-watch).
 */

const CONNECTION_REFUSED_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT']);

const PROBABLE_EOF_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'ERR_HTTP2_STREAM_ERROR',
  'ABORT_ERR',
]);

const PROBABLE_EOF_MESSAGES = [
  'socket hang up',
  'connection reset',
  'use of closed network connection',
  'other side closed',
  'premature close',
  'connection closed',
  'connection is dead',
  'aborted',
  'terminated',
  'inactivity',
  'timed out',
  'timeout',
];

/** The error codes on `err` and along its `cause` chain. */
function codes(err: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') out.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

function messages(err: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof Error) out.push(e.message.toLowerCase());
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

/** The server could not be reached at all (it is down or restarting). */
export function isConnectionRefused(err: unknown): boolean {
  if (err instanceof StatusError) return false;
  return codes(err).some((c) => CONNECTION_REFUSED_CODES.has(c));
}

/** A stream that broke rather than failed: the connection dropped, or went silent for too long. */
export function isProbableEOF(err: unknown): boolean {
  if (err instanceof StatusError) return false;
  if (codes(err).some((c) => PROBABLE_EOF_CODES.has(c))) return true;
  // The client's inactivity timeout: a half-open connection, which re-watching replaces.
  if (err instanceof Error && err.name === 'WatchInactivityError') return true;
  return messages(err).some((m) => PROBABLE_EOF_MESSAGES.some((p) => m.includes(p)));
}

/** Watch start errors the reflector retries with a backoff instead of relisting (isWatchErrorRetriable). */
export function isRetriableWatchStartError(err: unknown): boolean {
  return isTooManyRequests(err) || isConnectionRefused(err);
}

/** The server's Retry-After for a 429/5xx, in milliseconds, when it gave one. */
export function retryAfterMs(err: unknown): number {
  if (!(err instanceof StatusError)) return 0;
  const seconds = err.status.details?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : 0;
}

/** A 4xx other than 410 and 429: the request itself was refused (how a server says "no watch-list"). */
export function isClientRequestError(err: unknown): boolean {
  if (!(err instanceof StatusError)) return false;
  return err.code >= 400 && err.code < 500 && err.code !== 410 && err.code !== 429;
}

/**
 * 504 "Too large resource version": the server's cache has not caught up with the RV asked for
 * (client-go's isTooLargeResourceVersionError).
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof StatusError)) return false;
  if (err.status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return err.code === 504 && (err.status.message ?? '').includes('Too large resource version');
}
