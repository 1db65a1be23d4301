import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How large a request's line and headers may be: Go's http.DefaultMaxHeaderBytes (1 MiB), which
 * kube-apiserver's secure serving sets. Node's own default (16 KiB) would refuse requests kube-apiserver
 * serves, such as a long label selector in the query.
 */
export const MAX_HEADER_BYTES = 1 << 20;

/** How long a connection answered this way may linger while the client reads the answer. */
const LINGER_MS = 5_000;

/**
 * Answers a request Node's HTTP parser refuses (malformed request line or headers, headers past the size
 * limit) with Go's net/http answer for it, 400 Bad Request or 431 Request Header Fields Too Large, and closes
 * the connection. Why not Node's default: it writes its answer and destroys the socket at once, which on a
 * TLS connection discards the answer before it is encrypted and sent, so the client sees the connection
 * reset without a status.
 */
export function answerClientErrors(server: Server): void {
  // Node reports the error again for every later chunk of the connection (its parser is gone, the bytes still
  // come): the connection answered already stays open for the client to read the answer. Destroying it with
  // unread bytes would reset it, and the client might lose the answer (Go lingers the same way).
  const answered = new WeakSet<Socket>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (answered.has(socket)) return;
    // An answer already begun on this connection (a pipelined request) cannot be followed by another.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, text] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? ['431 Request Header Fields Too Large', '431 Request Header Fields Too Large']
        : ['400 Bad Request', '400 Bad Request'];
    answered.add(socket);
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${text}`,
    );
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
