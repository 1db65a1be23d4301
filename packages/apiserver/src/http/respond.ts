import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  newBadRequest,
  newInternalError,
  newRequestEntityTooLarge,
  StatusError,
} from '@certkit/apimachinery';

/** Writing responses and reading request bodies, with kube-apiserver's Status bodies for every failure. */

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, code, JSON.stringify(body), headers);
}

/** For bodies assembled from shared serialisations (watch cache lists). */
export function sendJsonText(
  res: ServerResponse,
  code: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(text);
}

export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return newInternalError(err instanceof Error ? err.message : String(err));
}

export function sendError(res: ServerResponse, err: unknown, log?: (err: unknown) => void): void {
  const status = toStatusError(err);
  if (status.code >= 500) log?.(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  const retryAfter = status.status.details?.retryAfterSeconds;
  if (retryAfter && retryAfter > 0) headers['Retry-After'] = String(retryAfter);
  sendJson(res, status.code, status.status, headers);
}

/** Reads the body up to the limit; larger bodies get 413 without being buffered. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw newRequestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw newRequestEntityTooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Parses a JSON body; malformed input is a 400 naming the parse error, as kube-apiserver's decoder does. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw newBadRequest('the request body is empty');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
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
