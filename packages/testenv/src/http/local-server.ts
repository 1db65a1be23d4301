import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain HTTP server on a free loopback port whose answers a test scripts, for protocol behaviour the real
 * API server does not produce on demand (429s, Retry-After, silent watches, non-Status error bodies).
 */
export interface LocalServer {
  url: string;
  /** Requests received so far, in order. */
  requests: IncomingMessage[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void | Promise<void>;

export async function startLocalServer(handler: Handler): Promise<LocalServer> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    const index = requests.push(req) - 1;
    // Drain the body so keep-alive connections stay usable.
    req.resume();
    Promise.resolve(handler(req, res, index)).catch((err) => {
      res.destroy(err);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function statusBody(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message };
}
