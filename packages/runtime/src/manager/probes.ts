import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeOldestIdleConnections } from '@certkit/apimachinery/http-idle-connections';
import { handleRequestsInTurn } from '@certkit/apimachinery/http-pipelining';
import { registerProcessMetrics } from '@certkit/apimachinery/process-metrics';
import { nodeHttp } from '../client/node-http.ts';
import { describeError } from '../log.ts';
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from './metrics.ts';
import { sharedScrape } from './shared-scrape.ts';

/**
 * The manager's HTTP endpoints: `/healthz`, `/readyz` (kube-style checks, `?verbose` lists them) and
 * `/metrics` (Prometheus text: the registry's metrics and the process's, process_* and nodejs_*).
 */

/** A named health check: passes unless it throws or rejects. */
export type Check = () => void | Promise<void>;

/** A parsed `host:port` bind address; no host means every interface. */
export interface BindAddress {
  /** Undefined binds every interface, as Go's `:8080` does. */
  host: string | undefined;
  port: number;
}

/**
 * Parses a controller-runtime style bind address: `host:port`, `:port`, `[v6]:port`; `0` disables the
 * endpoint (returns undefined). `host:0` picks a free port.
 */
export function parseBindAddress(address: string): BindAddress | undefined {
  if (address === '0' || address === '') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address);
  if (!m) throw new Error(`invalid bind address ${JSON.stringify(address)}: want host:port, :port or 0`);
  const host = m[1] ?? m[2];
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid bind address ${JSON.stringify(address)}: port out of range`);
  return { host: host || undefined, port };
}

/**
 * Options of the probes server: where it listens, the metrics it serves, and its health and readiness checks.
 */
export interface ProbeServerOptions {
  address: BindAddress;
  metrics: MetricsRegistry;
  healthz: ReadonlyMap<string, Check>;
  readyz: ReadonlyMap<string, Check>;
  /** How long an answer may wait for a client that takes nothing before the connection is closed (default 10 s). */
  stalledWriteTimeoutMs?: number;
  /** Connections held open at once; past it the oldest idle one is closed (default 1024). */
  maxConnections?: number;
  /** How long a request's headers may take to arrive (default 10 s; Node's own is 60 s). */
  headersTimeoutMs?: number;
}

/** A running probes server (/healthz, /readyz, /metrics). */
export interface ProbeServer {
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const DEFAULT_STALLED_WRITE_TIMEOUT_MS = 10_000;
/**
 * Far more than Prometheus and the kubelet's probes need, far fewer than the process's open files: every
 * connection past it costs one that sends nothing (see closeOldestIdleConnections).
 */
const DEFAULT_MAX_CONNECTIONS = 1024;
/** A probe or scrape sends its headers at once; Node's 60 s let an idle connection hold a descriptor that long. */
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** Starts the probes server: /healthz and /readyz run their checks, /metrics renders the registry. */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  // What serves /metrics serves the process's own metrics too.
  registerProcessMetrics(options.metrics);
  const scrape = sharedScrape(() => options.metrics.scrape());
  const stalledWriteTimeoutMs = options.stalledWriteTimeoutMs ?? DEFAULT_STALLED_WRITE_TIMEOUT_MS;
  // Unauthenticated and often bound on every interface: pipelined requests run in turn, as Go's server runs
  // them, so one connection cannot have every check or scrape run at once (ADR 0420).
  const serve = handleRequestsInTurn(
    (req, res) => {
      // An answer not handed to the connection in full within this long is cut off, with the scrape it
      // holds: the client takes nothing (Prometheus's own scrape timeout is 10 s).
      const stalled = setTimeout(() => res.destroy(), stalledWriteTimeoutMs);
      res.once('finish', () => clearTimeout(stalled)).once('close', () => clearTimeout(stalled));
      handle(req, res, options, scrape).catch((err) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(describeError(err));
      });
    },
    (_req, res) => {
      res
        .writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1' })
        .end('Too many requests\n');
    },
  );
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const server = nodeHttp.createServer(
    {
      // Also how long a connection that sends nothing is kept.
      headersTimeout,
      requestTimeout: headersTimeout * 2,
      // Node looks for requests past those timeouts this often (its default, 30 s, would let them run long).
      connectionsCheckingInterval: 1_000,
    },
    serve,
  );
  closeOldestIdleConnections(server, options.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.address.port, options.address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // Scrapers keep connections alive; they must not hold shutdown open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: ProbeServerOptions,
  scrape: () => Promise<Buffer>,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://probe');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  if (url.pathname === '/metrics') {
    const body = await scrape();
    res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Content-Length': body.length }).end(body);
    return;
  }
  const m = /^\/(healthz|readyz)(?:\/(.+))?$/.exec(url.pathname);
  if (!m) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    return;
  }
  const kind = m[1];
  const all = kind === 'healthz' ? options.healthz : options.readyz;
  let checks = [...all];
  if (m[2] !== undefined) {
    checks = checks.filter(([name]) => name === m[2]);
    if (checks.length === 0) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
  }
  const results = await Promise.all(
    checks.map(async ([name, check]) => {
      try {
        await check();
        return { name, ok: true, reason: '' };
      } catch (err) {
        return { name, ok: false, reason: describeError(err) };
      }
    }),
  );
  const failed = results.some((r) => !r.ok);
  // kube's healthz format: terse "ok" unless verbose or failing; reasons are withheld from callers.
  let body: string;
  if (!failed && !url.searchParams.has('verbose')) body = 'ok';
  else {
    const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
    lines.push(failed ? `${kind} check failed` : `${kind} check passed`);
    body = `${lines.join('\n')}\n`;
  }
  res
    .writeHead(failed ? 500 : 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    })
    .end(body);
}
