import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A forward HTTP proxy that tunnels CONNECT requests, on a free loopback port, as squid or a corporate proxy
 * would for a client behind it: for tests of clients that honour HTTPS_PROXY or a kubeconfig `proxy-url`. It
 * records every CONNECT, can require Basic credentials (407 otherwise), and can route a name that does not
 * resolve to a local server, so a test proves the request could only have arrived through the proxy.
 */
export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** What each CONNECT asked for (`host:port`) and the Proxy-Authorization it carried, in order. */
  connects: { target: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** `host:port` targets to tunnel to another `host:port` instead of resolving them. */
  routes?: Record<string, string>;
  /** `user:password` the proxy requires. */
  credentials?: string;
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const connects: ConnectProxy['connects'] = [];
  const sockets = new Set<Duplex>();
  const server = createServer((_req, res) => {
    // Only tunnels: a request in absolute form would be forwarded by a real proxy, not needed here.
    res.writeHead(405, { 'Content-Type': 'text/plain' }).end('this proxy only tunnels (CONNECT)\n');
  });
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = req.url ?? '';
    const authorization = req.headers['proxy-authorization'];
    connects.push({ target, authorization });
    const expected = options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`;
    if (expected && authorization !== expected) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n',
      );
      return;
    }
    const [host, port] = splitTarget(options.routes?.[target] ?? target);
    const upstream: Socket = connect({ host, port });
    sockets.add(upstream);
    upstream.once('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.once('close', () => upstream.destroy());
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // Once the tunnel stands, its close (which follows) ends the client's side too.
      if (client.writableEnded || !upstream.connecting) return;
      client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\n${err.code ?? err.message}\n`);
    });
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function splitTarget(target: string): [string, number] {
  const colon = target.lastIndexOf(':');
  const host = target.slice(0, colon);
  return [host.startsWith('[') ? host.slice(1, -1) : host, Number(target.slice(colon + 1))];
}
