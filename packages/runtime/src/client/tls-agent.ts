import type { Agent as HttpAgent, AgentOptions as HttpAgentOptions, RequestOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ConnectionOptions, connect as tlsConnect, type SecureContext } from 'node:tls';
import { nodeHttp } from './node-http.ts';

/**
 * An http.Agent whose connections are TLS: what https.Agent is to the streaming transport (watches, lists
 * read item by item), without loading node:https. Measured on Node 26, a process that has node:https loaded
 * and an http server listening (the controller's /metrics and probes endpoint, as deploy/ runs it) has
 * ~2.8 MiB more of the node binary resident than one with the server alone (docs/adr/1132). Requests go
 * through node:http's request(), which takes the agent's protocol (`http:`) and default port (443 here, so
 * that the Host header carries no port, as https.request's does).
 *
 * What https.Agent adds and this does not: a cache of TLS sessions per server for resumption. Watch
 * connections are few and long-lived; the unary pool (http1-pool.ts) keeps its own session.
 */

export interface TlsAgentOptions extends HttpAgentOptions {
  secureContext: SecureContext;
  rejectUnauthorized: boolean;
  /** SNI and the name the certificate must carry; absent: the request's host, or no SNI for an IP. */
  servername?: string;
}

type ConnectionCallback = (err: Error | null, stream: Duplex) => void;

/**
 * Makes the TLS socket for one connection: directly, or (with `tunnel`) inside a socket already connected,
 * such as a proxy's CONNECT tunnel. http.Agent passes its own options merged with the request's; only the
 * ones TLS needs are given on, so the request's `path` is never read as a Unix socket path.
 */
export function tlsConnection(options: RequestOptions & TlsAgentOptions, tunnel?: Duplex): Duplex {
  const connect: ConnectionOptions = {
    host: options.host ?? options.hostname ?? 'localhost',
    port: Number(options.port),
    secureContext: options.secureContext,
    rejectUnauthorized: options.rejectUnauthorized,
  };
  // http.Agent works out the SNI name from the Host header ('' for an IP address), unless one was given.
  const servername = (options as { servername?: string }).servername;
  if (servername) connect.servername = servername;
  if (tunnel) connect.socket = tunnel;
  return tlsConnect(connect);
}

/** A keep-alive agent for TLS connections made with `options.secureContext`. */
export function tlsAgent(options: TlsAgentOptions): HttpAgent {
  const agent = new (class extends nodeHttp.Agent {
    override createConnection(connectOptions: RequestOptions, callback?: ConnectionCallback): Duplex {
      void callback; // the synchronous form: the socket is returned
      return tlsConnection(connectOptions as RequestOptions & TlsAgentOptions);
    }
  })(options);
  // Not in @types/node's Agent, but read by ClientRequest for the default port and the Host header.
  (agent as HttpAgent & { defaultPort: number }).defaultPort = 443;
  return agent;
}

/** As tlsAgent, each connection's TLS inside a socket `open` resolves to (a proxy's CONNECT tunnel). */
export function tunnelledTlsAgent(
  options: TlsAgentOptions,
  open: (host: string, port: number) => Promise<Duplex>,
): HttpAgent {
  const agent = new (class extends nodeHttp.Agent {
    override createConnection(connectOptions: RequestOptions, callback?: ConnectionCallback): undefined {
      const merged = connectOptions as RequestOptions & TlsAgentOptions;
      open(String(merged.host), Number(merged.port)).then(
        (tunnel) => callback!(null, tlsConnection(merged, tunnel)),
        (err: Error) => callback!(err, undefined as never),
      );
      return undefined;
    }
  })(options);
  // Not in @types/node's Agent, but read by ClientRequest for the default port and the Host header.
  (agent as HttpAgent & { defaultPort: number }).defaultPort = 443;
  return agent;
}
