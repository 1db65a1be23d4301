import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';
import { type HttpResponse, ResponseParser } from './http1-parser.ts';
import { openTunnel } from './proxy.ts';

/**
 * Keep-alive HTTP/1.1 connections to one server for unary requests: a request goes out as one socket write,
 * its response is read whole by ResponseParser, and the connection goes back to the pool. This skips what
 * node:http spends per request on ClientRequest, IncomingMessage and their streams, the agent's events and
 * per-request listeners, which was most of the client's CPU for small JSON requests. Like a keep-alive
 * http.Agent with default limits: any number of connections, most recently used first; idle ones do not
 * keep the process alive and are dropped a second before the server's Keep-Alive timeout would close them.
 */

export interface Endpoint {
  host: string;
  port: number;
  /** Absent for plain HTTP. */
  tls?: {
    secureContext: SecureContext;
    rejectUnauthorized: boolean;
    /** SNI and the name the certificate must carry; absent for an IP address (verified against host). */
    servername?: string;
  };
  /** An HTTP proxy to reach the server through, by a CONNECT tunnel per connection. */
  proxy?: URL;
}

/** Errors that mean a reused connection had been closed by the server while idle. */
export const STALE_CONNECTION_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * As http.Agent: at most this many idle connections (maxFreeSockets), TCP keep-alive probes after 30 s idle
 * (the keepAliveMsecs the transport gives its agent), and idle connections given up this long before the
 * server's announced Keep-Alive timeout.
 */
const MAX_IDLE = 256;
const TCP_KEEPALIVE_MS = 30_000;
const KEEP_ALIVE_MARGIN_MS = 1000;

/**
 * client-go's transport gives up on a connection that takes longer than this to connect (its dialer's 30 s)
 * or then to complete the TLS handshake (TLSHandshakeTimeout, 10 s): without it a server that accepts the
 * connection and never answers (a hung process, a wrong port) would hold a request, and a CLI command, for
 * ever.
 */
export const CONNECT_TIMEOUT_MS = 30_000;
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Destroys `socket` with an ETIMEDOUT error if it is not connected, and for TLS secured, in time. */
function connectDeadline(socket: Socket, { host, port, tls }: Endpoint, connected: boolean): void {
  // Named as Node names the server of a socket error (address, port), so that callers can say which.
  const fail = (what: string) =>
    socket.destroy(Object.assign(new Error(`${what} timeout`), { code: 'ETIMEDOUT', address: host, port }));
  let timer: NodeJS.Timeout | undefined;
  const handshake = () => {
    clearTimeout(timer);
    if (!tls) return;
    timer = setTimeout(() => fail('TLS handshake'), TLS_HANDSHAKE_TIMEOUT_MS).unref();
    socket.once('secureConnect', () => clearTimeout(timer));
  };
  socket.once('close', () => clearTimeout(timer));
  if (connected) return handshake();
  timer = setTimeout(() => fail('connect'), CONNECT_TIMEOUT_MS).unref();
  socket.once('connect', handshake);
}

export class ConnectionPool {
  readonly #endpoint: Endpoint;
  /** Most recently released last. */
  readonly #idle: Connection[] = [];
  readonly #open = new Set<Connection>();
  /** A TLS session to resume on new connections (as https.Agent does), saving a full handshake. */
  #session: Buffer | undefined;
  #closed = false;

  constructor(endpoint: Endpoint) {
    this.#endpoint = endpoint;
  }

  /**
   * Sends one request, given as its complete bytes, and resolves with the whole response. Rejects with the
   * connection's error; one marked `staleSocket` came from a reused connection before any answer, so the
   * request can be sent again (the server closed the connection while idle). One marked `status` failed
   * after that response head arrived.
   */
  request(message: string | Buffer, signal: AbortSignal | undefined): Promise<HttpResponse> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = performance.now();
    let connection: Connection | undefined;
    while ((connection = this.#idle.pop()) && connection.idleUntil <= now) connection.destroy();
    if (connection) return connection.send(message, signal);
    const proxy = this.#endpoint.proxy;
    if (!proxy) return this.#connect().send(message, signal);
    return openTunnel(proxy, this.#endpoint.host, this.#endpoint.port, signal).then((tunnel) => {
      if (this.#closed) {
        tunnel.destroy();
        throw new Error('the connection pool is closed');
      }
      return this.#connect(tunnel).send(message, signal);
    });
  }

  /** Closes every connection; requests in flight fail. */
  close(): void {
    this.#closed = true;
    for (const connection of this.#open) connection.destroy();
  }

  /** For Connection: it is free for the next request. */
  release(connection: Connection): void {
    if (this.#idle.length >= MAX_IDLE) connection.destroy();
    else this.#idle.push(connection);
  }

  /** For Connection: it is closed. */
  forget(connection: Connection): void {
    this.#open.delete(connection);
    const i = this.#idle.lastIndexOf(connection);
    if (i >= 0) this.#idle.splice(i, 1);
  }

  /** A new connection, directly or over `tunnel` (a proxy's CONNECT tunnel to the server). */
  #connect(tunnel?: Socket): Connection {
    const { host, port, tls } = this.#endpoint;
    let socket: Socket;
    if (tls) {
      const session = this.#session;
      const secure = tlsConnect({
        host,
        port,
        ...(tunnel ? { socket: tunnel } : {}),
        secureContext: tls.secureContext,
        rejectUnauthorized: tls.rejectUnauthorized,
        ...(tls.servername ? { servername: tls.servername } : {}),
        ...(session ? { session } : {}),
      });
      secure.on('session', (s: Buffer) => {
        this.#session = s;
      });
      // A session the server no longer accepts must not fail every new connection.
      if (session) {
        secure.once('error', () => {
          if (this.#session === session) this.#session = undefined;
        });
      }
      socket = secure;
    } else {
      socket = tunnel ?? netConnect({ host, port });
      socket.resume();
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
    // A proxy's tunnel is connected already; only its TLS handshake (if any) remains.
    connectDeadline(socket, this.#endpoint, tunnel !== undefined);
    const connection = new Connection(socket, this);
    this.#open.add(connection);
    return connection;
  }
}

interface Pending {
  resolve(response: HttpResponse): void;
  reject(err: Error): void;
  signal: AbortSignal | undefined;
}

class Connection {
  readonly #socket: Socket;
  readonly #pool: ConnectionPool;
  readonly #parser = new ResponseParser();
  /** Whether a response arrived on it before: a failure before the next answer then means a stale connection. */
  #reused = false;
  #pending: Pending | undefined;
  #closed = false;
  /** performance.now() past which an idle connection is not used (the server is about to close it). */
  idleUntil = Infinity;
  readonly #onAbort = () => {
    const pending = this.#settle();
    this.destroy();
    pending?.reject(pending.signal!.reason);
  };

  constructor(socket: Socket, pool: ConnectionPool) {
    this.#socket = socket;
    this.#pool = pool;
    // Listeners for the connection's whole life, so a request adds none.
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => this.#onEnd());
    socket.on('error', (err: Error) => this.#fail(err));
    socket.on('close', () => this.#fail(hangUp()));
  }

  send(message: string | Buffer, signal: AbortSignal | undefined): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject, signal };
      signal?.addEventListener('abort', this.#onAbort, { once: true });
      this.#socket.ref();
      this.#socket.write(message);
    });
  }

  destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pool.forget(this);
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (!this.#pending) {
      // Nothing was asked: a server speaking out of turn cannot be trusted with the next request.
      this.destroy();
      return;
    }
    let response: HttpResponse | undefined;
    try {
      response = this.#parser.push(chunk);
    } catch (err) {
      this.#fail(err as Error);
      return;
    }
    if (response) this.#finish(response);
  }

  /** The server closed its side: the end of a body delimited by the close, or a failure. */
  #onEnd(): void {
    const response = this.#pending ? this.#parser.end() : undefined;
    if (response) this.#finish(response);
    else this.#fail(hangUp());
  }

  #finish(response: HttpResponse): void {
    const pending = this.#settle()!;
    this.#reused = true;
    if (this.#parser.keepAlive && !this.#closed) {
      const timeout = this.#parser.idleTimeoutMs;
      this.idleUntil = timeout === undefined ? Infinity : performance.now() + timeout - KEEP_ALIVE_MARGIN_MS;
      this.#socket.unref();
      this.#pool.release(this);
    } else {
      this.destroy();
    }
    pending.resolve(response);
  }

  #fail(err: Error): void {
    this.destroy();
    const pending = this.#settle();
    if (!pending) return;
    const code = (err as NodeJS.ErrnoException).code;
    if (this.#reused && !this.#parser.started && code && STALE_CONNECTION_ERRORS.has(code)) {
      Object.assign(err, { staleSocket: true });
    }
    const status = this.#parser.status;
    if (status) Object.assign(err, { status });
    pending.reject(err);
  }

  /** Takes the request in flight, if any, off the connection. */
  #settle(): Pending | undefined {
    const pending = this.#pending;
    if (!pending) return undefined;
    this.#pending = undefined;
    pending.signal?.removeEventListener('abort', this.#onAbort);
    return pending;
  }
}

/** What node:http reports for a connection that closed before the response was complete. */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}
