import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends (Go: 500 ms; more for a loaded host). */
const LINGER_MS = 5_000;

/**
 * Closes a connection after its last answer as Go's http server does (closeWriteAndWait): the answer is
 * finished and the write side shut, and what the client is still sending (a body the handler never read,
 * such as 3 MB sent to a path that answers without reading it) is read and dropped until the client closes,
 * for a few seconds at most. Node's own close destroys the socket at once: with request bytes unread the
 * kernel resets the connection, and a client still sending loses the answer it has not read yet.
 *
 * Node closes a connection after its last answer with `socket.destroySoon()` (a `Connection: close`
 * request); this replaces that method on each of the server's sockets.
 */
export function lingerOnClose(server: Server): void {
  const wrap = (socket: Socket & { destroySoon?: () => void }) => {
    socket.destroySoon = function lingeringClose(this: Socket) {
      if (this.destroyed) return;
      if (this.writable) this.end();
      // Closed when the client closes its side, or when the linger runs out.
      if (this.readableEnded) {
        this.destroy();
        return;
      }
      this.once('end', () => this.destroy());
      setTimeout(() => this.destroy(), LINGER_MS).unref();
      this.resume();
    };
  };
  server.on('connection', wrap);
  server.on('secureConnection', wrap);
}
