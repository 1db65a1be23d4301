import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionLimits } from '@certkit/apiserver/http/connections';
import { ApiServer, type ApiServerOptions } from '@certkit/apiserver/http/server';
import { ensureServingCertificates } from '@certkit/apiserver/security/certificates';
import { writeKubeconfig } from '@certkit/apiserver/security/kubeconfig';
import { ensureToken } from '@certkit/apiserver/security/token';
import { SqliteStorage } from '@certkit/apiserver/storage/sqlite';
import type { Storage } from '@certkit/apiserver/storage/types';
import type { WatchCacheOptions } from '@certkit/apiserver/watchcache/cache';

/**
 * A real API server for tests: HTTPS with a generated CA, bearer token and a kubeconfig, over SQLite in a
 * temporary directory, on a free loopback port. `restart()` stops and starts it on the same data.
 */
export interface TestServer {
  server: ApiServer;
  url: string;
  token: string;
  caCertPem: string;
  kubeconfigPath: string;
  dataDir: string;
  /** A request with the token and CA, JSON in and out. */
  fetch(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the body bytes as given (for malformed input). */
  rawBody?: string | Buffer;
  /** Omit the Authorization header. */
  anonymous?: boolean;
  /** Send the path as given: a URL string would have its dot segments resolved by the client. */
  pathAsIs?: boolean;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
  /** The body as received, for binary ones. */
  bytes: Buffer;
}

export interface TestServerOptions {
  /** Serve reads from watch caches (default true). */
  watchCache?: boolean;
  /** Watch cache history bounds, to make 410s reachable in tests. */
  maxHistory?: number;
  /** Other watch cache tuning (e.g. a shorter relist delay). */
  watchCacheOptions?: WatchCacheOptions;
  /** Fills storage before the server starts (e.g. thousands of objects for initialisation tests). */
  seed?: (storage: Storage) => Promise<void>;
  /** Opens the storage (default: SQLite in the data dir); called again on restart. */
  openStorage?: (dataDir: string) => Promise<Storage>;
  /** Wait for /readyz before returning (default true). */
  waitReady?: boolean;
  /** How long Events live after their last write (default 1 h). */
  eventTtlMs?: number;
  /** --max-requests-inflight and --max-mutating-requests-inflight (defaults 400 and 200). */
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  /** How long a list waits for a client that reads nothing before cutting it off (default 1 min). */
  listStallTimeoutMs?: number;
  /** How long a request body may take to arrive (default 1 min). */
  bodyTimeoutMs?: number;
  /** How long a request that is not a watch may take before its 504 (default 1 min; --request-timeout). */
  requestTimeoutMs?: number;
  /** Validating admission, as the CLI wires cert-manager's (ApiServerOptions.admission). */
  admission?: ApiServerOptions['admission'];
  /** Mutating admission on create, as the CLI wires cert-manager's (ApiServerOptions.admissionMutation). */
  admissionMutation?: ApiServerOptions['admissionMutation'];
  /** The server's log sink (default: errors to stderr). */
  log?: (entry: Record<string, unknown>) => void;
  /** Bounds on connections before they authenticate (short timeouts make them testable). */
  connectionLimits?: Partial<ConnectionLimits>;
  /** ServiceAccount tokens: the TokenRequest API and its tokens' authentication (ApiServerOptions'). */
  serviceAccountTokens?: ApiServerOptions['serviceAccountTokens'];
  /** More bearer tokens and their users (--token-auth-file), besides the admin token. */
  tokens?: ApiServerOptions['tokens'];
  /** --authorization-mode (default RBAC; the admin token is in system:masters). */
  authorizationMode?: ApiServerOptions['authorizationMode'];
  /** --service-cluster-ip-range and --service-node-port-range (ApiServerOptions). */
  serviceClusterIpRange?: string;
  serviceNodePortRange?: string;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'certkit-test-'));
  const certificates = await ensureServingCertificates(dataDir, ['127.0.0.1']);
  const token = await ensureToken(dataDir);
  const kubeconfigPath = join(dataDir, 'kubeconfig');
  const openStorage =
    options.openStorage ?? (async (dir: string) => SqliteStorage.open(join(dir, 'state.db')));
  let storage = await openStorage(dataDir);
  await options.seed?.(storage);
  const startServer = (port: number) =>
    ApiServer.start({
      storage,
      host: '127.0.0.1',
      port,
      tls: { cert: certificates.certPem, key: certificates.keyPem },
      token,
      tokens: options.tokens,
      authorizationMode: options.authorizationMode,
      watchCache: options.watchCache ?? true,
      eventTtlMs: options.eventTtlMs,
      maxRequestsInflight: options.maxRequestsInflight,
      maxMutatingRequestsInflight: options.maxMutatingRequestsInflight,
      listStallTimeoutMs: options.listStallTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      admission: options.admission,
      admissionMutation: options.admissionMutation,
      connectionLimits: options.connectionLimits,
      serviceAccountTokens: options.serviceAccountTokens,
      serviceClusterIpRange: options.serviceClusterIpRange,
      serviceNodePortRange: options.serviceNodePortRange,
      watchCacheOptions: {
        ...options.watchCacheOptions,
        ...(options.maxHistory ? { maxHistory: options.maxHistory, minHistory: 1 } : {}),
      },
      log:
        options.log ??
        ((e) => {
          if (e.level === 'error') console.error('apiserver:', e);
        }),
    });
  let server = await startServer(0);
  if (options.waitReady ?? true) await waitReady(server);
  const port = server.port;
  await writeKubeconfig(kubeconfigPath, { server: server.url, caCertPem: certificates.caCertPem, token });
  let agent = new Agent({ ca: certificates.caCertPem, keepAlive: true });

  const result: TestServer = {
    server,
    url: server.url,
    token,
    caCertPem: certificates.caCertPem,
    kubeconfigPath,
    dataDir,
    fetch(method, path, options = {}) {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
        if (!options.anonymous) headers.Authorization = `Bearer ${token}`;
        let body: string | Buffer | undefined = options.rawBody;
        if (body === undefined && options.body !== undefined) {
          body = JSON.stringify(options.body);
          headers['Content-Type'] ??= 'application/json';
        }
        // Node sends DELETE bodies without framing unless the length is given.
        if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
        const target = options.pathAsIs ? result.url : `${result.url}${path}`;
        const extra = options.pathAsIs ? { path } : {};
        const req = request(target, { method, headers, agent, ...extra }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const bytes = Buffer.concat(chunks);
            const text = bytes.toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, bytes });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    async restart() {
      await server.close();
      await storage.close();
      storage = await openStorage(dataDir);
      server = await startServer(port);
      await waitReady(server);
      result.server = server;
      // Pooled connections died with the old server.
      agent.destroy();
      agent = new Agent({ ca: certificates.caCertPem, keepAlive: true });
    },
    async close() {
      agent.destroy();
      await server.close();
      await storage.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return result;
}

/** Waits for the watch caches of the built-in resources, so tests start from a settled server. */
async function waitReady(server: ApiServer): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!server.ready) {
    if (Date.now() > deadline) throw new Error('watch caches not ready within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}
