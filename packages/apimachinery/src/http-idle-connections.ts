import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Bounds the connections a plain HTTP server holds open, by closing the oldest idle one when a connection past
 * `max` arrives. For the controller's unauthenticated listeners (the probes server's `/healthz`, `/readyz` and
 * `/metrics`; the ACME HTTP-01 listener), which have no authentication to tell real clients from others.
 *
 * With Node's defaults, a connection that sends nothing is closed only when its headers have taken 60 s, and
 * there is no bound on how many there are: 5,000 idle connections to the controller's metrics port (`certkit up --metrics-bind-address`) held
 * 5,000 file descriptors of the controller for a minute, and a client opening them faster than that reaches
 * the process's open-file limit, after which the controller can open no connection to the API server. A
 * plain `maxConnections` refuses the newcomer instead, which lets whoever holds the slots starve the kubelet's
 * probes or the ACME server's validation. Closing the oldest idle connection (no request in progress) keeps
 * the bound and lets a client that sends its request at once through, as `http/connections.ts` does for the
 * API server's unauthenticated connections. When every connection is busy, the newcomer is closed. How long
 * an idle connection lasts is the server's `headersTimeout`, which Node applies to a connection that has sent
 * nothing as well.
 */
export function closeOldestIdleConnections(server: Server, max: number): void {
  // Oldest first: a Map keeps insertion order. The value counts requests in progress on the connection.
  const open = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      let evicted = false;
      for (const [other, busy] of open) {
        if (busy === 0) {
          open.delete(other);
          other.destroy();
          evicted = true;
          break;
        }
      }
      if (!evicted) {
        socket.destroy();
        return;
      }
    }
    open.set(socket, 0);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    if (!open.has(socket)) return;
    open.set(socket, open.get(socket)! + 1);
    res.once('close', () => {
      const busy = open.get(socket);
      if (busy !== undefined) open.set(socket, busy - 1);
    });
  });
}
