import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError, isStatus } from '@certkit/apimachinery';
import packageJson from '../../package.json' with { type: 'json' };
import { type ClientConfig, type CredentialProvider, type Credentials, staticCredentials } from './config.ts';
import { type ErrorContext, errorFromResponse } from './errors.ts';
import type { HttpResponse } from './http1-parser.ts';
import { ConnectionPool, STALE_CONNECTION_ERRORS } from './http1-pool.ts';
import { type HeaderBlock, headerBlock, requestMessage } from './http1-request.ts';
import { nodeHttp } from './node-http.ts';
import { proxyAuthorization, proxyFor, tunnellingHttpAgent, tunnellingHttpsAgent } from './proxy.ts';
import type { RateLimiter } from './ratelimit.ts';
import { currentUserAgent } from './user-agent.ts';

/**
 * HTTP(S) to one API server, with client-go's REST-layer behaviour: every attempt first takes a token from
 * the shared rate limiter; 429 and 5xx answers that carry Retry-After are retried after that many seconds, at
 * most 10 times; failures become StatusErrors. Requests whose answer is read whole (json) go through our own
 * keep-alive HTTP/1.1 pool, which costs a fraction of node:http's CPU per request; streamed answers (watches,
 * lists read item by item) use a keep-alive node:http Agent. Both are made for the current client
 * certificate.
 */

export const USER_AGENT = `certkit/${packageJson.version} (${process.platform}/${process.arch})`;

/** client-go's rest.Request maxRetries. */
export const DEFAULT_MAX_RETRIES = 10;

/** What the metrics hook learns about each HTTP exchange (each retry counts on its own, as in client-go). */
export interface RequestInfo {
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, or the HTTP method for other paths. */
  verb: string;
  /** Resource, group-qualified (`secrets`, `leases.coordination.k8s.io`); '' for non-resource paths. */
  resource: string;
  /** HTTP status; 0 when no response arrived (connection refused, reset, aborted). */
  code: number;
  /** Until the response headers arrived (or the request failed). */
  durationMs: number;
}

/** Called after every HTTP exchange, for metrics. */
export type RequestHook = (info: RequestInfo) => void;

export interface TransportOptions {
  limiter: RateLimiter;
  onRequest?: RequestHook;
  /** Default DEFAULT_MAX_RETRIES. */
  maxRetries?: number;
  userAgent?: string;
}

export interface HttpRequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path, e.g. `/api/v1/namespaces/default/secrets`. */
  path: string;
  query?: URLSearchParams;
  /**
   * A value to send as JSON. Encoded when the request is written, again for each retry (the caller holds the
   * value until the request settles, so the text need not be kept).
   */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** For metrics; defaults to the lower-cased method. */
  verb?: string;
  /** What is acted on, for metrics and for the wording of errors without a Status body. */
  target?: Omit<ErrorContext, 'method'>;
  signal?: AbortSignal;
}

type Agent = HttpAgent | HttpsAgent;

/** What the retry loop needs of an answer, whichever client carried it. */
interface Answer {
  readonly status: number;
  /** performance.now() when the response headers arrived. */
  readonly headersAt: number;
  header(name: string): string | undefined;
  /** Lets go of a body that will not be read. */
  discard?(): void;
}

type Send<A extends Answer> = (spec: HttpRequestSpec, path: string, credentials: Credentials) => Promise<A>;

/**
 * The request body as JSON text, made as the request is written. Not kept for retries: a request waits for
 * its answer long enough that V8 moves what it holds into the old generation, where it dies only in a full
 * collection (docs/adr/1225); the value it comes from is held by the caller anyway.
 */
function encodeBody(spec: HttpRequestSpec): string | undefined {
  return spec.body === undefined ? undefined : JSON.stringify(spec.body);
}

/** A response from node:http whose body is still to be read. */
class StreamedAnswer implements Answer {
  readonly request: ClientRequest;
  readonly response: IncomingMessage;
  readonly status: number;
  readonly headersAt = performance.now();

  constructor(request: ClientRequest, response: IncomingMessage) {
    this.request = request;
    this.response = response;
    this.status = response.statusCode ?? 0;
  }

  header(name: string): string | undefined {
    const value = this.response.headers[name];
    return typeof value === 'string' ? value : undefined;
  }

  discard(): void {
    this.response.resume();
  }
}

interface Exchange {
  response: IncomingMessage;
  request: ClientRequest;
}

/** The connections made for one client certificate (or none). */
interface Connections {
  /** `cert\0key`, or undefined without a client certificate. */
  cert: string | undefined;
  pool: ConnectionPool;
  secureContext: SecureContext | undefined;
  /** Made at the first streamed request. */
  agent?: Agent;
}

/**
 * A path the URL parser would leave as it is: only characters it does not percent-encode, and no `.` or
 * `..` segment (which it would resolve). Paths built by resourcePath always are; others go through URL.
 */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;

export class Transport {
  readonly #base: URL;
  /** What node:http would take from #base for every request, worked out once (see #sendStreaming). */
  readonly #hostname: string;
  readonly #port: number | undefined;
  readonly #auth: string | undefined;
  /** The server URL's path without trailing slashes; it prefixes every request path. */
  readonly #prefix: string;
  readonly #config: ClientConfig;
  readonly #provider: CredentialProvider;
  readonly #options: TransportOptions;
  readonly #maxRetries: number;
  readonly #userAgent: string;
  readonly #secure: boolean;
  /** The HTTP proxy requests go through (kubeconfig proxy-url, else HTTPS_PROXY/HTTP_PROXY and NO_PROXY). */
  readonly #proxy: URL | undefined;
  /**
   * For a plain-http server behind an http proxy: requests go to the proxy, their target in absolute form
   * (`GET http://server/path`), as Go's transport sends them; no tunnel.
   */
  readonly #forwardProxy:
    { hostname: string; port: number; origin: string; authorization?: string } | undefined;
  #connections: Connections | undefined;
  /** The credentials #connectionsFor last checked: the same object needs no comparison of PEM strings. */
  #connectionsCredentials: Credentials | undefined;
  /** The last dynamic credentials and what #effective made of them, so unchanged ones cost nothing. */
  #lastDynamic: Credentials | undefined;
  #lastEffective: Credentials | undefined;
  /** The credentials #fixedHeaders were made for: unary requests' header lines that change only with them. */
  #headersCredentials: Credentials | undefined;
  #fixedHeaders: HeaderBlock | undefined;
  /** The same, per User-Agent of the work sending them (client/user-agent.ts), for the same credentials. */
  readonly #agentHeaders = new Map<string, HeaderBlock>();
  #closed = false;

  constructor(config: ClientConfig, options: TransportOptions) {
    this.#base = new URL(config.server);
    if (this.#base.protocol !== 'https:' && this.#base.protocol !== 'http:') {
      throw new Error(`server URL must be http or https: ${config.server}`);
    }
    this.#secure = this.#base.protocol === 'https:';
    // As urlToHttpOptions would derive them from the URL on every request.
    const { hostname, port, username, password } = this.#base;
    this.#hostname = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    this.#port = port === '' ? undefined : Number(port);
    this.#auth =
      username || password ? `${decodeURIComponent(username)}:${decodeURIComponent(password)}` : undefined;
    this.#prefix = this.#base.pathname.replace(/\/+$/, '');
    this.#config = config;
    // Static token, cert and key are merged in per request (#effective); a provider only adds to them.
    this.#provider = config.credentials ?? staticCredentials({});
    this.#options = options;
    this.#maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#userAgent = options.userAgent ?? USER_AGENT;
    this.#proxy = proxyFor(this.#base, config.proxyUrl, process.env);
    if (this.#proxy && !this.#secure && this.#proxy.protocol === 'http:') {
      const authorization = proxyAuthorization(this.#proxy);
      this.#forwardProxy = {
        hostname: this.#proxy.hostname.startsWith('[')
          ? this.#proxy.hostname.slice(1, -1)
          : this.#proxy.hostname,
        port: Number(this.#proxy.port || 80),
        origin: this.#base.origin,
        ...(authorization ? { authorization } : {}),
      };
    }
  }

  get limiter(): RateLimiter {
    return this.#options.limiter;
  }

  /** Sends a request and decodes the JSON answer; failures reject with a StatusError. */
  async json<T>(spec: HttpRequestSpec): Promise<T> {
    const response = await this.#exchange(spec, this.#sendUnary);
    if (!isSuccess(response.status)) throw this.#error(spec, response, response.body);
    if (response.body === '') return undefined as T;
    const value: unknown = JSON.parse(response.body);
    // client-go treats a failure Status as an error whatever the HTTP code said.
    if (isStatus(value) && value.status === 'Failure') throw new StatusError(value);
    return value as T;
  }

  /**
   * Sends a request and resolves with the response once a 2xx status arrived, its body not yet read: for
   * watches and streamed lists. The caller must consume or destroy the response.
   */
  async stream(spec: HttpRequestSpec): Promise<Exchange> {
    const answer = await this.#exchange(spec, this.#sendStreaming);
    if (!isSuccess(answer.status)) {
      const text = await readBody(answer.response).catch((err: unknown) => {
        throw spec.signal?.aborted ? spec.signal.reason : err;
      });
      throw this.#error(spec, answer, text);
    }
    return answer;
  }

  /** Closes every connection, watches included; later requests fail. */
  close(): void {
    this.#closed = true;
    this.#connections?.pool.close();
    this.#connections?.agent?.destroy();
    this.#connections = undefined;
  }

  /**
   * One request with its retries (rate limited, Retry-After, 401 refresh). Like fetch, an aborted request
   * rejects with the signal's reason, whatever step it was at.
   */
  async #exchange<A extends Answer>(spec: HttpRequestSpec, send: Send<A>): Promise<A> {
    try {
      return await this.#exchangeWithRetries(spec, send);
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw err;
    }
  }

  async #exchangeWithRetries<A extends Answer>(spec: HttpRequestSpec, send: Send<A>): Promise<A> {
    const path = this.#requestPath(spec);
    const verb = spec.verb ?? spec.method.toLowerCase();
    const resource = spec.target?.resource
      ? spec.target.group
        ? `${spec.target.resource}.${spec.target.group}`
        : spec.target.resource
      : '';
    const limiter = this.#options.limiter;
    let retries = 0;
    let refreshedAfter401 = false;
    for (;;) {
      if (this.#closed) throw new Error('the client is closed');
      // Without limiting there is nothing to wait for; skipping the await saves a turn per request.
      if (limiter.enabled) await limiter.take(spec.signal);
      const dynamic = await this.#provider.get(spec.signal);
      const started = performance.now();
      let answer: A;
      try {
        answer = await this.#send(send, spec, path, this.#effective(dynamic));
      } catch (err) {
        // A connection lost in the middle of a body still had an answer's status.
        const code = (err as { status?: number }).status ?? 0;
        this.#report({ verb, resource, code, durationMs: performance.now() - started });
        throw err;
      }
      const code = answer.status;
      this.#report({ verb, resource, code, durationMs: answer.headersAt - started });

      if (code === 401 && !refreshedAfter401) {
        refreshedAfter401 = true;
        if (await this.#refreshedAfter401(dynamic, answer, spec.signal)) continue;
      }
      const retryAfter =
        code === 429 || code >= 500 ? retryAfterSeconds(answer.header('retry-after')) : undefined;
      if (retryAfter !== undefined && retries < this.#maxRetries) {
        retries++;
        answer.discard?.();
        await sleep(retryAfter * 1000, undefined, spec.signal ? { signal: spec.signal } : {});
        continue;
      }
      return answer;
    }
  }

  /**
   * Expired exec or rotated file credentials: drops them and says whether fresh ones differ. client-go only
   * refreshes them for the next request; we also retry this one once, since every request we send can be
   * re-sent. The 401 answer is let go when it will not be returned.
   */
  async #refreshedAfter401(used: Credentials, answer: Answer, signal?: AbortSignal): Promise<boolean> {
    if (!this.#provider.invalidate) return false;
    this.#provider.invalidate(used);
    let fresh: Credentials;
    try {
      fresh = await this.#provider.get(signal);
    } catch (err) {
      answer.discard?.(); // the plugin's failure says more than the 401
      throw err;
    }
    if (fresh === used) return false;
    answer.discard?.();
    return true;
  }

  /**
   * Providers return the same object while credentials are unchanged, so the merge is done once per change.
   */
  #effective(dynamic: Credentials): Credentials {
    if (dynamic === this.#lastDynamic && this.#lastEffective) return this.#lastEffective;
    const effective = {
      token: dynamic.token ?? this.#config.token,
      cert: dynamic.cert ?? this.#config.cert,
      key: dynamic.key ?? this.#config.key,
    };
    this.#lastDynamic = dynamic;
    this.#lastEffective = effective;
    return effective;
  }

  /**
   * The request path with the server URL's path in front and the query after. What the URL parser would
   * make of it, without parsing a URL per request unless the path has characters it would encode.
   */
  #requestPath(spec: HttpRequestSpec): string {
    const path = this.#originPath(spec);
    return this.#forwardProxy ? this.#forwardProxy.origin + path : path;
  }

  #originPath(spec: HttpRequestSpec): string {
    const query = spec.query?.toString() ?? '';
    if (PLAIN_PATH.test(spec.path) && !DOT_SEGMENT.test(spec.path)) {
      return query ? `${this.#prefix}${spec.path}?${query}` : this.#prefix + spec.path;
    }
    const url = new URL(this.#base.href);
    url.pathname = this.#prefix + spec.path;
    url.search = query;
    return url.pathname + url.search;
  }

  #report(info: RequestInfo): void {
    try {
      this.#options.onRequest?.(info);
    } catch {
      // A metrics hook must not fail requests.
    }
  }

  /** One HTTP exchange; a request that met a stale pooled connection is sent again at once. */
  async #send<A extends Answer>(
    send: Send<A>,
    spec: HttpRequestSpec,
    path: string,
    credentials: Credentials,
  ): Promise<A> {
    try {
      return await send(spec, path, credentials);
    } catch (err) {
      const stale = (err as { staleSocket?: boolean }).staleSocket;
      if (!stale || spec.signal?.aborted) throw err;
      // Go's http.Transport does the same for a request on a reused connection the server closed while idle.
      return send(spec, path, credentials);
    }
  }

  /** A request whose answer is read whole, over the pool. */
  readonly #sendUnary: Send<HttpResponse> = (spec, path, credentials) => {
    // Checked here too: a request that waited for a token while close() ran must not open a new pool.
    if (this.#closed) return Promise.reject(new Error('the client is closed'));
    const pool = this.#connectionsFor(credentials).pool;
    const message = requestMessage(
      spec.method,
      path,
      this.#unaryHeaders(credentials),
      spec.accept ?? 'application/json',
      encodeBody(spec),
      spec.contentType ?? 'application/json',
    );
    return pool.request(message, spec.signal);
  };

  /**
   * Host, User-Agent, Connection and Authorization, as node:http sends them, made once per credentials (and
   * User-Agent of the work sending them).
   */
  #unaryHeaders(credentials: Credentials): HeaderBlock {
    const userAgent = currentUserAgent();
    if (credentials !== this.#headersCredentials) {
      this.#fixedHeaders = undefined;
      this.#agentHeaders.clear();
    }
    this.#headersCredentials = credentials;
    if (userAgent === undefined)
      return (this.#fixedHeaders ??= this.#headerBlock(credentials, this.#userAgent));
    let block = this.#agentHeaders.get(userAgent);
    if (!block) this.#agentHeaders.set(userAgent, (block = this.#headerBlock(credentials, userAgent)));
    return block;
  }

  #headerBlock(credentials: Credentials, userAgent: string): HeaderBlock {
    const headers: [string, string][] = [
      ['Host', this.#base.host],
      ['User-Agent', userAgent],
      ['Connection', 'keep-alive'],
    ];
    if (credentials.token) headers.push(['Authorization', `Bearer ${credentials.token}`]);
    else if (this.#auth !== undefined) {
      headers.push(['Authorization', `Basic ${Buffer.from(this.#auth).toString('base64')}`]);
    }
    if (this.#forwardProxy?.authorization) {
      headers.push(['Proxy-Authorization', this.#forwardProxy.authorization]);
    }
    return headerBlock(headers);
  }

  /** A request whose answer is streamed, over node:http; resolves once the response headers arrived. */
  readonly #sendStreaming: Send<StreamedAnswer> = (spec, path, credentials) => {
    const body = encodeBody(spec);
    const headers: Record<string, string> = {
      Accept: spec.accept ?? 'application/json',
      'User-Agent': currentUserAgent() ?? this.#userAgent,
    };
    if (credentials.token) headers.Authorization = `Bearer ${credentials.token}`;
    if (body !== undefined) {
      headers['Content-Type'] = spec.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body, 'utf8'));
    }
    if (this.#closed) return Promise.reject(new Error('the client is closed'));
    const agent = this.#agentFor(credentials);
    const send = this.#secure ? httpsRequest : nodeHttp.request;
    // Options rather than a URL: node would otherwise convert a URL into these on every request.
    const options: RequestOptions = {
      protocol: this.#base.protocol,
      hostname: this.#hostname,
      path,
      method: spec.method,
      headers,
      agent,
    };
    if (this.#port !== undefined) options.port = this.#port;
    if (this.#auth !== undefined) options.auth = this.#auth;
    if (this.#forwardProxy) {
      options.hostname = this.#forwardProxy.hostname;
      options.port = this.#forwardProxy.port;
      headers.Host = this.#base.host;
      if (this.#forwardProxy.authorization) headers['Proxy-Authorization'] = this.#forwardProxy.authorization;
    }
    if (spec.signal) options.signal = spec.signal;
    return new Promise((resolve, reject) => {
      const request = send(options);
      request.once('response', (response) => resolve(new StreamedAnswer(request, response)));
      // Kept for the request's whole life: destroying it later (abort, end of a watch) emits errors too.
      request.on('error', (err: NodeJS.ErrnoException) => {
        // A socket Node reused from its pool may have been closed by the server meanwhile.
        if (request.reusedSocket && err.code && STALE_CONNECTION_ERRORS.has(err.code)) {
          Object.assign(err, { staleSocket: true });
        }
        reject(err);
      });
      // A string body: node:http then prepends the header block to it and makes one socket write.
      request.end(body);
    });
  };

  /**
   * The connections for these credentials. A changed client certificate (an exec plugin rotated it) replaces
   * them and closes the old ones, as client-go's certificate rotation closes all connections.
   */
  #connectionsFor(credentials: Credentials): Connections {
    const current = this.#connections;
    if (current && credentials === this.#connectionsCredentials) return current;
    const cert = credentials.cert ? `${credentials.cert}\0${credentials.key ?? ''}` : undefined;
    this.#connectionsCredentials = credentials;
    if (current && current.cert === cert) return current;
    current?.pool.close();
    current?.agent?.destroy();
    // CA, certificate and key in one secure context made here, not as connection options: it spares parsing
    // the PEM again for every new connection, and http.Agent would otherwise name its connection pool by
    // concatenating such options, PEM text included, and build and look up that name for every request.
    const secureContext = this.#secure
      ? createSecureContext({
          ...(this.#config.ca ? { ca: this.#config.ca } : {}),
          ...(credentials.cert ? { cert: credentials.cert, key: credentials.key } : {}),
        })
      : undefined;
    const servername = this.#config.tlsServerName ?? (isIP(this.#hostname) ? undefined : this.#hostname);
    const forward = this.#forwardProxy;
    const pool = new ConnectionPool({
      host: forward?.hostname ?? this.#hostname,
      port: forward?.port ?? this.#port ?? (this.#secure ? 443 : 80),
      ...(this.#proxy && !forward ? { proxy: this.#proxy } : {}),
      ...(secureContext
        ? {
            tls: {
              secureContext,
              rejectUnauthorized: !this.#config.insecureSkipTlsVerify,
              ...(servername ? { servername } : {}),
            },
          }
        : {}),
    });
    this.#connections = { cert, pool, secureContext };
    return this.#connections;
  }

  #agentFor(credentials: Credentials): Agent {
    const connections = this.#connectionsFor(credentials);
    if (connections.agent) return connections.agent;
    const common = { keepAlive: true, keepAliveMsecs: 30_000 };
    const proxy = this.#proxy;
    if (connections.secureContext) {
      const options = {
        ...common,
        secureContext: connections.secureContext,
        rejectUnauthorized: !this.#config.insecureSkipTlsVerify,
        ...(this.#config.tlsServerName ? { servername: this.#config.tlsServerName } : {}),
      };
      connections.agent = proxy ? tunnellingHttpsAgent(proxy, options) : new HttpsAgent(options);
    } else {
      connections.agent =
        proxy && !this.#forwardProxy ? tunnellingHttpAgent(proxy, common) : new nodeHttp.Agent(common);
    }
    return connections.agent;
  }

  #error(spec: HttpRequestSpec, answer: Answer, text: string): StatusError {
    return errorFromResponse(
      answer.status,
      text,
      answer.header('content-type'),
      retryAfterSeconds(answer.header('retry-after')),
      { method: spec.method, ...spec.target },
    );
  }
}

function isSuccess(code: number): boolean {
  return code >= 200 && code < 300;
}

/** Retry-After in whole seconds, as client-go reads it (strconv.Atoi: HTTP dates are ignored). */
export function retryAfterSeconds(header: string | undefined): number | undefined {
  if (header === undefined || !/^[+-]?\d+$/.test(header.trim())) return undefined;
  return Math.max(0, Number(header.trim()));
}

export function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Most answers arrive in one chunk, which Buffer.concat would copy for nothing.
    response.once('end', () =>
      resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8')),
    );
    response.on('error', reject);
  });
}
