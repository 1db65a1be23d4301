import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * The front door of the HTTPS server: it accepts TCP connections itself and hands them to the TLS server, so
 * that what comes before a client is known can be bounded.
 *
 * - Plain HTTP on the HTTPS port is answered `400 Client sent an HTTP request to an HTTPS server.`, with the
 *   status line and text of Go's net/http (the bytes a TLS server would otherwise fail on silently).
 * - A connection must complete its TLS handshake within `handshakeTimeoutMs` of being accepted (kube-apiserver:
 *   10 s; an absolute deadline as Go's, where Node's own handshake timeout restarts on every byte), and then
 *   send its first request within `firstRequestTimeoutMs` (kube-apiserver's ReadHeaderTimeout, 32 s): one
 *   with valid credentials, or one for a public path such as /healthz (a connection that only collects 401s
 *   is closed then as well).
 * - Connections that have not authenticated yet (no request with valid credentials on them) are bounded: past
 *   `maxUnauthenticated`, accepting one closes the oldest idle one. A client that completes its handshake
 *   and sends a request at once needs a slot for milliseconds; idle sockets held open by the thousand need
 *   them for seconds, so they are the ones closed, and file descriptors stay for the server's real clients.
 */
export interface ConnectionLimits {
  handshakeTimeoutMs: number;
  firstRequestTimeoutMs: number;
  maxUnauthenticated: number;
}

export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
export const DEFAULT_FIRST_REQUEST_TIMEOUT_MS = 32_000;
/**
 * How often Node's HTTP server looks for requests whose headers have taken longer than `firstRequestTimeoutMs`
 * (set as its headersTimeout, so that every request has Go's ReadHeaderTimeout, not only the first); Node's
 * default of 30 s let trickled headers hold a connection for twice the limit.
 */
export const HEADER_CHECK_INTERVAL_MS = 1000;

/** What Go's net/http writes back when the first bytes of a TLS connection look like HTTP. */
const PLAIN_HTTP_ANSWER = 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';
/** The five-byte beginnings Go takes for HTTP (in place of a TLS record header). */
const HTTP_BEGINNINGS = new Set(['GET /', 'HEAD ', 'POST ', 'PUT /', 'OPTIO']);
const TLS_HANDSHAKE_RECORD = 0x16;

interface Unauthenticated {
  socket: Socket;
  /** Requests in progress: such a connection is not idle and is not closed to make room. */
  busy: number;
  deadline: NodeJS.Timeout;
}

export class ConnectionGuard {
  /** The server that listens; the TLS server gets its connections from it. */
  readonly listener: NetServer;
  private readonly tlsServer: Server;
  private readonly limits: ConnectionLimits;
  /** Oldest first (a Map keeps insertion order): raw sockets until their handshake, TLS sockets after it. */
  private readonly unauthenticated = new Map<Socket, Unauthenticated>();
  /**
   * Raw sockets in their handshake by remote address and port, to find when the TLS socket over one is
   * secure (the TLS server hands out only the TLS socket; both share the connection's endpoints).
   */
  private readonly handshaking = new Map<string, Socket>();

  constructor(tlsServer: Server, limits: ConnectionLimits) {
    this.tlsServer = tlsServer;
    this.limits = limits;
    // Paused: the first bytes are read here, before the TLS server sees them.
    this.listener = createNetServer({ pauseOnConnect: true }, (socket) => this.accepted(socket));
    tlsServer.on('secureConnection', (socket: TLSSocket) => this.secured(socket));
  }

  /** The connection carried a request with valid credentials: it no longer counts against the bound. */
  authenticated(socket: Socket): void {
    this.untrack(socket);
  }

  /**
   * A request without credentials (to a public path) is being answered on the connection: it is not idle
   * until the answer is done, and Node's header and keep-alive timeouts apply to it from here on.
   */
  servingAnonymous(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.unauthenticated.get(req.socket);
    if (!entry) return;
    clearTimeout(entry.deadline);
    entry.busy++;
    res.once('close', () => entry.busy--);
  }

  /** How many connections have not authenticated (for tests and metrics). */
  get unauthenticatedCount(): number {
    return this.unauthenticated.size;
  }

  /** Closes the connections not yet handed to the HTTP server (it closes its own). */
  closeAll(): void {
    for (const { socket } of this.unauthenticated.values()) socket.destroy();
  }

  private accepted(raw: Socket): void {
    // Before the TLS socket takes over, a reset connection is an 'error' here; unhandled, it would throw.
    raw.on('error', () => raw.destroy());
    const endpoint = `${raw.remoteAddress}|${raw.remotePort}`;
    this.handshaking.set(endpoint, raw);
    this.track(raw, this.limits.handshakeTimeoutMs);
    raw.once('close', () => {
      if (this.handshaking.get(endpoint) === raw) this.handshaking.delete(endpoint);
    });
    let received = Buffer.alloc(0);
    const onReadable = () => {
      for (let chunk: Buffer | null; (chunk = raw.read()) !== null;) {
        received = Buffer.concat([received, chunk]);
      }
      // A TLS record announces itself in its first byte; Go decides on a record header's five bytes.
      if (received.length === 0 || (received[0] !== TLS_HANDSHAKE_RECORD && received.length < 5)) return;
      raw.off('readable', onReadable);
      if (HTTP_BEGINNINGS.has(received.subarray(0, 5).toString('latin1'))) {
        raw.end(PLAIN_HTTP_ANSWER);
        return;
      }
      // Anything else goes to TLS, which fails a handshake that is not one, as Go's does.
      raw.unshift(received);
      this.tlsServer.emit('connection', raw);
    };
    raw.on('readable', onReadable);
  }

  private secured(socket: TLSSocket): void {
    const endpoint = `${socket.remoteAddress}|${socket.remotePort}`;
    const raw = this.handshaking.get(endpoint);
    if (raw) {
      this.handshaking.delete(endpoint);
      this.untrack(raw);
    }
    this.track(socket, this.limits.firstRequestTimeoutMs);
  }

  private track(socket: Socket, timeoutMs: number): void {
    const deadline = setTimeout(() => socket.destroy(), timeoutMs);
    // Open connections must not keep a stopping process alive.
    deadline.unref();
    this.unauthenticated.set(socket, { socket, busy: 0, deadline });
    socket.once('close', () => {
      clearTimeout(deadline);
      if (this.unauthenticated.get(socket)?.deadline === deadline) this.unauthenticated.delete(socket);
    });
    if (this.unauthenticated.size > this.limits.maxUnauthenticated) this.closeOldestIdle();
  }

  private untrack(socket: Socket): void {
    const entry = this.unauthenticated.get(socket);
    if (!entry) return;
    clearTimeout(entry.deadline);
    this.unauthenticated.delete(socket);
  }

  private closeOldestIdle(): void {
    for (const [socket, entry] of this.unauthenticated) {
      if (entry.busy > 0) continue;
      clearTimeout(entry.deadline);
      this.unauthenticated.delete(socket);
      socket.destroy();
      return;
    }
  }
}

/**
 * The default bound on unauthenticated connections: 1024, or a quarter of the process's open-file limit when
 * that is lower, so that they can never take the descriptors the server needs for its storage and its real
 * clients. The limit is read from /proc (Node has no getrlimit); elsewhere 1024 stands.
 */
export function defaultMaxUnauthenticatedConnections(): number {
  const ceiling = 1024;
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
    return soft ? Math.max(16, Math.min(ceiling, Math.floor(Number(soft) / 4))) : ceiling;
  } catch {
    return ceiling;
  }
}
