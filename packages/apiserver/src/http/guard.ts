import type { IncomingMessage, ServerResponse } from 'node:http';
import { newInternalError } from '@certkit/apimachinery';
import { sendJson } from './respond.ts';

/**
 * The one place where a request's failure stops. Whatever a handler throws or rejects with, including from its
 * own error handling, logging and metrics, ends here as a `500 InternalError` Status (or, when the answer has
 * begun already, a closed connection) and one log line naming the request; never as an uncaught exception,
 * which would end the process and every other client's requests with it.
 */
export function guardRequests(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  log: (entry: Record<string, unknown>) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const failed = (err: unknown) => requestFailed(req, res, err, log);
    // Writes after the end, or to a connection the client dropped, are reported as 'error' events on the
    // response; without a listener Node throws them.
    res.on('error', failed);
    try {
      handle(req, res).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}

function requestFailed(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  log: (entry: Record<string, unknown>) => void,
): void {
  try {
    log({
      level: 'error',
      msg: 'request failed',
      method: req.method,
      path: req.url,
      err: String((err as Error)?.stack ?? err),
    });
  } catch {
    // A failing log sink must not take the answer with it.
  }
  try {
    if (res.writableEnded) {
      // Answered in full (the failure came after, e.g. in logging): the connection stays usable.
    } else if (res.headersSent || res.destroyed) {
      // Part of an answer has gone out: a Status now would be read as the rest of it.
      res.destroy();
    } else {
      const message = err instanceof Error ? err.message : String(err);
      sendJson(res, 500, newInternalError(message).status);
    }
  } catch {
    res.destroy();
  }
}
