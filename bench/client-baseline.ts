import {
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
  request as httpRequest,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError, isStatus } from '@certkit/apimachinery';
import {
  type ClientConfig,
  type CredentialProvider,
  type Credentials,
  staticCredentials,
} from '../packages/runtime/src/client/config.ts';
import { errorFromResponse } from '../packages/runtime/src/client/errors.ts';
import {
  type HttpRequestSpec,
  type RequestInfo,
  type TransportOptions,
  USER_AGENT,
} from '../packages/runtime/src/client/transport.ts';
import type { RateLimiter } from '../packages/runtime/src/client/ratelimit.ts';

/**
 * The baseline of bench/client.ts: packages/runtime/src/client/transport.ts as it was before unary requests
 * moved from node:http to the own HTTP/1.1 pool (http1-pool.ts), kept unchanged but for its imports, so the
 * bench compares the two in one run. Every request, streamed or not, goes through node:http here.
 */

/** client-go's rest.Request maxRetries. */
const DEFAULT_MAX_RETRIES = 10;

type Agent = HttpAgent | HttpsAgent;

/** A socket Node reused from the pool may have been closed by the server meanwhile; these say it was. */
const STALE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * A path the URL parser would leave as it is: only characters it does not percent-encode, and no `.` or
 * `..` segment (which it would resolve). Paths built by resourcePath always are; others go through URL.
 */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;

interface Exchange {
  response: IncomingMessage;
  request: ClientRequest;
}

export class BaselineTransport {
  readonly #base: URL;
  /** What node:http would take from #base for every request, worked out once (see #sendOnce). */
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
  #agent: Agent | undefined;
  /** The client certificate the current agent presents; a new one means a new agent. */
  #agentCert: string | undefined;
  /** The credentials #agentFor last checked: the same object needs no comparison of PEM strings. */
  #agentCredentials: Credentials | undefined;
  /** The last dynamic credentials and what #effective made of them, so unchanged ones cost nothing. */
  #lastDynamic: Credentials | undefined;
  #lastEffective: Credentials | undefined;
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
  }

  get limiter(): RateLimiter {
    return this.#options.limiter;
  }

  /** Sends a request and decodes the JSON answer; failures reject with a StatusError. */
  async json<T>(spec: HttpRequestSpec): Promise<T> {
    let response: IncomingMessage;
    let text: string;
    // One try for both steps (rather than #exchange and a catch on the body) keeps the hot path to fewer
    // promises; like fetch, an aborted request rejects with the signal's reason whatever step it was at.
    try {
      response = (await this.#exchangeWithRetries(spec)).response;
      text = await readBody(response);
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw err;
    }
    if (!isSuccess(response.statusCode)) throw this.#error(spec, response, text);
    if (text === '') return undefined as T;
    const value: unknown = JSON.parse(text);
    // client-go treats a failure Status as an error whatever the HTTP code said.
    if (isStatus(value) && value.status === 'Failure') throw new StatusError(value);
    return value as T;
  }

  /**
   * Sends a request and resolves with the response once a 2xx status arrived, its body not yet read: for
   * watches and streamed lists. The caller must consume or destroy the response.
   */
  async stream(spec: HttpRequestSpec): Promise<Exchange> {
    const exchange = await this.#exchange(spec);
    if (!isSuccess(exchange.response.statusCode)) {
      const text = await readBody(exchange.response).catch((err: unknown) => {
        throw spec.signal?.aborted ? spec.signal.reason : err;
      });
      throw this.#error(spec, exchange.response, text);
    }
    return exchange;
  }

  /** Closes every connection, watches included; later requests fail. */
  close(): void {
    this.#closed = true;
    this.#agent?.destroy();
    this.#agent = undefined;
  }

  /** Like fetch, an aborted request rejects with the signal's reason, whatever step it was at. */
  async #exchange(spec: HttpRequestSpec): Promise<Exchange> {
    try {
      return await this.#exchangeWithRetries(spec);
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw err;
    }
  }

  async #exchangeWithRetries(spec: HttpRequestSpec): Promise<Exchange> {
    // A string rather than a Buffer: node:http then prepends the header block to it and makes one socket
    // write, where a Buffer body goes out as a writev of two chunks (which the TLS layer copies together).
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
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
      let exchange: Exchange;
      try {
        exchange = await this.#send(spec, path, body, this.#effective(dynamic));
      } catch (err) {
        this.#report({ verb, resource, code: 0, durationMs: performance.now() - started });
        throw err;
      }
      const code = exchange.response.statusCode ?? 0;
      this.#report({ verb, resource, code, durationMs: performance.now() - started });

      if (code === 401 && !refreshedAfter401) {
        refreshedAfter401 = true;
        if (await this.#refreshedAfter401(dynamic, exchange.response, spec.signal)) continue;
      }
      const retryAfter = code === 429 || code >= 500 ? retryAfterSeconds(exchange.response) : undefined;
      if (retryAfter !== undefined && retries < this.#maxRetries) {
        retries++;
        exchange.response.resume();
        await sleep(retryAfter * 1000, undefined, spec.signal ? { signal: spec.signal } : {});
        continue;
      }
      return exchange;
    }
  }

  /**
   * Expired exec or rotated file credentials: drops them and says whether fresh ones differ. client-go only
   * refreshes them for the next request; we also retry this one once, since every request we send can be
   * re-sent. The 401 response is drained when it will not be returned.
   */
  async #refreshedAfter401(
    used: Credentials,
    response: IncomingMessage,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (!this.#provider.invalidate) return false;
    this.#provider.invalidate(used);
    let fresh: Credentials;
    try {
      fresh = await this.#provider.get(signal);
    } catch (err) {
      response.resume(); // the plugin's failure says more than the 401
      throw err;
    }
    if (fresh === used) return false;
    response.resume();
    return true;
  }

  /** Providers return the same object while credentials are unchanged, so the merge is done once per change. */
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

  /** One HTTP exchange up to the response headers; a stale pooled socket is retried once at once. */
  async #send(
    spec: HttpRequestSpec,
    path: string,
    body: string | undefined,
    credentials: Credentials,
  ): Promise<Exchange> {
    try {
      return await this.#sendOnce(spec, path, body, credentials);
    } catch (err) {
      const stale = (err as { staleSocket?: boolean }).staleSocket;
      if (!stale || spec.signal?.aborted) throw err;
      // Go's http.Transport does the same for a request on a reused connection the server closed while idle.
      return this.#sendOnce(spec, path, body, credentials);
    }
  }

  #sendOnce(
    spec: HttpRequestSpec,
    path: string,
    body: string | undefined,
    credentials: Credentials,
  ): Promise<Exchange> {
    const headers: Record<string, string> = {
      Accept: spec.accept ?? 'application/json',
      'User-Agent': this.#userAgent,
    };
    if (credentials.token) headers.Authorization = `Bearer ${credentials.token}`;
    if (body !== undefined) {
      headers['Content-Type'] = spec.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body, 'utf8'));
    }
    // Checked here too: a request that waited for a token while close() ran must not open a new pool.
    if (this.#closed) return Promise.reject(new Error('the client is closed'));
    const agent = this.#agentFor(credentials);
    const send = this.#secure ? httpsRequest : httpRequest;
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
    if (spec.signal) options.signal = spec.signal;
    return new Promise((resolve, reject) => {
      const request = send(options);
      request.once('response', (response) => resolve({ response, request }));
      // Kept for the request's whole life: destroying it later (abort, end of a watch) emits errors too.
      request.on('error', (err: NodeJS.ErrnoException) => {
        if (request.reusedSocket && err.code && STALE_SOCKET_ERRORS.has(err.code)) {
          Object.assign(err, { staleSocket: true });
        }
        reject(err);
      });
      request.end(body);
    });
  }

  /**
   * The agent for these credentials. A changed client certificate (an exec plugin rotated it) replaces the
   * agent and closes the old one's connections, as client-go's certificate rotation closes all connections.
   */
  #agentFor(credentials: Credentials): Agent {
    if (this.#agent && credentials === this.#agentCredentials) return this.#agent;
    const certIdentity = credentials.cert ? `${credentials.cert}\0${credentials.key ?? ''}` : undefined;
    this.#agentCredentials = credentials;
    if (this.#agent && this.#agentCert === certIdentity) return this.#agent;
    this.#agent?.destroy();
    const common = { keepAlive: true, keepAliveMsecs: 30_000 };
    if (!this.#secure) {
      this.#agent = new HttpAgent(common);
    } else {
      // CA, certificate and key in one secure context made here, not as agent options: the agent names its
      // connection pool by concatenating such options, PEM text included, and builds and looks up that name
      // several times per request. It also spares parsing the PEM again for every new connection.
      const secureContext = createSecureContext({
        ...(this.#config.ca ? { ca: this.#config.ca } : {}),
        ...(credentials.cert ? { cert: credentials.cert, key: credentials.key } : {}),
      });
      this.#agent = new HttpsAgent({
        ...common,
        secureContext,
        rejectUnauthorized: !this.#config.insecureSkipTlsVerify,
        ...(this.#config.tlsServerName ? { servername: this.#config.tlsServerName } : {}),
      });
    }
    this.#agentCert = certIdentity;
    return this.#agent;
  }

  #error(spec: HttpRequestSpec, response: IncomingMessage, text: string): StatusError {
    return errorFromResponse(
      response.statusCode ?? 0,
      text,
      response.headers['content-type'],
      retryAfterSeconds(response),
      { method: spec.method, ...spec.target },
    );
  }
}

function isSuccess(code: number | undefined): boolean {
  return code !== undefined && code >= 200 && code < 300;
}

/** Retry-After in whole seconds, as client-go reads it (strconv.Atoi: HTTP dates are ignored). */
function retryAfterSeconds(response: IncomingMessage): number | undefined {
  const header = response.headers['retry-after'];
  if (typeof header !== 'string' || !/^[+-]?\d+$/.test(header.trim())) return undefined;
  return Math.max(0, Number(header.trim()));
}

function readBody(response: IncomingMessage): Promise<string> {
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
