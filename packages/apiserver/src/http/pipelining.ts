import type { IncomingMessage, ServerResponse } from 'node:http';
import { newTooManyRequests } from '@certkit/apimachinery';
import { handleRequestsInTurn } from '@certkit/apimachinery/http-pipelining';
import { sendError } from './respond.ts';

/**
 * The API server's requests, pipelined on one connection, run one at a time as Go's server runs them
 * (`handleRequestsInTurn`, ADR 0420); past the bound of requests waiting their turn on a connection, one more
 * is a 429 with `Retry-After: 1`, as the inflight limit words it, and is not served.
 */
export function handlePipelinedInTurn(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return handleRequestsInTurn(handle, (_req, res) =>
    sendError(res, newTooManyRequests('Too many requests, please try again later.', 1)),
  );
}
