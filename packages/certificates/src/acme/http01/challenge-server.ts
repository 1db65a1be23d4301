/**
 * The embedded HTTP-01 listener (`--acme-http01-listen-address`): answers
 * GET /.well-known/acme-challenge/<token> with the key authorization of a challenge presented for the
 * request's host, as cert-manager's acmesolver answers for its one challenge, and 404 to everything else.
 * It faces the internet (ACME servers must reach it on port 80), so headers are small and every stage of
 * a request has a deadline; nothing from the request is echoed back.
 */

// node:http through the runtime's nodeHttp (its CommonJS module): an ESM import of it loads node:http2 and
// undici into every controller that loads this module, listener or not (~14 MB of RSS).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeOldestIdleConnections } from '@certkit/apimachinery/http-idle-connections';
import { nodeHttp } from '@certkit/runtime/client/node-http';
import { splitHostPort } from '../../api/validation/nameserver.ts';
import { HTTP01_CHALLENGE_PATH } from './solver.ts';
import type { ListenAddress } from './address.ts';
import { LocalAnswers, SELF_CHECK_ID_HEADER } from './local-answers.ts';

/** What the listener serves: key authorizations by token, each for one host (the Challenge's dnsName). */
export class PresentedChallenges {
  readonly #byToken = new Map<string, Map<string, string>>();
  /** The self-check requests this listener answered (the self-check's ids). */
  readonly localAnswers = new LocalAnswers();

  present(token: string, host: string, keyAuthorization: string): void {
    let hosts = this.#byToken.get(token);
    if (!hosts) this.#byToken.set(token, (hosts = new Map()));
    hosts.set(normalizeHost(host), keyAuthorization);
  }

  remove(token: string, host: string): void {
    const hosts = this.#byToken.get(token);
    if (!hosts) return;
    hosts.delete(normalizeHost(host));
    if (hosts.size === 0) this.#byToken.delete(token);
  }

  /** The key authorization to serve, if `token` is presented for `host`. */
  lookup(token: string, host: string): string | undefined {
    return this.#byToken.get(token)?.get(normalizeHost(host));
  }

  get size(): number {
    let n = 0;
    for (const hosts of this.#byToken.values()) n += hosts.size;
    return n;
  }
}

/** DNS names compare case-insensitively; IPv6 literals come bracketed in Host headers and bare in specs. */
function normalizeHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * The Host header without its port, as the acmesolver takes it (net.SplitHostPort, else the header as it
 * is): `example.com:80` → `example.com`, `[::1]:8080` → `::1`, a bare `2001:db8::1` stays whole.
 */
export function hostWithoutPort(header: string | undefined): string {
  const host = header ?? '';
  const split = splitHostPort(host);
  return 'error' in split ? host : split.host;
}

/** Tokens are base64url (RFC 8555 §8.3: at least 128 bits of entropy); anything else is not ours. */
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export const LISTENER_LIMITS = {
  /** Request line and headers: far above what an ACME validator sends, far below Node's 16 KiB default. */
  maxHeaderSize: 8 * 1024,
  /** Time to receive the headers (slowloris). */
  headersTimeoutMs: 10_000,
  /** Time for a whole request. */
  requestTimeoutMs: 15_000,
  /** Idle keep-alive connections are closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** Open connections at once; past it the oldest idle one is closed (closeOldestIdleConnections). */
  maxConnections: 1024,
  /** How often Node looks for requests past the two timeouts above (its default, 30 s, would let them run long). */
  checkIntervalMs: 1_000,
};

export type ListenerLimits = typeof LISTENER_LIMITS;

function respond(req: IncomingMessage, res: ServerResponse, challenges: PresentedChallenges): void {
  const path = (req.url ?? '').split('?', 1)[0];
  if ((req.method === 'GET' || req.method === 'HEAD') && path.startsWith(HTTP01_CHALLENGE_PATH)) {
    const token = path.slice(HTTP01_CHALLENGE_PATH.length);
    const key = TOKEN.test(token) ? challenges.lookup(token, hostWithoutPort(req.headers.host)) : undefined;
    if (key !== undefined) {
      challenges.localAnswers.answered(req.headers[SELF_CHECK_ID_HEADER]);
      res.writeHead(200, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Cache-Control': 'no-cache, no-store, must-revalidate',
        'Content-Length': Buffer.byteLength(key),
      });
      res.end(req.method === 'HEAD' ? undefined : key);
      return;
    }
  }
  const body = '404 page not found\n';
  res.writeHead(404, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

export interface ChallengeListener {
  /** The address actually bound (port 0 resolved). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/** Binds the listener; rejects (EADDRINUSE, EACCES for port 80 without privileges) when it cannot. */
export async function startChallengeListener(
  address: ListenAddress,
  challenges: PresentedChallenges,
  limits: ListenerLimits = LISTENER_LIMITS,
): Promise<ChallengeListener> {
  const server: Server = nodeHttp.createServer(
    {
      maxHeaderSize: limits.maxHeaderSize,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    (req, res) => respond(req, res, challenges),
  );
  // Not server.maxConnections, which refuses the newcomer: whoever held the slots would starve the ACME
  // server's validation requests.
  closeOldestIdleConnections(server, limits.maxConnections);
  // A request body is never read: drop whatever a client sends instead of buffering it.
  server.on('request', (req: IncomingMessage) => req.resume());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address.host || undefined, port: address.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
