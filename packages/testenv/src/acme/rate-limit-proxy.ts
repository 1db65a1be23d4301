/**
 * An HTTPS proxy in front of Pebble that answers chosen requests with 429 rateLimited and a Retry-After, as
 * Let's Encrypt does when a limit is hit (Pebble has no rate limits of its own). Everything else is passed
 * through with the Host header kept, so Pebble writes its URLs (and checks the JWS `url`) for the proxy's
 * address and a client never notices the proxy. Its TLS certificate comes from a CA of its own: trust
 * `caBundle` (with Pebble's, which the proxy itself uses).
 */

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { createTestCa } from '../pki/auth-certs.ts';

export interface RateLimitProxy {
  /** The directory URL through the proxy. */
  readonly directoryUrl: string;
  /** PEM of the CA that signed the proxy's certificate. */
  readonly caBundle: string;
  /** How many requests were answered with 429, by the path's first segment (`order-plz`, …). */
  readonly limited: Map<string, number>;
  close(): Promise<void>;
}

export interface RateLimitProxyOptions {
  /** Pebble's directory URL (https://127.0.0.1:PORT/dir). */
  upstreamDirectoryUrl: string;
  /** PEM CA trusted for Pebble's TLS. */
  upstreamCa: string;
  /** Whether to refuse this request (POST path); called once per request. */
  limit(method: string, path: string): boolean;
  /** The Retry-After sent, in seconds. */
  retryAfterSeconds: number;
}

export async function startRateLimitProxy(options: RateLimitProxyOptions): Promise<RateLimitProxy> {
  const upstream = new URL(options.upstreamDirectoryUrl);
  const ca = await createTestCa('certkit test rate-limit proxy CA');
  const serving = await ca.issue({
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    usages: ['serverAuth'],
  });
  const dispatcher = new Agent({ connect: { ca: options.upstreamCa } });
  const limited = new Map<string, number>();

  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (options.limit(req.method ?? 'GET', path)) {
        const segment = path.split('/')[1] ?? '';
        limited.set(segment, (limited.get(segment) ?? 0) + 1);
        res.writeHead(429, {
          'content-type': 'application/problem+json',
          'retry-after': String(options.retryAfterSeconds),
        });
        res.end(
          JSON.stringify({
            type: 'urn:ietf:params:acme:error:rateLimited',
            detail: 'too many new orders recently (certkit test proxy)',
            status: 429,
          }),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && name !== 'connection' && name !== 'content-length') {
          headers[name] = value;
        }
      }
      request(new URL(path, upstream), {
        method: (req.method ?? 'GET') as 'GET',
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
        dispatcher,
      })
        .then(async (answer) => {
          const body = Buffer.from(await answer.body.arrayBuffer());
          const out: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && name !== 'transfer-encoding' && name !== 'connection')
              out[name] = value;
          }
          out['content-length'] = String(body.length);
          res.writeHead(answer.statusCode, out);
          res.end(body);
        })
        .catch((err: Error) => {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(err.message);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    directoryUrl: `https://127.0.0.1:${port}${upstream.pathname}`,
    caBundle: ca.certPem,
    limited,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher.close();
    },
  };
}
