import { advertisedAddress, ensureKubernetesService } from '../controllers/kubernetes-service.ts';
import { serveAggregatedDiscovery } from './aggregated-discovery.ts';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import {
  type FieldError,
  MetricsRegistry,
  newMethodNotAllowed,
  newNotFound,
  newUnauthorized,
  PROMETHEUS_CONTENT_TYPE,
  type StoredObject,
} from '@certkit/apimachinery';
import { AdmissionWebhooks } from '../admission/chain.ts';
import { endpointSliceResolver } from '../admission/service-resolver.ts';
import { CrdController } from '../crd/controller.ts';
import { GarbageCollector } from '../controllers/garbage-collector.ts';
import { EventTtlController } from '../controllers/event-ttl.ts';
import { NamespaceController } from '../controllers/namespaces.ts';
import { DefaultServiceAccountsController } from '../controllers/default-service-accounts.ts';
import { ServiceRangesRepair } from '../controllers/service-ranges-repair.ts';
import { serviceRanges } from '../registry/builtins/service-ranges.ts';
import { resourcePrefix } from '../registry/resource.ts';
import { Registry } from '../registry/registry.ts';
import { Authenticator } from '../security/authentication.ts';
import type { ServiceAccountTokenOptions } from '../security/serviceaccount/config.ts';
import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../security/serviceaccount/oidc.ts';
import { ServiceAccountTokens } from '../security/serviceaccount/tokens.ts';
import { handleTokenRequest, TOKEN_SUBRESOURCE } from './handlers/token-request.ts';
import { ISSUER_DISCOVERY_PATHS, serveIssuerDiscovery } from './issuer-discovery.ts';
import { ClusterRoleAggregator } from '../authorization/aggregation.ts';
import { authorizeRequest } from '../authorization/authorize-request.ts';
import {
  AlwaysAllowAuthorizer,
  type AuthorizationMode,
  type Authorizer,
  RbacAuthorizer,
} from '../authorization/authorizer.ts';
import { ensureBootstrapPolicy } from '../authorization/bootstrap-policy.ts';
import { EscalationCheck } from '../authorization/escalation.ts';
import { CertificateSigningAdmission } from '../authorization/certificate-signing-admission.ts';
import { runAsWriter } from '../authorization/writer-context.ts';
import { RbacIndex } from '../authorization/rbac-index.ts';
import { serveReviews } from '../authorization/reviews.ts';
import { type ServingTls, servingTlsOptions } from '../security/tls-policy.ts';
import { requestUser, setRequestUser, type UserInfo } from '../security/user.ts';
import type { Storage } from '../storage/types.ts';
import { coreVersions, group, groupList, resourceList } from './discovery.ts';
import { OpenApiDocuments } from './openapi.ts';
import { serveSwagger } from './openapi-v2.ts';
import { isWatchRequest, type ParsedPath, parseApiPath, type ResourceRequest } from './request-info.ts';
import { parseRequestTarget, type RequestTarget } from './request-target.ts';
import { handleResource, type ResourceContext } from './resources.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { WatchCacheOptions } from '../watchcache/cache.ts';
import { WatchCaches } from '../watchcache/caches.ts';
import { registerCacheMetrics } from '../watchcache/metrics.ts';
import { registerStorageMetrics } from '../storage/metrics.ts';
import { STORAGE_READINESS_CHECK, StorageReadiness } from '../watchcache/readiness.ts';
import { registerProcessMetrics } from '@certkit/apimachinery/process-metrics';
import { RequestMetrics } from './request-metrics.ts';
import { DEFAULT_INFLIGHT_LIMITS, InflightLimiter } from './inflight.ts';
import type { WatchCounters } from './watch.ts';
import { guardRequests } from './guard.ts';
import { answerClientErrors, MAX_HEADER_BYTES } from './client-errors.ts';
import { handlePipelinedInTurn } from './pipelining.ts';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  isLongRunning,
  mayBeLongRunning,
  refuseMalformedTimeout,
  requestTimeoutMs,
  withRequestDeadline,
} from './request-deadline.ts';
import { lingerOnClose } from './lingering-close.ts';
import { parseTlsConnectionsInJs } from './tls-parse-in-js.ts';
import {
  type ConnectionLimits,
  ConnectionGuard,
  DEFAULT_FIRST_REQUEST_TIMEOUT_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  defaultMaxUnauthenticatedConnections,
  HEADER_CHECK_INTERVAL_MS,
} from './connections.ts';
import { sendError, sendJson, sendJsonText } from './respond.ts';

export interface ApiServerOptions {
  storage: Storage;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /**
   * Serve HTTPS with this certificate (--tls-cert-file), and authenticate client certificates issued by
   * `clientCa` (--client-ca-file); plain HTTP without it (tests only).
   */
  tls?: ServingTls;
  /** certkit's generated admin bearer token. Without it, `tokens` and `tls.clientCa`: no authentication (tests only). */
  token?: string;
  /** Bearer tokens and their users, from kube-apiserver's --token-auth-file. */
  tokens?: Map<string, UserInfo>;
  /** ServiceAccount tokens: the TokenRequest API, their authentication, issuer discovery. None without. */
  serviceAccountTokens?: ServiceAccountTokenOptions;
  /** kube-apiserver's --authorization-mode for authenticated requests: RBAC (the default) or AlwaysAllow. */
  authorizationMode?: AuthorizationMode;
  /**
   * Bounds on HTTPS connections that have not authenticated: handshake deadline (default 10 s), time to the
   * first request (32 s), how many at once (1024, or a quarter of the open-file limit when lower).
   */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Structured log sink; quiet by default. */
  log?: (entry: Record<string, unknown>) => void;
  /** Serve reads and watches from per-resource watch caches (default true); false reads storage for everything. */
  watchCache?: boolean;
  /** Tuning of the watch caches (history bounds, relist delay). */
  watchCacheOptions?: WatchCacheOptions;
  /**
   * Validating admission for kinds the server does not know itself, as a webhook would do it (the CLI wires
   * cert-manager's validation here). Returns field errors; an empty list admits the object. Called on
   * creates, updates and status updates (`subresource` "status"), with the stored object as `old`.
   */
  admission?: (
    group: string,
    kind: string,
    obj: StoredObject,
    old: StoredObject | undefined,
    subresource?: string,
    user?: UserInfo,
  ) => FieldError[];
  /**
   * Mutating admission for kinds the server does not know itself, on create, as a mutating webhook would do
   * it (the CLI wires cert-manager's, which records a CertificateRequest's requester). Called with the
   * request's user (the impersonated one when there is one); writes without a user are not mutated.
   */
  admissionMutation?: (group: string, kind: string, obj: StoredObject, user: UserInfo) => void;
  /** How long /readyz waits for the built-in resources' caches at start (default 1 min; --storage-initialization-timeout). */
  storageInitializationTimeoutMs?: number;
  /** How long an Event lives after its last write (default 1 h; kube-apiserver's --event-ttl). */
  eventTtlMs?: number;
  /** Read-only requests served at once, beyond which 429 (default 400; 0 unlimited; --max-requests-inflight). */
  maxRequestsInflight?: number;
  /** Mutating requests served at once, beyond which 429 (default 200; 0 unlimited; --max-mutating-requests-inflight). */
  maxMutatingRequestsInflight?: number;
  /** How long a list being written waits for a client that reads nothing before closing its connection (1 min). */
  listStallTimeoutMs?: number;
  /** How long a request body may take to arrive before 504 and the connection closed (1 min). */
  bodyTimeoutMs?: number;
  /** How long a request that is not long-running may take before kube's 504 (default 1 min; --request-timeout). */
  requestTimeoutMs?: number;
  /** The CIDR Services take cluster IPs from (default 10.0.0.0/24; kube-apiserver's --service-cluster-ip-range). */
  serviceClusterIpRange?: string;
  /** The ports NodePort Services take node ports from (default 30000-32767; --service-node-port-range). */
  serviceNodePortRange?: string;
}

/** What `/version` reports: the Kubernetes API level certkit is compatible with. */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-certkit',
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '2026-11-21T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'node',
  platform: `${process.platform}/${process.arch}`,
};

/** The checks /healthz, /livez and /readyz report. */
const HEALTH_CHECKS = [
  'ping',
  'log',
  'etcd',
  'poststarthook/start-apiextensions-controllers',
  'poststarthook/crd-informer-synced',
  STORAGE_READINESS_CHECK,
];

/** Paths anyone may read, as kube-apiserver's system:public-info-viewer role allows. */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', ...ISSUER_DISCOVERY_PATHS]);
const isPublic = (path: string) =>
  // API paths, nearly every request, are never public: no set or pattern to consult for them.
  !path.startsWith('/api') && (PUBLIC_PATHS.has(path) || /^\/(healthz|livez|readyz)\//.test(path));

/**
 * The Kubernetes-compatible API server: HTTP(S) in front of the registry, plus the controllers kube runs
 * beside it (garbage collector, namespace lifecycle, CRD establishment and cleanup).
 */
export class ApiServer {
  readonly registry: Registry;
  readonly storage: Storage;
  private readonly options: ApiServerOptions;
  private readonly server: Server;
  /** What listens: the HTTP server itself, or for HTTPS the guard that hands it connections. */
  private readonly listener: NetServer;
  private readonly connections: ConnectionGuard | undefined;
  private readonly authenticator: Authenticator;
  private readonly serviceAccountTokens: ServiceAccountTokens | undefined;
  private readonly authorizer: Authorizer;
  private readonly rbac: RbacIndex;
  private readonly aggregator: ClusterRoleAggregator;
  private readonly escalation: EscalationCheck;
  private readonly certificateSigning: CertificateSigningAdmission;
  private readonly crds: CrdController;
  private readonly gc: GarbageCollector;
  private readonly namespaces: NamespaceController;
  private readonly defaultServiceAccounts: DefaultServiceAccountsController;
  private readonly eventTtl: EventTtlController;
  private readonly webhooks: AdmissionWebhooks;
  private readonly serviceRangesRepair: ServiceRangesRepair;
  private readonly log: (entry: Record<string, unknown>) => void;
  private address = '';
  readonly caches: WatchCaches;
  readonly metrics = new MetricsRegistry();
  private readonly requests = new RequestMetrics(this.metrics);
  private readonly storageReadiness: StorageReadiness;
  private readonly resourceContext: ResourceContext;
  private readonly inflight: InflightLimiter;
  private readonly openApi: OpenApiDocuments;

  private constructor(options: ApiServerOptions) {
    this.options = options;
    this.storage = options.storage;
    this.log = options.log ?? (() => {});
    this.registry = new Registry({
      storage: options.storage,
      serviceRanges: serviceRanges(
        options.storage,
        options.serviceClusterIpRange,
        options.serviceNodePortRange,
      ),
      admit: (def, obj, old, subresource, user) => {
        this.escalation.check(def, obj, old);
        this.certificateSigning.check(def, obj, old, subresource, user);
        return options.admission?.(def.group, def.kind, obj, old, subresource, user) ?? [];
      },
      mutate:
        options.admissionMutation &&
        ((def, obj, user) => options.admissionMutation!(def.group, def.kind, obj, user)),
    });
    const logError = (component: string) => (err: unknown) =>
      this.log({ level: 'error', logger: component, msg: err instanceof Error ? err.message : String(err) });
    this.crds = new CrdController(this.registry, options.storage);
    this.crds.onError = logError('crd-controller');
    this.gc = new GarbageCollector(this.registry, options.storage);
    this.gc.onError = logError('garbage-collector');
    this.namespaces = new NamespaceController(this.registry, options.storage);
    this.namespaces.onError = logError('namespace-controller');
    this.defaultServiceAccounts = new DefaultServiceAccountsController(this.registry, options.storage);
    this.defaultServiceAccounts.onError = logError('serviceaccounts-controller');
    this.eventTtl = new EventTtlController(this.registry, options.storage, options.eventTtlMs);
    this.eventTtl.onError = logError('event-ttl');
    this.serviceRangesRepair = new ServiceRangesRepair(
      options.storage,
      resourcePrefix({ group: '', resource: 'services' }),
    );
    this.serviceRangesRepair.onError = logError('service-ranges-repair');
    this.caches = new WatchCaches(this.registry, options.storage, {
      ...options.watchCacheOptions,
      enabled: options.watchCache ?? true,
    });
    this.storageReadiness = new StorageReadiness(
      () => this.caches.builtinsReady(),
      options.storageInitializationTimeoutMs ?? 60_000,
      () =>
        this.log({ level: 'warn', msg: 'Deadline exceeded while waiting for storage readiness... ignoring' }),
    );
    // The two dependencies that run upward, against the layering (storage <- registry <- watch caches and
    // controllers), wired here where both ends exist. The registry is built first because the caches and the
    // controllers are built on it, so it cannot hold them itself:
    // - a namespaced create asks whether its namespace exists and is not terminating; the answer comes from
    //   the namespaces' watch cache (cheap, every create asks), which watches the registry's own store;
    // - a write of a CRD must start serving it before the write is acknowledged: the CRD controller, which
    //   sits on the registry, is told of every write and calls Registry.installCrd back.
    this.registry.wire({
      getNamespace: (name) => this.caches.getNamespace(name),
      afterWrite: (def, obj) => this.crds.observeWrite(def, obj),
    });
    this.webhooks = new AdmissionWebhooks({
      getNamespace: (name) => this.caches.getNamespace(name),
      log: this.log,
    });
    this.registry.wireWebhooks(this.webhooks);
    registerCacheMetrics(this.metrics, this.caches);
    registerProcessMetrics(this.metrics);
    registerStorageMetrics(this.metrics, options.storage);
    this.inflight = new InflightLimiter(
      {
        maxRequestsInflight: options.maxRequestsInflight ?? DEFAULT_INFLIGHT_LIMITS.maxRequestsInflight,
        maxMutatingRequestsInflight:
          options.maxMutatingRequestsInflight ?? DEFAULT_INFLIGHT_LIMITS.maxMutatingRequestsInflight,
      },
      this.metrics,
    );
    this.openApi = new OpenApiDocuments(this.registry);
    this.serviceAccountTokens = options.serviceAccountTokens
      ? new ServiceAccountTokens(options.serviceAccountTokens, this.registry, this.caches)
      : undefined;
    const tokens = this.serviceAccountTokens;
    if (tokens) this.registry.serveSubresource('', 'serviceaccounts', TOKEN_SUBRESOURCE);
    this.resourceContext = {
      registry: this.registry,
      caches: this.caches,
      watchCounters: (def) => this.watchCounters(def),
      listStallTimeoutMs: options.listStallTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      subresources:
        tokens && new Map([['serviceaccounts/token', (verb) => handleTokenRequest(tokens, verb)]]),
    };
    this.authenticator = new Authenticator({
      adminToken: options.token,
      tokens: options.tokens,
      clientCertificates: !!options.tls?.clientCa,
      serviceAccountTokens: this.serviceAccountTokens?.authenticator,
    });
    this.rbac = new RbacIndex(this.registry, options.storage);
    this.authorizer =
      options.authorizationMode === 'AlwaysAllow'
        ? new AlwaysAllowAuthorizer()
        : new RbacAuthorizer(this.rbac);
    this.escalation = new EscalationCheck(this.authorizer, this.rbac);
    this.certificateSigning = new CertificateSigningAdmission(this.authorizer);
    this.aggregator = new ClusterRoleAggregator(this.registry, options.storage, this.rbac);
    this.aggregator.onError = logError('clusterrole-aggregation');
    serveReviews(this.registry, this.authorizer, this.rbac);
    // Pipelined requests of a connection run one at a time, as Go's server runs them (pipelining.ts).
    const handler = handlePipelinedInTurn(guardRequests((req, res) => this.handle(req, res), this.log));
    this.server = options.tls
      ? createHttpsServer(
          {
            ...servingTlsOptions(options.tls),
            maxHeaderSize: MAX_HEADER_BYTES,
            connectionsCheckingInterval: HEADER_CHECK_INTERVAL_MS,
          },
          handler,
        )
      : createHttpServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
    answerClientErrors(this.server);
    lingerOnClose(this.server);
    // `Expect: 100-continue` is answered when the body is read (readBody), as Go does, not by Node up front.
    this.server.on('checkContinue', handler);
    if (options.tls) {
      parseTlsConnectionsInJs(this.server);
      const limits = {
        handshakeTimeoutMs: DEFAULT_HANDSHAKE_TIMEOUT_MS,
        firstRequestTimeoutMs: DEFAULT_FIRST_REQUEST_TIMEOUT_MS,
        maxUnauthenticated: defaultMaxUnauthenticatedConnections(),
        ...options.connectionLimits,
      };
      this.connections = new ConnectionGuard(this.server, limits);
      // Every request's headers, not only the first's, within Go's ReadHeaderTimeout (slow-headers.e2e.test.ts).
      this.server.headersTimeout = limits.firstRequestTimeoutMs;
      this.listener = this.connections.listener;
      // The HTTP server tracks its connections (for its header timeouts, closeAllConnections) once it hears
      // it listens; it never listens itself here.
      this.listener.on('listening', () => this.server.emit('listening'));
    } else {
      this.listener = this.server;
    }
    // Watches are long-lived; Node's default request timeout would cut them.
    this.server.requestTimeout = 0;
    this.server.keepAliveTimeout = 65_000;
  }

  static async start(options: ApiServerOptions): Promise<ApiServer> {
    const server = new ApiServer(options);
    await server.crds.start();
    // Before the first request is authorised: the default roles exist and the authorizer has read them all.
    // Before the caches start too, so that serving begins while they initialise (KEP-4568), not after.
    await ensureBootstrapPolicy(server.registry);
    await server.rbac.start();
    // Caches initialise in the background: the server serves (KEP-4568 rules) while they do.
    server.caches.start();
    server.webhooks.start(server.registry, server.caches, server.storage);
    server.webhooks.setServiceResolver(endpointSliceResolver(server.registry, server.caches));
    server.storageReadiness.start();
    await server.namespaces.ensureDefaults();
    server.namespaces.start();
    server.defaultServiceAccounts.start();
    server.gc.start();
    server.eventTtl.start();
    server.aggregator.start();
    server.serviceRangesRepair.start();
    await new Promise<void>((resolve, reject) => {
      server.listener.once('error', reject);
      server.listener.listen(options.port ?? 6443, options.host ?? '127.0.0.1', () => {
        server.listener.off('error', reject);
        resolve();
      });
    }).catch(async (err: unknown) => {
      // A port in use: the controllers started above stop before the caller closes the storage under them
      // (they would log "storage is closed" under the one-line error the CLI prints).
      await server.close();
      throw err;
    });
    // Accepting fails when the process is out of file descriptors; unheard, that error would end the process.
    let lastAcceptError = 0;
    server.listener.on('error', (err) => {
      if (Date.now() - lastAcceptError < 1000) return;
      lastAcceptError = Date.now();
      server.log({ level: 'error', msg: 'accepting connections failed', err: err.message });
    });
    const addr = server.listener.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    server.address = `${host}:${addr.port}`;
    // As kube-apiserver's control plane reconciler: the `kubernetes` Service points at this server.
    await ensureKubernetesService(server.registry, advertisedAddress(options.host), addr.port).catch(
      (err: unknown) =>
        server.log({ level: 'error', component: 'kubernetes-service', msg: (err as Error).message }),
    );
    return server;
  }

  /** True once /readyz passes: the built-in resources' caches were Ready (or the initialisation timeout passed). */
  get ready(): boolean {
    return this.storageReadiness.done;
  }

  get port(): number {
    return (this.listener.address() as AddressInfo).port;
  }

  /** HTTPS connections that have not authenticated yet, handshakes included. */
  get unauthenticatedConnections(): number {
    return this.connections?.unauthenticatedCount ?? 0;
  }

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://${this.address}`;
  }

  async close(): Promise<void> {
    this.storageReadiness.stop();
    this.caches.stop();
    this.gc.stop();
    this.eventTtl.stop();
    this.aggregator.stop();
    this.rbac.stop();
    this.serviceRangesRepair.stop();
    this.namespaces.stop();
    this.defaultServiceAccounts.stop();
    this.crds.stop();
    this.webhooks.close();
    const closed = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    if (this.listener !== this.server) this.server.close();
    this.connections?.closeAll();
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    let url: RequestTarget | undefined;
    // The API path is parsed once, when routing needs it, and reused for the metrics below.
    let parsed: ParsedPath | undefined;
    const parse = (path: string) => (parsed ??= parseApiPath(path));
    try {
      url = parseRequestTarget(req.url ?? '/');
      const target = url;
      refuseMalformedTimeout(
        target.searchParams,
        () => describeRequest(req.method ?? 'GET', target, undefined).verb === 'watch',
      );
      const authenticating = this.authenticate(req, res, url.pathname);
      if (authenticating) await authenticating;
      this.authorize(req, url, parse);
      // After authentication, as kube's maxinflight filter: unauthenticated requests are refused before.
      this.inflight.admit(res, url.pathname, describeRequest(req.method ?? 'GET', url, parse(url.pathname)));
      await this.routeWithinDeadline(req, res, url, parse, started);
    } catch (err) {
      sendError(res, err, (e) =>
        this.log({
          level: 'error',
          msg: 'request failed',
          method: req.method,
          path: req.url,
          err: String((e as Error)?.stack ?? e),
        }),
      );
    } finally {
      const { verb, resource } = describeRequest(req.method ?? 'GET', url, parsed);
      this.requests.observe({
        method: req.method ?? 'GET',
        verb,
        resource,
        url,
        parsed,
        contentType: req.headers['content-type'],
        code: res.statusCode,
        seconds: (performance.now() - started) / 1000,
      });
      // The request log: kube-apiserver's httplog line, which it writes at klog verbosity 3 (`v`).
      this.log({
        level: 'debug',
        v: 3,
        msg: 'HTTP',
        verb,
        resource,
        path: req.url,
        user: requestUser(req)?.name,
        code: res.statusCode,
        ms: performance.now() - started,
      });
    }
  }

  /**
   * Records who sent the request; refuses one without valid credentials, except on the public paths. A promise
   * only when a credential takes asynchronous work to check (a ServiceAccount token not verified lately).
   */
  private authenticate(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void> {
    if (!this.authenticator.enabled) {
      this.connections?.authenticated(req.socket);
      return;
    }
    const user = this.authenticator.authenticate(req);
    if (user instanceof Promise) return user.then((u) => this.admit(req, res, path, u));
    this.admit(req, res, path, user);
  }

  private admit(req: IncomingMessage, res: ServerResponse, path: string, user: UserInfo | undefined): void {
    if (user) {
      setRequestUser(req, user);
      this.connections?.authenticated(req.socket);
    } else if (isPublic(path)) {
      this.connections?.servingAnonymous(req, res);
    } else {
      throw newUnauthorized();
    }
  }

  /**
   * routeAs under kube's request deadline (http/request-deadline.ts), counted from the request's arrival
   * (`started`), unless the request is long-running (a watch).
   */
  private routeWithinDeadline(
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestTarget,
    parse: (path: string) => ParsedPath,
    started: number,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    if (mayBeLongRunning(method, url) && isLongRunning(describeRequest(method, url, parse(url.pathname)))) {
      return this.routeAs(req, res, url, parse);
    }
    const timeoutMs = requestTimeoutMs(
      url.searchParams,
      this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    );
    return withRequestDeadline(
      res,
      started,
      timeoutMs,
      () => this.routeAs(req, res, url, parse),
      (err) =>
        this.log({ level: 'error', msg: 'post-timeout activity', method, path: req.url, err: String(err) }),
    );
  }

  /**
   * Routes the request; an RBAC write runs with its user at hand, for the escalation check deep in the store
   * (nothing else pays for the async context).
   */
  private routeAs(
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestTarget,
    parse: (path: string) => ParsedPath,
  ): Promise<void> {
    const user = requestUser(req);
    if (user && req.method !== 'GET' && url.pathname.startsWith('/apis/rbac.authorization.k8s.io/')) {
      return runAsWriter(user, () => this.route(req, res, url, parse));
    }
    return this.route(req, res, url, parse);
  }

  /** Impersonation and authorization of an authenticated request (anonymous ones reach public paths only). */
  private authorize(req: IncomingMessage, url: RequestTarget, parse: (path: string) => ParsedPath): void {
    const user = requestUser(req);
    if (!user) return;
    const acting = authorizeRequest(req, user, url, parse(url.pathname), this.authorizer);
    if (acting !== user) setRequestUser(req, acting);
  }

  private async route(
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestTarget,
    parse: (path: string) => ParsedPath,
  ): Promise<void> {
    // API paths never end in a slash: they skip the expression.
    const path = (url.pathname.endsWith('/') ? url.pathname.replace(/\/+$/, '') : url.pathname) || '/';
    switch (path) {
      case '/healthz':
      case '/livez':
      case '/readyz':
        return this.health(res, path, url.searchParams.has('verbose'));
      // /version and /api are go-restful routes for GET alone in kube-apiserver, so other methods get its
      // 405; /apis and /openapi/* are plain handlers there (the aggregator's, kube-openapi's) that answer any
      // method, as here.
      case '/version':
        if (req.method !== 'GET') throw newMethodNotAllowed();
        return sendJson(res, 200, VERSION_INFO);
      case '/api':
        if (req.method !== 'GET') throw newMethodNotAllowed();
        if (serveAggregatedDiscovery(this.registry, req, res, 'core')) return;
        return sendJson(res, 200, coreVersions(this.address), { Vary: 'Accept' });
      case '/apis':
        if (serveAggregatedDiscovery(this.registry, req, res, 'apis')) return;
        return sendJson(res, 200, groupList(this.registry), { Vary: 'Accept' });
      case '/openapi/v3':
        return sendJson(res, 200, await this.openApi.root());
      case '/openapi/v2':
        return serveSwagger(req, res, await this.openApi.swagger());
      case OPENID_CONFIGURATION_PATH:
      case JWKS_PATH:
        return serveIssuerDiscovery(req, res, path, this.serviceAccountTokens, `${this.url}${JWKS_PATH}`);
      case '/metrics':
        res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE });
        res.end(await this.metrics.scrape());
        return;
    }
    const check = /^\/(healthz|livez|readyz)\/(.+)$/.exec(path);
    if (check) return this.singleCheck(res, `/${check[1]}`, check[2]);
    if (path.startsWith('/openapi/v3/')) {
      const doc = await this.openApi.groupVersion(path.slice('/openapi/v3/'.length));
      if (!doc) throw pathNotFound();
      return sendJsonText(res, 200, doc.text);
    }
    // Trailing slashes make no difference to the parse (empty segments are skipped).
    const parsed = parse(path);
    if (parsed.kind === 'resource') {
      return handleResource(this.resourceContext, req, res, parsed.request, url.searchParams);
    }
    if (req.method !== 'GET') throw newMethodNotAllowed();
    if (parsed.kind === 'groupVersion') {
      const list = resourceList(this.registry, parsed.group, parsed.version);
      if (!list) throw pathNotFound();
      return sendJson(res, 200, list);
    }
    if (parsed.kind === 'group') {
      const g = group(this.registry, parsed.group);
      if (!g) throw pathNotFound();
      return sendJson(res, 200, g);
    }
    throw pathNotFound();
  }

  private readonly watchers = this.metrics.counter(
    'apiserver_watch_requests_total',
    'Watch streams opened, by resource.',
    ['resource'],
  );

  private watchCounters(def: ResourceDefinition): WatchCounters {
    const resource = def.group ? `${def.resource}.${def.group}` : def.resource;
    return {
      opened: () => this.watchers.inc({ resource }),
      closed: () => {},
    };
  }

  /** Results of every check: /readyz adds storage readiness, which only it waits for (a post-start hook). */
  private checkResults(path: string): [string, boolean][] {
    return HEALTH_CHECKS.map((name) => [
      name,
      name === STORAGE_READINESS_CHECK && path === '/readyz' ? this.storageReadiness.done : true,
    ]);
  }

  /** `/readyz/ping` and friends: one check by name, as kube-apiserver serves them. */
  private singleCheck(res: ServerResponse, path: string, name: string): void {
    const result = this.checkResults(path).find(([n]) => n === name);
    if (!result) throw pathNotFound();
    writeHealth(res, result[1], result[1] ? 'ok' : `internal server error: ${name} not finished\n`);
  }

  private health(res: ServerResponse, path: string, verbose: boolean): void {
    const results = this.checkResults(path);
    const healthy = results.every(([, ok]) => ok);
    if (healthy && !verbose) {
      writeHealth(res, true, 'ok');
      return;
    }
    const lines = results.map(([name, ok]) => (ok ? `[+]${name} ok` : `[-]${name} failed: reason withheld`));
    const verdict = healthy ? `${path.slice(1)} check passed` : `${path.slice(1)} check failed`;
    writeHealth(res, healthy, `${lines.join('\n')}\n${verdict}\n`);
  }
}

function writeHealth(res: ServerResponse, ok: boolean, body: string): void {
  res.writeHead(ok ? 200 : 500, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}

/** The verb and resource of a request, for metrics and logs, as kube-apiserver's RequestInfo names them. */
function describeRequest(
  method: string,
  url: RequestTarget | undefined,
  parsedPath: ParsedPath | undefined,
): { verb: string; resource: string; subresource?: string } {
  let parsed = parsedPath;
  try {
    parsed ??= url ? parseApiPath(url.pathname) : undefined;
  } catch {
    // An undecodable path was answered with a 400 already; it names no resource.
  }
  if (parsed?.kind !== 'resource') return { verb: method.toLowerCase(), resource: '' };
  const r = parsed.request;
  const resource =
    (r.group ? `${r.resource}.${r.group}` : r.resource) + (r.subresource ? `/${r.subresource}` : '');
  return { verb: resourceVerb(method, r, url!), resource, subresource: r.subresource };
}

function resourceVerb(method: string, r: ResourceRequest, url: RequestTarget): string {
  switch (method) {
    case 'GET':
      return isWatchRequest(r, url.searchParams) ? 'watch' : r.name ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return r.name ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

function pathNotFound(): Error {
  const err = newNotFound({ group: '', resource: '' }, '');
  err.status.message = 'the server could not find the requested resource';
  err.status.details = {};
  return err;
}
