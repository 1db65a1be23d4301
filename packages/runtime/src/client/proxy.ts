import type { Agent as HttpAgent, AgentOptions as HttpAgentOptions, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { BlockList, connect as netConnect, isIP, type Socket } from 'node:net';
import { type ConnectionOptions as TlsConnectionOptions, connect as tlsConnect } from 'node:tls';
import { nodeHttp } from './node-http.ts';

/**
 * HTTP proxies as client-go uses them (ADR 1832). A kubeconfig cluster's `proxy-url` carries every request
 * (client-go's http.ProxyURL); without it the environment decides, as Go's http.ProxyFromEnvironment:
 * HTTPS_PROXY (or https_proxy) for https servers, HTTP_PROXY (or http_proxy) for http ones, never for
 * localhost or a loopback address, and not for hosts NO_PROXY (or no_proxy) names. Requests to an https
 * server then go through a CONNECT tunnel opened here; those to a plain-http server are sent to an http proxy
 * in absolute form (`GET http://host/path`), as Go's transport does (the transport does that part). Proxy agents on npm (https-proxy-agent, undici's ProxyAgent) make agents or
 * dispatchers; the unary pool speaks to sockets, so the tunnel (one request line and one status line) is
 * written here and shared by the pool and the streaming agent.
 */

export type ProxyEnv = Record<string, string | undefined>;

/** The proxy for requests to `server`, or undefined to connect directly. */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: ProxyEnv): URL | undefined {
  if (proxyUrl !== undefined && proxyUrl !== '') return parseProxyUrl(proxyUrl, 'proxy-url');
  const secure = server.protocol === 'https:';
  const variable = secure ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  const name = env[variable] ? variable : variable.toLowerCase();
  const value = env[name];
  if (!value) return undefined;
  const host = unbracket(server.hostname.toLowerCase());
  const port = server.port || (secure ? '443' : '80');
  if (!useProxy(host, port, env.NO_PROXY || env.no_proxy || '')) return undefined;
  // Go reads a value without a scheme (`proxy:3128`) as http.
  return parseProxyUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`, name);
}

function parseProxyUrl(value: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`invalid proxy URL in ${source}: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(
      `unsupported proxy scheme in ${source}: ${JSON.stringify(url.protocol.slice(0, -1))} (http and https are)`,
    );
  }
  return url;
}

const unbracket = (host: string) => (host.startsWith('[') ? host.slice(1, -1) : host);

/** Go's httpproxy useProxy: false for localhost, loopback addresses and what NO_PROXY matches. */
export function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === 'localhost') return false;
  const family = isIP(host);
  if (family !== 0 && isLoopback(host, family)) return false;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return false;
    if (family !== 0 && entry.includes('/')) {
      if (inCidr(host, family, entry)) return false;
      continue;
    }
    const [entryHost, entryPort] = splitHostPort(entry);
    if (entryHost === '') continue;
    if (entryPort !== '' && entryPort !== port) continue;
    if (isIP(entryHost) !== 0) {
      if (family !== 0 && sameAddress(host, entryHost)) return false;
      continue;
    }
    // `example.com` matches it and its subdomains, `.example.com` and `*.example.com` only subdomains.
    const domain = entryHost.startsWith('*.') ? entryHost.slice(1) : entryHost;
    if (domain.startsWith('.') ? host.endsWith(domain) : host === domain || host.endsWith(`.${domain}`)) {
      return false;
    }
  }
  return true;
}

function isLoopback(address: string, family: number): boolean {
  if (family === 4) return address.startsWith('127.');
  const list = new BlockList();
  list.addAddress('::1', 'ipv6');
  list.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  return list.check(address, 'ipv6');
}

function inCidr(address: string, family: number, cidr: string): boolean {
  const [network, bits] = cidr.split('/');
  const networkFamily = isIP(network);
  if (networkFamily === 0 || !/^\d+$/.test(bits)) return false;
  const list = new BlockList();
  try {
    list.addSubnet(network, Number(bits), networkFamily === 4 ? 'ipv4' : 'ipv6');
    return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  } catch {
    return false; // a prefix length out of range: Go skips the entry as not a CIDR
  }
}

function sameAddress(a: string, b: string): boolean {
  const list = new BlockList();
  list.addAddress(b, isIP(b) === 4 ? 'ipv4' : 'ipv6');
  return list.check(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
}

/** `host:port`, `[v6]:port`, a bare v6 address or a bare host, as Go's net.SplitHostPort then the whole. */
function splitHostPort(entry: string): [string, string] {
  const bracketed = /^\[([^\]]*)\]:(\d*)$/.exec(entry);
  if (bracketed) return [bracketed[1], bracketed[2]];
  if (isIP(entry) === 6) return [entry, ''];
  const colon = entry.lastIndexOf(':');
  if (colon >= 0 && entry.indexOf(':') === colon) return [entry.slice(0, colon), entry.slice(colon + 1)];
  return [unbracket(entry), ''];
}

/** `Basic …` from the user and password in the proxy's URL, as Go sends them; undefined without. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username && !proxy.password) return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

/** The largest CONNECT answer head read before giving up on the proxy. */
const MAX_PROXY_HEAD = 16 * 1024;

/**
 * A socket to `host:port` through an HTTP CONNECT tunnel of `proxy` (user:password in its URL become
 * Proxy-Authorization: Basic, as Go sends them). Rejects with the proxy's status line when it refuses.
 */
export function openTunnel(proxy: URL, host: string, port: number, signal?: AbortSignal): Promise<Socket> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const proxyHost = unbracket(proxy.hostname);
  const proxyPort = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
  const socket: Socket =
    proxy.protocol === 'https:'
      ? tlsConnect({
          host: proxyHost,
          port: proxyPort,
          ...(isIP(proxyHost) ? {} : { servername: proxyHost }),
        })
      : netConnect({ host: proxyHost, port: proxyPort });
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  let head = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n`;
  const authorization = proxyAuthorization(proxy);
  if (authorization) head += `Proxy-Authorization: ${authorization}\r\n`;
  socket.write(`${head}\r\n`);
  return new Promise<Socket>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const cleanUp = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: Error) => {
      cleanUp();
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error) => fail(new Error(`proxy ${proxy.host}: ${err.message}`, { cause: err }));
    const onClose = () =>
      fail(new Error(`proxy ${proxy.host} closed the connection before answering CONNECT`));
    const onAbort = () => fail(signal!.reason as Error);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > MAX_PROXY_HEAD) fail(new Error(`proxy ${proxy.host}: answer head too large`));
        return;
      }
      const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.[01] 2\d\d\b/.test(statusLine)) {
        fail(new Error(`proxy ${proxy.host} refused CONNECT to ${authority}: ${statusLine}`));
        return;
      }
      cleanUp();
      // Whoever takes the tunnel reads it from here; bytes past the head already belong to it.
      socket.pause();
      const rest = received.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

type ConnectionCallback = (err: Error | null, stream: Duplex) => void;

/**
 * The streaming agent's connections through the proxy: http.Agent's documented createConnection, in its
 * asynchronous form (the callback), opens the tunnel first and then TLS inside it.
 */
export function tunnellingHttpsAgent(proxy: URL, options: HttpsAgentOptions): HttpsAgent {
  return new (class extends HttpsAgent {
    override createConnection(connectOptions: RequestOptions, callback?: ConnectionCallback): undefined {
      openTunnel(proxy, String(connectOptions.host), Number(connectOptions.port)).then(
        (tunnel) =>
          callback!(null, tlsConnect({ ...(connectOptions as TlsConnectionOptions), socket: tunnel })),
        (err: Error) => callback!(err, undefined as never),
      );
      return undefined;
    }
  })(options);
}

export function tunnellingHttpAgent(proxy: URL, options: HttpAgentOptions): HttpAgent {
  return new (class extends nodeHttp.Agent {
    override createConnection(connectOptions: RequestOptions, callback?: ConnectionCallback): undefined {
      openTunnel(proxy, String(connectOptions.host), Number(connectOptions.port)).then(
        (tunnel) => callback!(null, tunnel.resume()),
        (err: Error) => callback!(err, undefined as never),
      );
      return undefined;
    }
  })(options);
}
