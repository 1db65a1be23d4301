import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { ResourceClient } from '../client/types.ts';
import { LeaderElector, type Lease } from './leader-election.ts';
import { describeError, jsonLogger, type Logger } from '../log.ts';
import { BurstEndWatch, type BurstEndOptions, type ReconcileActivity } from './burst-end.ts';
import { Controller } from './controller.ts';
import { FirstWorkWatch } from './first-work.ts';
import { defaultRegistry, leaderElectionGauge, type MetricsRegistry } from './metrics.ts';
import { parseBindAddress, startProbeServer, type Check, type ProbeServer } from './probes.ts';

/**
 * controller-runtime's manager (`pkg/manager/internal.go`): owns runnables and runs them in the right
 * order, with the right lifetime.
 *
 * Start: probes server → runnables that need no leader (caches) → wait for cache sync → campaign (if
 * leader election is on) → leader runnables (controllers) while leading.
 * Stop (stop(), SIGTERM/SIGINT, or a failure): leader runnables first, waiting for in-flight reconciles →
 * leader election (released, if configured) → caches → probes server. Caches stop after controllers so a
 * controller never reads a cache that has gone away.
 */

export interface Runnable {
  /** Runs until `signal` aborts; resolves once stopped. A rejection stops the manager with that error. */
  start(signal: AbortSignal): Promise<void>;
  /** For caches: resolves true once synced, false if it gave up (e.g. `signal` aborted). */
  waitForSync?(signal: AbortSignal): Promise<boolean>;
  /** The same under controller-runtime's name, which cache/ uses; either is accepted. */
  waitForCacheSync?(signal: AbortSignal): Promise<boolean>;
  /**
   * Whether it may only run while this manager leads. Default: false for runnables that can sync
   * (caches serve every replica), true otherwise (as controller-runtime treats runnables that do not say).
   */
  needLeaderElection?: boolean;
}

/** Leader election of a Manager: which Lease, in which namespace, as which identity, with which timings. */
export interface ManagerLeaderElectionOptions {
  /** A client for coordination.k8s.io/v1 leases. */
  client: ResourceClient<Lease>;
  /** The Lease's name (controller-runtime's LeaderElectionID). */
  id: string;
  /** Default: the in-cluster service account's namespace. */
  namespace?: string;
  /** Default `<hostname>_<uuid>`, as controller-runtime. */
  identity?: string;
  /** Defaults 15 s / 10 s / 2 s (controller-runtime's). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up on clean stop (controller-runtime's LeaderElectionReleaseOnCancel). Default false. */
  releaseOnCancel?: boolean;
  /**
   * Called with the holder's identity whenever another holder of the lease is observed, this candidate
   * included (client-go's OnNewLeader): a command can say that it stands by while someone else leads.
   */
  onNewLeader?: (identity: string) => void;
}

/** Options of a Manager: leader election, probes and metrics address, timeouts, signal handling, logging. */
export interface ManagerOptions {
  /**
   * The User-Agent each added Controller's requests carry, by controller name, unless the Controller has its
   * own: what a process with one client per controller sends (cert-manager's `cert-manager-<controller>/…`).
   */
  controllerUserAgent?: (controllerName: string) => string;
  /** Off when absent: every runnable starts once caches are synced. */
  leaderElection?: ManagerLeaderElectionOptions;
  /**
   * What losing the lease does. `exit` (default, as controller-runtime whose main exits on the error):
   * exit the process with status 1 at once, since another replica is about to lead. `stop`: stop every
   * runnable and reject `start()` with `leader election lost`.
   */
  onLeadershipLost?: 'exit' | 'stop';
  /** Default 2 minutes (controller-runtime's CacheSyncTimeout). */
  cacheSyncTimeoutMs?: number;
  /**
   * `--metrics-bind-address`: serves /metrics, /healthz and /readyz. Default `127.0.0.1:8080`; `0` disables.
   */
  metricsBindAddress?: string;
  /** Default 30 s: how long stopping may take before `start()` rejects anyway. */
  gracefulShutdownTimeoutMs?: number;
  /** Stop on SIGTERM / SIGINT (a second signal exits at once). Default false. */
  installSignalHandlers?: boolean;
  metrics?: MetricsRegistry;
  log?: Logger;
  /**
   * Called once after each burst of reconciles across the manager's controllers, once none has run for a
   * few seconds (`BurstEndWatch`); never while idle. The controller gives memory back from it.
   */
  afterBurst?: BurstEndOptions;
  /**
   * Called once, when the first request is queued on any of the manager's controllers (`FirstWorkWatch`);
   * never on an idle controller of an empty cluster. The controller turns V8's optimizing compilers on from
   * it (`enableOptimizingCompilers`).
   */
  onFirstWork?: () => void;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Runnables started and stopped together, each with its own outcome. */
/** A runnable that reports its reconciles (a Controller). */
function hasActivity(
  runnable: Runnable,
): runnable is Runnable & { observeActivity(activity: ReconcileActivity): void } {
  return typeof (runnable as { observeActivity?: unknown }).observeActivity === 'function';
}

class RunGroup {
  private readonly runs: Promise<void>[] = [];
  private readonly abort = new AbortController();

  start(runnables: Runnable[], onError: (err: unknown) => void): void {
    for (const r of runnables) {
      this.runs.push(attempt(() => r.start(this.abort.signal)).catch(onError));
    }
  }

  /** Resolves once every runnable has returned. */
  wait(): Promise<void> {
    return Promise.all(this.runs).then(() => {});
  }

  stopAndWait(): Promise<void> {
    this.abort.abort();
    return this.wait();
  }
}

/**
 * controller-runtime's manager: starts caches first, waits for them to sync, then the controllers (only while
 * leading, with leader election); serves /healthz, /readyz and /metrics; stops everything in reverse order.
 */
export class Manager {
  readonly metrics: MetricsRegistry;
  private readonly options: ManagerOptions;
  private readonly log: Logger;
  private readonly runnables: Runnable[] = [];
  private readonly healthz = new Map<string, Check>();
  private readonly readyz = new Map<string, Check>();
  private readonly stopping = new AbortController();
  private state: 'new' | 'running' | 'done' = 'new';
  private error: unknown;
  private cachesSynced = false;
  private elector: LeaderElector | undefined;
  private probeServer: ProbeServer | undefined;
  private finished: Promise<void> | undefined;
  private resolveListening!: (url: string | undefined) => void;
  /** The probes server's URL once it listens (undefined if disabled or start failed first). */
  readonly listening: Promise<string | undefined>;

  /** Watches the controllers' reconciles when `afterBurst` is given. */
  private readonly burstEnd: BurstEndWatch | undefined;
  /** Watches for the controllers' first queued request when `onFirstWork` is given. */
  private readonly firstWork: FirstWorkWatch | undefined;

  constructor(options: ManagerOptions = {}) {
    this.options = options;
    this.burstEnd = options.afterBurst && new BurstEndWatch(options.afterBurst);
    this.firstWork = options.onFirstWork && new FirstWorkWatch(options.onFirstWork);
    this.log = options.log ?? jsonLogger();
    this.metrics = options.metrics ?? defaultRegistry;
    this.listening = new Promise((resolve) => (this.resolveListening = resolve));
    this.readyz.set('cache-sync', () => {
      if (!this.cachesSynced) throw new Error('caches not synced');
    });
  }

  /** Adds a runnable (a cache, an informer, a Controller). Only before start. */
  add(runnable: Runnable): void {
    if (this.state !== 'new') throw new Error('cannot add runnables after the manager has started');
    this.runnables.push(runnable);
    if (
      runnable instanceof Controller &&
      runnable.userAgent === undefined &&
      this.options.controllerUserAgent
    ) {
      runnable.userAgent = this.options.controllerUserAgent(runnable.name);
    }
    if (this.burstEnd && hasActivity(runnable)) runnable.observeActivity(this.burstEnd);
    if (this.firstWork && hasActivity(runnable)) runnable.observeActivity(this.firstWork);
  }

  /** Adds a check to /healthz: it fails while the check throws or rejects. */
  addHealthzCheck(name: string, check: Check): void {
    this.healthz.set(name, check);
  }

  /** Adds a check to /readyz (which also waits for the caches to sync). */
  addReadyzCheck(name: string, check: Check): void {
    this.readyz.set(name, check);
  }

  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.cachesSynced;
  }

  get synced(): boolean {
    return this.cachesSynced;
  }

  /** The probes server's URL while it listens. */
  get url(): string | undefined {
    return this.probeServer?.url;
  }

  /**
   * Runs until stopped. Resolves after a clean stop; rejects if a runnable fails, caches do not sync in
   * time, leadership is lost (with `onLeadershipLost: 'stop'`) or stopping overruns its grace period.
   */
  start(): Promise<void> {
    if (this.state !== 'new') throw new Error('manager was started more than once');
    this.state = 'running';
    this.finished = this.run();
    return this.finished;
  }

  /** Asks the manager to stop and waits until it has (errors are reported by `start()`, not here). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.finished?.catch(() => {});
  }

  private async run(): Promise<void> {
    const removeSignalHandlers = this.options.installSignalHandlers ? this.installSignalHandlers() : () => {};
    const caches = new RunGroup();
    const leaders = new RunGroup();
    let election: Promise<void> | undefined;
    const electionStop = new AbortController();
    try {
      this.probeServer = await this.serveProbes();
      this.resolveListening(this.probeServer?.url);
      const needsLeader = (r: Runnable) => r.needLeaderElection ?? syncOf(r) === undefined;
      caches.start(
        this.runnables.filter((r) => !needsLeader(r)),
        (err) => this.fail(err),
      );
      await this.waitForCacheSync();
      if (!this.stopping.signal.aborted) {
        const leaderRunnables = this.runnables.filter(needsLeader);
        const onError = (err: unknown) => this.fail(err);
        if (this.options.leaderElection) {
          this.elector = this.createElector(this.options.leaderElection, leaders, leaderRunnables, onError);
          election = this.elector.run(electionStop.signal).catch(onError);
        } else {
          leaders.start(leaderRunnables, onError);
        }
        await aborted(this.stopping.signal);
      }
    } catch (err) {
      this.error ??= err;
    } finally {
      this.resolveListening(undefined);
    }
    await this.shutdown(caches, leaders, electionStop, election);
    this.burstEnd?.stop();
    removeSignalHandlers();
    this.state = 'done';
    if (this.error !== undefined) throw this.error;
  }

  private async shutdown(
    caches: RunGroup,
    leaders: RunGroup,
    electionStop: AbortController,
    election: Promise<void> | undefined,
  ): Promise<void> {
    const ordered = async () => {
      if (election) {
        // The elector stops the leader runnables, waits for them, then releases the lease.
        electionStop.abort();
        await election;
      }
      await leaders.stopAndWait();
      await caches.stopAndWait();
    };
    const graceMs = this.options.gracefulShutdownTimeoutMs ?? 30_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const overran = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
    const timedOut = await Promise.race([ordered().then(() => false), overran]);
    clearTimeout(timer);
    if (timedOut) {
      this.error ??= new Error(
        `failed waiting for all runnables to end within grace period of ${graceMs / 1000}s`,
      );
    }
    await this.probeServer?.close();
    this.probeServer = undefined;
    this.log({
      level: 'info',
      msg: 'manager stopped',
      err: this.error ? describeError(this.error) : undefined,
    });
  }

  private createElector(
    options: ManagerLeaderElectionOptions,
    leaders: RunGroup,
    leaderRunnables: Runnable[],
    onError: (err: unknown) => void,
  ): LeaderElector {
    const gauge = leaderElectionGauge(this.metrics);
    const name = options.id;
    gauge.set({ name }, 0);
    return new LeaderElector({
      client: options.client,
      namespace: options.namespace ?? inClusterNamespace(),
      name,
      identity: options.identity ?? `${hostname()}_${randomUUID()}`,
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      releaseOnCancel: options.releaseOnCancel,
      log: this.log,
      callbacks: {
        onStartedLeading: (signal) => {
          gauge.set({ name }, 1);
          // Leader runnables live as long as leadership, or until the manager stops.
          signal.addEventListener('abort', () => void leaders.stopAndWait(), { once: true });
          leaders.start(leaderRunnables, onError);
          return leaders.wait();
        },
        onStoppedLeading: () => {
          gauge.set({ name }, 0);
          if (this.stopping.signal.aborted) return;
          if ((this.options.onLeadershipLost ?? 'exit') === 'exit') {
            this.log({ level: 'error', msg: 'leader election lost; exiting' });
            process.exit(1);
          }
          this.fail(new Error('leader election lost'));
        },
        onNewLeader: (identity) => {
          this.log({ level: 'info', msg: 'new leader elected', lease: name, identity });
          options.onNewLeader?.(identity);
        },
      },
    });
  }

  /** Waits for every runnable with waitForSync, bounded by the cache sync timeout and by stop. */
  private async waitForCacheSync(): Promise<void> {
    const timeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.stopping.signal, timeout]);
    // A cache that ignores the signal must not hold the manager: the wait ends when the signal aborts.
    const gaveUp = aborted(signal).then(() => false);
    const results = await Promise.all(
      this.runnables.map((r) => {
        const sync = syncOf(r);
        return sync ? Promise.race([attempt(() => sync(signal)), gaveUp]) : Promise.resolve(true);
      }),
    );
    if (this.stopping.signal.aborted) return;
    if (timeout.aborted || results.some((ok) => !ok))
      throw new Error('timed out waiting for cache to be synced');
    this.cachesSynced = true;
    this.log({ level: 'info', msg: 'caches synced' });
  }

  private async serveProbes(): Promise<ProbeServer | undefined> {
    const address = parseBindAddress(this.options.metricsBindAddress ?? '127.0.0.1:8080');
    if (!address) return undefined;
    const server = await startProbeServer({
      address,
      metrics: this.metrics,
      healthz: this.healthz,
      readyz: this.readyz,
    });
    this.log({ level: 'info', msg: 'serving metrics and probes', url: server.url });
    return server;
  }

  /** Records the first failure and stops everything. */
  private fail(err: unknown): void {
    this.log({ level: 'error', msg: 'manager failing', err: describeError(err) });
    this.error ??= err;
    this.stopping.abort();
  }

  private installSignalHandlers(): () => void {
    let signalled = false;
    const onSignal = (sig: NodeJS.Signals) => {
      if (signalled) {
        // A second signal means the operator will not wait for a graceful stop.
        process.exit(1);
      }
      signalled = true;
      this.log({ level: 'info', msg: 'signal received, stopping', signal: sig });
      this.stopping.abort();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  }
}

function syncOf(r: Runnable): ((signal: AbortSignal) => Promise<boolean>) | undefined {
  if (r.waitForSync) return (signal) => r.waitForSync!(signal);
  if (r.waitForCacheSync) return (signal) => r.waitForCacheSync!(signal);
  return undefined;
}

/** Calls fn; a synchronous throw becomes a rejection, so a faulty runnable fails like one that rejects. */
function attempt<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function inClusterNamespace(): string {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  } catch {
    throw new Error('not running in-cluster, please specify LeaderElectionNamespace');
  }
}
