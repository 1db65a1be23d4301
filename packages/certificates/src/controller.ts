import { isAlreadyExists, isConflict, isNotFound } from '@certkit/apimachinery';
import {
  builtins,
  defaultRegistry,
  enableOptimizingCompilers,
  type KubeClient,
  type Logger,
  Manager,
  type ManagerOptions,
  MetricsRegistry,
  optimizingCompilerFlags,
  releaseMemory,
  restClientMetricsHook,
} from '@certkit/runtime';
import { parseListenAddress } from './acme/http01/address.ts';
import { EmbeddedHTTP01Solver } from './acme/http01/embedded-solver.ts';
import { ACME_GROUP, ACME_VERSION } from './api/acme-constants.ts';
import { GROUP, VERSION } from './api/constants.ts';
import { certManagerCrds } from './api/crds.ts';
import { withLastAppliedConfiguration } from './api/last-applied.ts';
import type { ControllerContext, ControllerOptions } from './controllers/context.ts';
import { registerAcmeControllers } from './controllers/acme/index.ts';
import { registerCertificateRequestControllers } from './controllers/certificaterequests/index.ts';
import { registerCertificateControllers } from './controllers/certificates/index.ts';
import { registerCertificateSigningRequestControllers } from './controllers/certificatesigningrequests/index.ts';
import { createControllerContext, startContext } from './controllers/create-context.ts';
import { eventComponent } from './controllers/events.ts';
import { registerIssuerControllers } from './controllers/issuers/index.ts';
import { registerShimControllers, type ShimOptions } from './controllers/shims/index.ts';
import { registerAcmeClientMetrics } from './acme/client/metrics.ts';
import { registerCertificateMetrics } from './metrics.ts';
import { registerControllerSyncMetrics } from './controller-sync-metrics.ts';
import { IDLE_RELEASE_MS as PARSES_IDLE_RELEASE_MS } from './controllers/parsed.ts';
import { IDLE_RELEASE_MS as LIVE_READS_IDLE_RELEASE_MS } from './secrets/recent-live-reads.ts';
import { registerChallengeMetrics } from './controllers/acme/challenges/metrics.ts';
import packageJson from '../package.json' with { type: 'json' };

/**
 * The whole certificate controller in one runtime Manager: the shared caches (which every replica keeps warm),
 * and the certificate, certificate request, issuer and ACME Order/Challenge controllers (which only the leader
 * runs).
 */

/** The name of the leader Lease (cert-manager's is `cert-manager-controller`), in --leader-election-namespace. */
export const LEADER_ELECTION_ID = 'certkit-controller';

export interface CertificateControllerOptions extends Partial<ControllerOptions> {
  /** Leader election through a Lease in this namespace (absent: no election, for a single process). */
  leaderElection?: {
    namespace: string;
    id?: string;
    identity?: string;
    /** client-go's timings; the runtime's defaults (controller-runtime's: 15 s, 10 s, 2 s) when absent. */
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
    /** Called with the holder of the Lease whenever another is observed (this process's identity included). */
    onNewLeader?: (identity: string) => void;
  };
  /** Where /healthz, /readyz and /metrics are served; '0' disables (default 127.0.0.1:9402). */
  metricsBindAddress?: string;
  /** Stop the process on SIGTERM/SIGINT (the manager installs the handlers). */
  installSignalHandlers?: boolean;
  /**
   * Once a burst of reconciles has ended, collect V8's garbage with memory reduction so that the process
   * shrinks back (`releaseMemory`; docs/adr/1141). For a process of its own (`certkit controller`), not for one
   * that shares its heap with an API server or tests.
   */
  releaseMemoryAfterBurst?: boolean;
  /**
   * Turn V8's optimizing compilers on when a controller first has work (`enableOptimizingCompilers`;
   * docs/adr/1133), in a process started with them held back (`--no-turbofan --maglev-filter=-*`) so that
   * it stays smaller while idle. Does nothing in a process started otherwise.
   */
  enableOptimizingCompilersOnFirstWork?: boolean;
  /**
   * The controllers to run, by cert-manager's names (`enabledControllers` of cert-manager's `--controllers`);
   * absent: all of them.
   */
  controllers?: ReadonlySet<string>;
  /** The ingress-shim's and gateway-shim's settings (`--auto-certificate-annotations`, `--default-issuer-*`…). */
  shims?: Partial<ShimOptions>;
  log?: Logger;
  metrics?: MetricsRegistry;
  now?: () => Date;
}

export interface RunningController {
  manager: Manager;
  context: ControllerContext;
  /** The embedded HTTP-01 solver, when a listen address was given; `address` once it listens. */
  http01?: { solver: EmbeddedHTTP01Solver; address(): { host: string; port: number } | undefined };
  metrics: MetricsRegistry;
  /**
   * Resolves once the controller's listeners (the HTTP-01 solver's, then /metrics and the probes) are bound;
   * rejects with the listener's error (its Node error as `cause`, `code` EADDRINUSE, EACCES, …) when one
   * cannot be. What a command waits for before it says the controller is running.
   */
  listening: Promise<void>;
  /** Resolves when the manager stops; rejects with what stopped it. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** A client hook counting requests by verb, resource and code (the controller's API load, per resource). */
export function clientRequestMetrics(metrics: MetricsRegistry) {
  const requests = metrics.counter(
    'certkit_client_requests_total',
    'API requests made by the controller, by verb, resource and HTTP code.',
    ['verb', 'resource', 'code'],
  );
  const rest = restClientMetricsHook(metrics);
  return (info: { verb: string; resource: string; code: number; durationMs: number }) => {
    requests.inc({ verb: info.verb, resource: info.resource, code: String(info.code) });
    rest({ verb: info.verb, code: info.code });
  };
}

/**
 * How long after a burst's last reconcile memory is given back: once the parse caches and the recent live
 * reads have let go of what the burst parsed and read (they check every half of their idle time, so they have
 * by 1.5 × it), or the collection would find their keys and certificates still held.
 */
const AFTER_BURST_QUIET_MS = Math.max(PARSES_IDLE_RELEASE_MS, LIVE_READS_IDLE_RELEASE_MS) * 1.5 + 500;

/**
 * The User-Agent of each controller's requests: cert-manager builds a client per controller whose User-Agent
 * begins `cert-manager-<controller>/` (what it also names the controller's Events' source after), and kube
 * names the manager of an update or create without `fieldManager` after that prefix, so an object's
 * managedFields say `cert-manager-certificates-issuing`, not the process's client.
 */
export function controllerUserAgent(controller: string): string {
  return `${eventComponent(controller)}/v${packageJson.version} (${process.platform}/${process.arch}) certkit`;
}

export function startCertificateController(
  client: KubeClient,
  options: CertificateControllerOptions = {},
): RunningController {
  // The runtime's controllers and work queues report into its default registry: serve that one.
  const metrics = options.metrics ?? defaultRegistry;
  const secretHits = metrics.counter(
    'certkit_secret_getter_requests_total',
    'Secrets read by the controller, by where they came from: the cache, a live GET, or not found.',
    ['source'],
  );
  const context = createControllerContext(client, {
    ...options,
    secretMetrics: { hit: (source) => secretHits.inc({ source }) },
    acmeClientMetrics: registerAcmeClientMetrics(metrics),
  });
  registerCertificateMetrics(metrics, context);
  registerChallengeMetrics(metrics, context);

  const managerOptions: ManagerOptions = {
    metricsBindAddress: options.metricsBindAddress ?? '127.0.0.1:9402',
    installSignalHandlers: options.installSignalHandlers ?? false,
    metrics,
    log: options.log,
    onLeadershipLost: 'exit',
    controllerUserAgent,
  };
  if (options.releaseMemoryAfterBurst) {
    const log = options.log;
    managerOptions.afterBurst = {
      quietMs: AFTER_BURST_QUIET_MS,
      onBurstEnd: () => {
        const released = releaseMemory();
        log?.({
          level: 'info',
          msg: 'Released memory after a burst of reconciles',
          rssBeforeMB: Math.round(released.rssBeforeBytes / 1e5) / 10,
          rssAfterMB: Math.round(released.rssAfterBytes / 1e5) / 10,
          cpuMs: Math.round(released.cpuMs),
          mallocTrimmed: released.mallocTrimmed,
        });
      },
    };
  }
  if (options.enableOptimizingCompilersOnFirstWork) {
    const log = options.log;
    managerOptions.onFirstWork = () => {
      if (!enableOptimizingCompilers()) return;
      log?.({
        level: 'info',
        msg: "Turned V8's optimizing compilers on: first work queued",
        nodeFlags: optimizingCompilerFlags(),
      });
    };
  }
  if (options.leaderElection) {
    managerOptions.leaderElection = {
      client: client.resource(builtins.leases),
      id: options.leaderElection.id ?? LEADER_ELECTION_ID,
      namespace: options.leaderElection.namespace,
      identity: options.leaderElection.identity,
      leaseDurationMs: options.leaderElection.leaseDurationMs,
      renewDeadlineMs: options.leaderElection.renewDeadlineMs,
      retryPeriodMs: options.leaderElection.retryPeriodMs,
      onNewLeader: options.leaderElection.onNewLeader,
    };
  }
  const manager = new Manager(managerOptions);
  let synced = false;
  manager.add({
    needLeaderElection: false,
    async start(signal) {
      await startContext(context, signal);
      synced = true;
      if (!signal.aborted)
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      // The ACME clients' connections go with the controller.
      await context.acmeAccounts.close();
    },
    async waitForSync(signal) {
      while (!synced && !signal.aborted) await new Promise((r) => setTimeout(r, 50));
      return synced;
    },
  });
  const http01 = addEmbeddedHTTP01Solver(manager, context, options);
  const chosen = options.controllers;
  const enabled = (name: string) => chosen === undefined || chosen.has(name);
  const controllers = [
    ...registerIssuerControllers(context, enabled),
    ...registerCertificateRequestControllers(context, enabled),
    ...registerCertificateControllers(context, enabled),
    ...registerAcmeControllers(context, enabled),
    ...registerShimControllers(context, chosen, options.shims),
    // Off unless named, as cert-manager's are (the ExperimentalCertificateSigningRequestControllers gate names them).
    ...registerCertificateSigningRequestControllers(context, (name) => chosen?.has(name) ?? false),
  ];
  for (const controller of controllers) manager.add(controller);
  registerControllerSyncMetrics(
    metrics,
    controllers.map((c) => c.name),
  );
  // The HTTP-01 listener is bound before the manager starts, as the manager binds its probes server before its
  // runnables: a port already taken (or port 80 without the privilege) fails the start with the reason alone,
  // with no controller started and no "manager failing" line before it.
  const done = http01 ? http01.bound.then(() => manager.start()) : manager.start();
  const metricsServed = !['0', ''].includes(managerOptions.metricsBindAddress!);
  const listening = (async () => {
    await http01?.bound;
    // Undefined: /metrics is off, or its listener failed and the manager is stopping with that error.
    if ((await manager.listening) === undefined && metricsServed) await done;
  })();
  // Whoever awaits `done` sees its error; `listening` is for those who wait for the listeners only.
  listening.catch(() => {});
  return {
    manager,
    context,
    http01: http01 && { solver: http01.solver, address: http01.address },
    metrics,
    listening,
    done,
    async stop() {
      await manager.stop();
      // Stopped while the HTTP-01 listener was binding: the manager starts after this, sees the stop and ends.
      await done.catch(() => {});
    },
  };
}

/**
 * The embedded HTTP-01 listener, kept open by a runnable of every replica, leader or not. It binds at once
 * (`bound`, which the manager's start waits for) so that a port already taken (or port 80 without the
 * privilege) stops the process before anything else starts, with the reason.
 */
function addEmbeddedHTTP01Solver(
  manager: Manager,
  context: ControllerContext,
  options: CertificateControllerOptions,
): (NonNullable<RunningController['http01']> & { bound: Promise<unknown> }) | undefined {
  if (options.acmeHTTP01ListenAddress === undefined) return undefined;
  const address = parseListenAddress(options.acmeHTTP01ListenAddress);
  const solver = new EmbeddedHTTP01Solver({
    port: options.acmeHTTP01SelfCheckPort,
    nameservers: options.acmeHTTP01SolverNameservers,
    userAgent: 'certkit-controller',
  });
  context.http01Solver = solver;
  let bound: { host: string; port: number } | undefined;
  const listening = solver.listen(address).then(
    (listener) => {
      bound = listener.address;
      return listener;
    },
    (err: unknown) => {
      throw new Error(
        `--acme-http01-listen-address ${options.acmeHTTP01ListenAddress}: ${(err as Error).message}`,
        { cause: err },
      );
    },
  );
  manager.add({
    needLeaderElection: false,
    async start(signal) {
      const listener = await listening;
      if (!signal.aborted)
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await listener.close();
    },
  });
  return { solver, address: () => bound, bound: listening };
}

/** The resources the controller watches; without any of them its caches could never sync. */
const REQUIRED_RESOURCES = ['certificates', 'certificaterequests', 'issuers', 'clusterissuers'] as const;
const REQUIRED_ACME_RESOURCES = ['orders', 'challenges'] as const;

/**
 * Fails with one line when the cluster does not serve the cert-manager.io/v1 resources, instead of a
 * controller whose caches wait forever (all /readyz would ever say). Connection and authentication errors
 * surface here too, as the client words them.
 */
export async function requireCertManagerApi(client: KubeClient): Promise<void> {
  const install = 'install the CRDs first: kubectl apply -f deploy/crds.yaml';
  let served: string[];
  try {
    const list = await client.getJson<{ resources?: { name: string }[] }>(`/apis/${GROUP}/${VERSION}`);
    served = (list.resources ?? []).map((r) => r.name);
  } catch (err) {
    if (isNotFound(err)) throw new Error(`the cluster does not serve ${GROUP}/${VERSION}; ${install}`);
    throw err;
  }
  const missing = REQUIRED_RESOURCES.filter((name) => !served.includes(name));
  if (missing.length) {
    throw new Error(`the cluster does not serve ${GROUP}/${VERSION} ${missing.join(', ')}; ${install}`);
  }
  // The Order and Challenge informers would wait forever too.
  let acmeServed: string[] = [];
  try {
    const list = await client.getJson<{ resources?: { name: string }[] }>(
      `/apis/${ACME_GROUP}/${ACME_VERSION}`,
    );
    acmeServed = (list.resources ?? []).map((r) => r.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const acmeMissing = REQUIRED_ACME_RESOURCES.filter((name) => !acmeServed.includes(name));
  if (acmeMissing.length) {
    throw new Error(
      `the cluster does not serve ${ACME_GROUP}/${ACME_VERSION} ${acmeMissing.join(', ')}; ${install}`,
    );
  }
}

/** Creates (or updates) the cert-manager.io CRDs: what `certkit up` does for its own API server. */
export async function installCrds(client: KubeClient): Promise<void> {
  const crds = client.resource(builtins.customResourceDefinitions);
  // As `kubectl apply -f deploy/crds.yaml` would have left them (docs/adr/1865).
  for (const crd of certManagerCrds().map(withLastAppliedConfiguration)) {
    const name = crd.metadata!.name!;
    for (let attempt = 0; ; attempt++) {
      try {
        await crds.create(undefined, crd as never);
        break;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      try {
        const current = await crds.get(undefined, name);
        const annotations = { ...current.metadata?.annotations, ...crd.metadata?.annotations };
        await crds.update({ ...(crd as object), metadata: { ...current.metadata, annotations } } as never);
        break;
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }
}
