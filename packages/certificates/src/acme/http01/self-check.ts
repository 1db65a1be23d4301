/**
 * cert-manager's HTTP-01 self-check (pkg/issuer/acme/http/http.go Check and testReachability): GET
 * http://<dnsName>/.well-known/acme-challenge/<token> five times, two seconds apart, each time expecting
 * 200 and exactly the key authorization; redirects are followed to any host, port or scheme (HTTPS
 * targets unverified, as ACME validators do), up to ten, within ten seconds per attempt. The first request
 * goes to port 80 unless a self-check port is configured (tests, port-forwarded setups), and names are
 * resolved through the configured nameservers when there are any. Unlike upstream, proxies from the
 * environment are not used: a proxy would answer for the self-check what the ACME server cannot see.
 *
 * Given the listener's `LocalAnswers`, each GET carries an id the controller's own listener marks when it
 * answers: while every pass so far was answered by this process, the next one follows at once rather than
 * 2 s later, since an answer held in this process's memory has nothing left to propagate (ADR 1011), and
 * those back-to-back passes share one kept-alive connection (ADR 1014); every other server gets upstream's one
 * connection per request.
 */

import { Resolver } from 'node:dns';
import type { Agent, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeHttp } from '@certkit/runtime/client/node-http';
import { type LocalAnswers, SELF_CHECK_ID_HEADER } from './local-answers.ts';
import { HTTP01_CHALLENGE_PATH } from './solver.ts';

export interface SelfCheckOptions {
  /** Port of the first request; 80 (cert-manager) unless --acme-http01-self-check-port says otherwise. */
  port?: number;
  /** `ip:port` servers for every name lookup (--acme-http01-solver-nameservers); the system's when empty. */
  nameservers?: readonly string[];
  /**
   * The lookup for those servers, made once (`nameserverLookup`) and passed to every check: one c-ares channel
   * and its socket for all of them, where one per check made DNS the most of the self-check's CPU (bench:acme).
   */
  lookup?: LookupFunction;
  userAgent?: string;
  /** The controller's own listener's record of the self-check requests it answered (ADR 1011). */
  localAnswers?: LocalAnswers;
  /**
   * With `localAnswers`: a keep-alive Agent (`ownListenerAgent`) whose connections carry the passes the
   * controller's own listener answers, so that back-to-back passes reuse one connection. A connection whose
   * answer came from anywhere else is closed after it, so no other server ever sees one reused.
   */
  agent?: Agent;
  /** Consecutive passes needed (5 upstream) and the pause between them (2 s upstream). */
  requiredPasses?: number;
  intervalMs?: number;
  /** One attempt, redirects included (10 s upstream). */
  attemptTimeoutMs?: number;
  signal?: AbortSignal;
}

export const SELF_CHECK_DEFAULTS = {
  port: 80,
  requiredPasses: 5,
  intervalMs: 2_000,
  attemptTimeoutMs: 10_000,
  maxRedirects: 10,
  /** The most of a response body that is read and compared. */
  maxBodyBytes: 1024 * 1024,
  /** Each DNS query to a configured nameserver (the 3 s dial timeout upstream). */
  lookupTimeoutMs: 3_000,
  /** The longest a name's addresses are kept (less when their TTL is shorter). */
  lookupCacheMs: 1_000,
} as const;

/**
 * The Agent for `SelfCheckOptions.agent`: connections kept between requests, and dropped after 1 s idle,
 * well within the listener's 5 s keep-alive, so that a pooled connection is never one the listener is
 * closing at the same moment.
 */
export function ownListenerAgent(): Agent {
  return new nodeHttp.Agent({ keepAlive: true, timeout: 1_000 });
}

/** The URL the self-check starts from (IPv6 literals bracketed, the port only when not 80). */
export function challengeUrl(
  dnsName: string,
  token: string,
  port: number = SELF_CHECK_DEFAULTS.port,
): string {
  const host = isIP(dnsName) === 6 ? `[${dnsName}]` : dnsName;
  return `http://${host}${port === 80 ? '' : `:${port}`}${HTTP01_CHALLENGE_PATH}${token}`;
}

/**
 * A lookup for node:http that asks only `nameservers` (A and AAAA), as the Go dialer with a custom
 * resolver does. Names that resolve to nothing fail with ENOTFOUND.
 *
 * Answers are kept for their TTL, at most `SELF_CHECK_DEFAULTS.lookupCacheMs` (1 s), as any caching resolver
 * between the controller and the ACME server would keep them: the passes the controller's own listener
 * answers run back to back within milliseconds (ADR 1011), and asking BIND the same two questions for each
 * of the five was the self-check's largest CPU cost after the connections (bench:acme). Paced passes are
 * 2 s apart and ask again; failed lookups are not kept.
 */
export function nameserverLookup(
  nameservers: readonly string[],
  now: () => number = Date.now,
): LookupFunction {
  const resolver = new Resolver({ timeout: SELF_CHECK_DEFAULTS.lookupTimeoutMs, tries: 1 });
  resolver.setServers([...nameservers]);
  const cache = new TtlCache<{ address: string; family: number }[]>(now);
  /** A family's records; `noData` when the server said the name has none of that type (ENODATA). */
  const ask = (family: 4 | 6, hostname: string) =>
    new Promise<{ records: { address: string; family: number; ttl: number }[]; noData: boolean }>((done) => {
      const callback = (err: NodeJS.ErrnoException | null, records: { address: string; ttl: number }[]) =>
        done(
          err
            ? { records: [], noData: err.code === 'ENODATA' }
            : { records: records.map(({ address, ttl }) => ({ address, family, ttl })), noData: false },
        );
      if (family === 4) resolver.resolve4(hostname, { ttl: true }, callback);
      else resolver.resolve6(hostname, { ttl: true }, callback);
    });
  const resolve = async (family: 4 | 6, hostname: string) => {
    const key = `${family} ${hostname}`;
    const cached = cache.get(key);
    if (cached) return { key, addresses: cached, noData: false };
    const { records, noData } = await ask(family, hostname);
    const addresses = records.map(({ address }) => ({ address, family }));
    if (records.length > 0) {
      const ttlMs = Math.min(...records.map((r) => r.ttl)) * 1000;
      cache.set(key, addresses, Math.min(ttlMs, SELF_CHECK_DEFAULTS.lookupCacheMs));
    }
    return { key, addresses, noData };
  };
  return (hostname, options, callback) => {
    const family =
      typeof options === 'object' && options !== null ? (options as { family?: number }).family : 0;
    const all =
      typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    const none = Promise.resolve({ key: '', addresses: [], noData: false });
    void Promise.all([
      family === 6 ? none : resolve(4, hostname),
      family === 4 ? none : resolve(6, hostname),
    ]).then(([v4, v6]) => {
      const addresses = [...v4.addresses, ...v6.addresses];
      if (addresses.length === 0) {
        const err = Object.assign(new Error(`lookup ${hostname} on ${nameservers.join(',')}: no such host`), {
          code: 'ENOTFOUND',
        });
        (callback as (e: Error) => void)(err);
        return;
      }
      // A name with addresses of one family only: the other family's "none" (ENODATA) is an answer too, kept
      // 1 s (its negative TTL is not given to us), or every pass would ask for the AAAA records again (bench:acme:
      // 6 queries per Challenge instead of 2). A name with no addresses at all is a failure, never kept.
      for (const { key, noData } of [v4, v6]) {
        if (noData) cache.set(key, [], SELF_CHECK_DEFAULTS.lookupCacheMs);
      }
      if (all) {
        (callback as (e: null, a: typeof addresses) => void)(null, addresses);
      } else {
        callback(null, addresses[0].address, addresses[0].family);
      }
    });
  };
}

/** Values kept until their own deadline; expired ones are dropped when read or when the map grows. */
class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const now = this.#now();
    // Bounded by what expires within a second: names of Challenges checked in the last second.
    if (this.#entries.size >= 1024)
      for (const [k, e] of this.#entries) if (e.expires <= now) this.#entries.delete(k);
    this.#entries.set(key, { value, expires: now + ttlMs });
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface Response {
  status: number;
  location?: string;
  body: Buffer;
}

function get(
  url: URL,
  options: SelfCheckOptions,
  lookup: LookupFunction | undefined,
  signal: AbortSignal,
  id: string | undefined,
) {
  return new Promise<Response>((resolve, reject) => {
    const https = url.protocol === 'https:';
    // Kept alive only towards the controller's own listener (below); otherwise one request per connection,
    // keep-alive off, as upstream.
    const agent = !https && id !== undefined ? options.agent : undefined;
    const headers: Record<string, string> = { 'User-Agent': options.userAgent ?? 'certkit' };
    if (!agent) headers.Connection = 'close';
    if (id !== undefined) headers[SELF_CHECK_ID_HEADER] = id;
    const req = (https ? httpsRequest : nodeHttp.request)(url, {
      method: 'GET',
      agent: agent ?? false,
      headers,
      lookup,
      signal,
      // A redirect to HTTPS is followed without verifying the certificate: it is the one being obtained.
      ...(https ? { rejectUnauthorized: false } : {}),
    });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      // The listener marks its answer before sending it: an answer from anywhere else closes the connection
      // once read (the socket is taken here: node:http detaches it from the response when it frees it).
      const socket = res.socket;
      if (agent && !options.localAnswers!.isAnswered(id!)) res.once('end', () => socket.destroy());
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size >= SELF_CHECK_DEFAULTS.maxBodyBytes) return;
        chunks.push(chunk.subarray(0, SELF_CHECK_DEFAULTS.maxBodyBytes - size));
        size += chunk.length;
      });
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks) }),
      );
    });
    req.end();
  });
}

/** One attempt: the GET and its redirects, compared with the key. True when this process's listener answered. */
async function attempt(
  start: string,
  key: string,
  options: SelfCheckOptions,
  lookup: LookupFunction | undefined,
): Promise<boolean> {
  const timeout = AbortSignal.timeout(options.attemptTimeoutMs ?? SELF_CHECK_DEFAULTS.attemptTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url = new URL(start);
  let response: Response;
  const id = options.localAnswers?.issue();
  let answeredHere = false;
  try {
    for (let redirects = 0; ; redirects++) {
      response = await get(url, options, lookup, signal, id);
      if (!REDIRECTS.has(response.status) || response.location === undefined) break;
      if (redirects === SELF_CHECK_DEFAULTS.maxRedirects) throw new Error('stopped after 10 redirects');
      url = new URL(response.location, url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new Error(`unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`);
      }
    }
  } catch (err) {
    const reason = signal.aborted && timeout.aborted ? 'timeout awaiting response' : (err as Error).message;
    throw new Error(`failed to perform self check GET request '${start}': ${reason}`);
  } finally {
    if (id !== undefined) answeredHere = options.localAnswers!.take(id);
  }
  if (response.status !== 200) throw new Error(`wrong status code '${response.status}', expected '200'`);
  // The body is kept out of the error: it could be anything a stranger's server sends.
  if (response.body.toString('utf8') !== key) {
    throw new Error(`did not get expected response ${JSON.stringify(key)} when querying endpoint`);
  }
  return answeredHere;
}

export interface SelfCheckResult {
  /** Every pass was answered by this process's own listener (only known when given `localAnswers`). */
  answeredHere: boolean;
}

/**
 * Resolves once every required pass saw the key; rejects with the first failure's reason. Passes are
 * `intervalMs` apart, except while every one so far was answered by this process's listener.
 */
export async function selfCheck(
  challenge: { dnsName: string; token: string; key: string },
  options: SelfCheckOptions = {},
): Promise<SelfCheckResult> {
  const url = challengeUrl(challenge.dnsName, challenge.token, options.port ?? SELF_CHECK_DEFAULTS.port);
  const lookup =
    options.lookup ?? (options.nameservers?.length ? nameserverLookup(options.nameservers) : undefined);
  const passes = options.requiredPasses ?? SELF_CHECK_DEFAULTS.requiredPasses;
  let answeredHere = true;
  for (let i = 0; i < passes; i++) {
    answeredHere = (await attempt(url, challenge.key, options, lookup)) && answeredHere;
    if (i < passes - 1 && !answeredHere)
      await sleep(options.intervalMs ?? SELF_CHECK_DEFAULTS.intervalMs, undefined, {
        signal: options.signal,
      });
  }
  return { answeredHere };
}
