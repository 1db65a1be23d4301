import { createServer, type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A forward HTTP proxy that tunnels CONNECT requests and forwards requests in absolute form, on a free loopback port, as squid or a corporate proxy
 * would for a client behind it: for tests of clients that honour HTTPS_PROXY or a kubeconfig `proxy-url`. It
 * records every CONNECT, can require Basic credentials (407 otherwise), and can route a name that does not
 * resolve to a local server, so a test proves the request could only have arrived through the proxy.
 */
export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** What each CONNECT asked for (`host:port`) and the Proxy-Authorization it carried, in order. */
  connects: { target: string; authorization: string | undefined }[];
  /** The absolute-form requests it forwarded (what plain-http clients send a proxy), in order. */
  forwarded: { url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** `host:port` targets to tunnel (or forward) to another `host:port` instead of resolving them. */
  routes?: Record<string, string>;
  /** `user:password` the proxy requires. */
  credentials?: string;
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const connects: ConnectProxy['connects'] = [];
  const sockets = new Set<Duplex>();
  const forwarded: ConnectProxy['forwarded'] = [];
  const expected = options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`;
  // A request in absolute form (`GET http://host/path`), as clients send plain-http requests to a proxy.
  const server = createServer((req, res) => {
    const authorization = req.headers['proxy-authorization'];
    forwarded.push({ url: req.url ?? '', authorization });
    if (expected && authorization !== expected) {
      res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="test"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('not an absolute URL\n');
      return;
    }
    const [host, port] = splitTarget(
      options.routes?.[target.host] ?? `${target.hostname}:${target.port || 80}`,
    );
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = request({
      host,
      port,
      method: req.method,
      path: target.pathname + target.search,
      headers,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`${err.code ?? err.message}\n`);
    });
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = req.url ?? '';
    const authorization = req.headers['proxy-authorization'];
    connects.push({ target, authorization });
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
    forwarded,
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
