/**
 * A fault-injecting HTTPS proxy in front of a test server, for the protocol-level failures the real server
 * cannot produce on demand (429 with Retry-After on a watch, cut connections, refused connections).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, createServer, request, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { ensureServingCertificates } from '@certkit/apiserver/security/certificates';
import type { ClientConfig } from '@certkit/runtime/client/config';
import type { TestServer } from './test-server.ts';

export interface RequestRecord {
  method: string;
  path: string;
  query: URLSearchParams;
  status: number;
}

/** A fault-injecting HTTPS proxy in front of a test server (same certificate, so the same CA verifies it). */
export class FaultProxy {
  readonly requests: RequestRecord[] = [];
  /** Watch requests (not watch-lists) still to be answered with 429 + Retry-After. */
  tooManyWatches = 0;
  retryAfterSeconds = 1;
  readonly #target: URL;
  readonly #ca: string;
  readonly #server: Server;
  readonly #agent: Agent;
  readonly #sockets = new Set<Socket>();
  readonly #upstreams = new Set<IncomingMessage>();
  #port = 0;

  private constructor(target: string, ca: string, cert: { certPem: string; keyPem: string }) {
    this.#target = new URL(target);
    this.#ca = ca;
    this.#agent = new Agent({ ca, keepAlive: true });
    this.#server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) =>
      this.#handle(req, res),
    );
    this.#server.on('secureConnection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(server: TestServer): Promise<FaultProxy> {
    const certificates = await ensureServingCertificates(server.dataDir, ['127.0.0.1']);
    const proxy = new FaultProxy(server.url, server.caCertPem, certificates);
    await proxy.#listen(0);
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.#port}`;
  }

  /** A client config that talks to the server through this proxy. */
  clientConfig(base: ClientConfig): ClientConfig {
    return { ...base, server: this.url };
  }

  watchRequests(): RequestRecord[] {
    return this.requests.filter((r) => isWatch(r.query));
  }

  listRequests(): RequestRecord[] {
    return this.requests.filter((r) => r.method === 'GET' && !isWatch(r.query));
  }

  /** Drops every open connection, as a network failure would (no clean end of the streams). */
  cutConnections(): void {
    for (const upstream of this.#upstreams) upstream.destroy();
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Stops accepting connections (clients get ECONNREFUSED) and drops the open ones. */
  async refuse(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.cutConnections();
    await closed;
  }

  /** Accepts connections again, on the same port. */
  async accept(): Promise<void> {
    await this.#listen(this.#port);
  }

  async close(): Promise<void> {
    this.cutConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#agent.destroy();
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      status: 0,
    };
    this.requests.push(record);
    if (isWatch(url.searchParams) && !url.searchParams.has('sendInitialEvents') && this.tooManyWatches > 0) {
      this.tooManyWatches--;
      record.status = 429;
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Too many requests, please try again later.',
        reason: 'TooManyRequests',
        details: { retryAfterSeconds: this.retryAfterSeconds },
        code: 429,
      });
      res.writeHead(429, {
        'Content-Type': 'application/json',
        'Retry-After': String(this.retryAfterSeconds),
      });
      res.end(body);
      return;
    }
    const upstreamRequest = request(
      {
        host: this.#target.hostname,
        port: this.#target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: this.#target.host },
        agent: this.#agent,
        ca: this.#ca,
      },
      (upstream) => {
        record.status = upstream.statusCode ?? 0;
        this.#upstreams.add(upstream);
        upstream.on('close', () => this.#upstreams.delete(upstream));
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
        upstream.on('error', () => res.destroy());
      },
    );
    upstreamRequest.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.destroy();
    });
    res.on('close', () => upstreamRequest.destroy());
    req.pipe(upstreamRequest);
  }
}

function isWatch(query: URLSearchParams): boolean {
  const w = query.get('watch');
  return w === 'true' || w === '1';
}
