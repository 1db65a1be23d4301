import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  newBadRequest,
  newInternalError,
  newRequestEntityTooLarge,
  newStatusError,
  newTimeout,
  StatusError,
} from '@certkit/apimachinery';
import { ValueTooLargeError } from '../storage/types.ts';
import { jsonDepthError } from '../decode/json-depth.ts';
import { InexactNumberError, parseJsonExact } from '../decode/exact-numbers.ts';

/** Writing responses and reading request bodies, with kube-apiserver's Status bodies for every failure. */

export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** How long a request body may take to arrive: kube-apiserver's default --request-timeout (1 min). */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, code, JSON.stringify(body), headers);
}

/**
 * For bodies already serialised (stored JSON, watch cache lists). `headers` are further headers, none of the
 * three set here.
 */
export function sendJsonText(
  res: ServerResponse,
  code: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  // Headers as a flat list: Node takes it as it is, where an object would be walked (and this one copied).
  const list = [
    'Content-Type',
    'application/json',
    'Content-Length',
    String(Buffer.byteLength(text)),
    'Cache-Control',
    'no-cache, private',
  ];
  for (const name in headers) list.push(name, headers[name]);
  res.writeHead(code, list);
  // With a string body Node writes the headers in the body's encoding (UTF-8), which would encode a Warning's
  // UTF-8 bytes (warning-header.ts) a second time; with a Buffer body they go out as they are.
  res.end(res.hasHeader('warning') ? Buffer.from(text) : text);
}

export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  // kube-apiserver answers a 500 here (kubernetes#112152); the write will never fit, so the client's error.
  if (err instanceof ValueTooLargeError) return newStatusError(413, 'RequestEntityTooLarge', err.message);
  return newInternalError(err instanceof Error ? err.message : String(err));
}

export function sendError(res: ServerResponse, err: unknown, log?: (err: unknown) => void): void {
  const status = toStatusError(err);
  // 504 Timeout is an answer, not a failure: a read at a resourceVersion not reached within the wait, as
  // kube-apiserver gives it (and clients retry); every other 5xx is the server's own failure, logged.
  if (status.code >= 500 && status.code !== 504) log?.(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  const retryAfter = status.status.details?.retryAfterSeconds;
  if (retryAfter && retryAfter > 0) headers['Retry-After'] = String(retryAfter);
  sendJson(res, status.code, status.status, headers);
}

/**
 * Reads the body up to the limit; larger bodies get 413 without being buffered. With listeners rather than
 * `for await`, whose async iterator costs more than the read on every request. A request that fails or
 * closes before its end fails the read, as it did with the iterator.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
  limit = MAX_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const expectsContinue = /\b100-continue\b/i.test(req.headers.expect ?? '');
  if (declared > limit) {
    // A client waiting for 100 Continue has sent nothing yet: it gets the 413 and no invitation to send.
    // Any other is answered while it sends, and the connection closes after the answer (read from for a
    // few seconds more, lingerOnClose), as Go's server closes one with more than 256 KiB left unread:
    // kept alive, the server would read all the declared gigabytes at the client's pace.
    if (!expectsContinue) req.resume();
    res.setHeader('Connection', 'close');
    return Promise.reject(newRequestEntityTooLarge(limit));
  }
  // The invitation comes only now, past authentication, authorisation and the size check (Node would
  // send it before any of them, and an unauthenticated client would upload its body to get a 401).
  if (expectsContinue && !res.headersSent) res.writeContinue();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // A client that trickles its body would otherwise hold the request's inflight slot (and the connection)
    // for as long as it likes: 504 as kube-apiserver's request timeout answers, and the connection closes,
    // since what is left of the body would arrive at the client's pace.
    const timer = setTimeout(() => {
      done();
      res.setHeader('Connection', 'close');
      reject(
        newTimeout(
          'request did not complete within requested timeout - the request body was not received in time',
          0,
        ),
      );
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // The rest is read and dropped while the 413 goes out, and the connection then closes, as above
        // (an unending chunked body would otherwise be read for ever).
        done();
        req.resume();
        res.setHeader('Connection', 'close');
        reject(newRequestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    };
    // The client went away before sending the whole body: its failure, not the server's (a 4xx, not logged
    // as an internal error; nobody is left to read the answer).
    const onError = (err: Error) => {
      done();
      reject(newBadRequest(`the request body was not received in full: ${err.message}`));
    };
    const onClose = () => {
      done();
      reject(newBadRequest('the request body was not received in full: the connection closed'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Parses a JSON body; malformed input is a 400 naming the parse error, as kube-apiserver's decoder does. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw newBadRequest('the request body is empty');
  // JSON.parse itself takes any depth; what the server does with the value afterwards does not.
  const tooDeep = jsonDepthError(body);
  if (tooDeep) throw newBadRequest(`couldn't get version/kind; json parse error: ${tooDeep}`);
  try {
    return parseJsonExact(body.toString('utf8'));
  } catch (err) {
    if (err instanceof InexactNumberError) throw err.status;
    throw newBadRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

export function parseJsonObject(body: Buffer): Record<string, unknown> {
  const value = parseJsonBody(body);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw newBadRequest('the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
