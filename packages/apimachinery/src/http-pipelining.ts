import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests pipelined on one connection are handled one after the other, as Go's net/http server (and so
 * kube-apiserver) handles them: the next request's handler starts once the answer before it is done.
 *
 * Node's HTTP server calls the handler for every request it parses at once, pipelined or not, and queues the
 * answers in order; it stops reading only when answers already written pile up past a high-water mark. An
 * asynchronous handler has written nothing by then, so a client that sent thousands of requests in one
 * packet and read nothing had them all running together: each holding an inflight slot and buffering its
 * whole answer behind the first one (264 LISTs of 2 MB from one connection held 560 MB in the API server).
 * Handled in turn, only the first runs; those that wait hold their parsed request, not an answer.
 *
 * Go reads the next request only once it has answered, so the rest stay in the kernel's buffers. Node parses
 * whatever a read brought (tens of kilobytes, thousands of small requests) and pausing the socket does not
 * stop that, so what waits is bounded instead: past `maxWaiting` requests waiting on one connection, the next
 * is answered at once by `refuse` (a 429: the client may send it again). Such an answer is written in turn
 * too, and once those pile up Node stops reading the connection itself (its own back-pressure), as it did
 * for every synchronous answer before.
 */

/** Requests parsed and waiting for their turn on one connection before more are refused. */
export const DEFAULT_MAX_WAITING_REQUESTS = 64;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Connection {
  busy: boolean;
  waiting: Array<[IncomingMessage, ServerResponse]>;
}

export function handleRequestsInTurn(
  handle: Handler,
  refuse: Handler,
  maxWaiting = DEFAULT_MAX_WAITING_REQUESTS,
): Handler {
  const connections = new WeakMap<Socket, Connection>();

  const run = (socket: Socket, conn: Connection, req: IncomingMessage, res: ServerResponse) => {
    conn.busy = true;
    // 'close' comes after the answer is complete, and also when the connection goes before that.
    res.once('close', () => {
      conn.busy = false;
      const next = conn.waiting.shift();
      if (!next) return;
      if (socket.destroyed) {
        conn.waiting.length = 0;
        return;
      }
      run(socket, conn, next[0], next[1]);
    });
    handle(req, res);
  };

  return (req, res) => {
    const socket = req.socket;
    let conn = connections.get(socket);
    if (!conn) {
      conn = { busy: false, waiting: [] };
      connections.set(socket, conn);
    }
    if (!conn.busy) run(socket, conn, req, res);
    else if (conn.waiting.length < maxWaiting) conn.waiting.push([req, res]);
    else refuse(req, res);
  };
}
