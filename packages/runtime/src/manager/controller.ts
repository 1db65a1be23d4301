import type { RateLimiter } from '../workqueue/ratelimiter.ts';
import { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import { withUserAgent } from '../client/user-agent.ts';
import { describeError, jsonLogger, type Logger } from '../log.ts';
import type { ReconcileActivity } from './burst-end.ts';
import {
  type BoundControllerMetrics,
  ControllerMetrics,
  defaultRegistry,
  workqueueMetrics,
  type MetricsRegistry,
  type ReconcileResult,
} from './metrics.ts';

/**
 * controller-runtime's controller (`pkg/internal/controller`): a rate-limiting queue of request keys and up
 * to `maxConcurrentReconciles` workers calling `reconcile`. The queue guarantees one object is never
 * reconciled by two workers at once; the result decides what happens to the key next.
 */

/** What to reconcile: an object's namespace (absent for cluster-scoped objects) and name. */
export interface Request {
  namespace?: string;
  name: string;
}

/** What a reconcile asks for next; returning nothing means done until the next event. */
export interface Result {
  /** Reconcile again after this many milliseconds (the backoff is reset). */
  requeueAfter?: number;
  /** Reconcile again after the rate limiter's backoff. */
  requeue?: boolean;
}

/**
 * Reconciles one object. `signal` aborts when the controller stops; a reconcile should give up soon after,
 * since the controller waits for in-flight reconciles before it reports stopped.
 */
export type Reconciler = (request: Request, signal: AbortSignal) => Promise<Result | void> | Result | void;

/**
 * An error that retrying cannot fix (controller-runtime's `reconcile.TerminalError`): counted, logged, not
 * requeued.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** Options of a Controller: its name, its reconciler, its workers and rate limiter. */
export interface ControllerOptions {
  /** Names the controller in logs and metrics; must be unique in a manager. */
  name: string;
  reconcile: Reconciler;
  /** Default 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  /**
   * Default: client-go's `DefaultTypedControllerRateLimiter` (5 ms → 1000 s per item, 10 qps / burst 100).
   */
  rateLimiter?: RateLimiter<string>;
  /** Default true: controllers only run while their manager holds the leader lease. */
  needLeaderElection?: boolean;
  metrics?: MetricsRegistry;
  /** Default: errors as JSON lines on stderr. */
  log?: Logger;
  /**
   * The User-Agent of every request a reconcile makes (client/user-agent.ts), as a controller with a client of
   * its own would send; the API server names the managers of its writes after it. Default: the client's.
   */
  userAgent?: string;
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's `MetaNamespaceKeyFunc`). */
export function requestKey(request: Request): string {
  return request.namespace ? `${request.namespace}/${request.name}` : request.name;
}

/** The inverse of `requestKey`; names and namespaces cannot contain `/`. */
export function parseRequestKey(key: string): Request {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * controller-runtime's controller: a rate-limiting queue of `namespace/name` requests and workers calling the
 * Reconciler, never two at once for one object; errors are retried with backoff. A Runnable for the Manager.
 */
export class Controller {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly maxConcurrentReconciles: number;
  /** The User-Agent of the reconciles' requests; the manager may set it before start (controllerUserAgent). */
  userAgent: string | undefined;
  /** Keys are request keys; exposed for event handlers that need addAfter/addRateLimited directly. */
  readonly queue: RateLimitingQueue<string>;
  private readonly reconciler: Reconciler;
  private readonly metrics: BoundControllerMetrics;
  private readonly log: Logger;
  private started = false;
  private readonly activities: ReconcileActivity[] = [];

  constructor(options: ControllerOptions) {
    const max = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(max) || max < 1)
      throw new Error('maxConcurrentReconciles must be a positive integer');
    this.name = options.name;
    this.reconciler = options.reconcile;
    this.userAgent = options.userAgent;
    this.maxConcurrentReconciles = max;
    this.needLeaderElection = options.needLeaderElection ?? true;
    this.log = options.log ?? jsonLogger();
    const registry = options.metrics ?? defaultRegistry;
    const metrics = new ControllerMetrics(registry);
    metrics.init(this.name, max);
    this.metrics = metrics.forController(this.name);
    // Created up front so event handlers may enqueue before the controller starts (e.g. while it waits
    // for leadership); the backlog is processed once it does.
    const queueMetrics = workqueueMetrics(registry, this.name);
    this.queue = new RateLimitingQueue<string>({
      rateLimiter: options.rateLimiter,
      // Every way into the queue (enqueue, a handler's own add, a requeue or delay coming due) ends in an
      // accepted add, which is what the queue counts: the observers hear of it there.
      metrics: {
        ...queueMetrics,
        add: () => {
          queueMetrics.add?.();
          for (const a of this.activities) a.queued?.();
        },
      },
    });
  }

  /** Queues a request; requests for the same object collapse until a worker takes it. */
  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  /** Queues a request after a delay (an earlier pending time for the same object wins). */
  enqueueAfter(request: Request, ms: number): void {
    this.queue.addAfter(requestKey(request), ms);
  }

  /** Drops a request queued with `enqueueAfter` (or a `requeueAfter`) that has not come due yet. */
  cancelEnqueueAfter(request: Request): boolean {
    return this.queue.cancelAfter(requestKey(request));
  }

  /**
   * Reports each request queued and each reconcile's start and end to `activity` (the manager's burst and
   * first-work watches), in addition to any observer added before.
   */
  observeActivity(activity: ReconcileActivity): void {
    this.activities.push(activity);
  }

  /**
   * Runs the workers until `signal` aborts, then stops taking work and resolves once in-flight reconciles
   * have finished. A controller runs once: its queue is shut down when it stops.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} was started more than once`);
    this.started = true;
    const stop = () => this.queue.shutDown();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    this.log({
      level: 'info',
      msg: 'Starting workers',
      controller: this.name,
      workerCount: this.maxConcurrentReconciles,
    });
    const workers = Array.from({ length: this.maxConcurrentReconciles }, () => this.worker(signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', stop);
    this.log({ level: 'info', msg: 'All workers finished', controller: this.name });
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        // After stop, the backlog drains without reconciling: the reconcile's signal is already aborted.
        if (!signal.aborted) await this.reconcileHandler(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcileHandler(key: string, signal: AbortSignal): Promise<void> {
    const controller = this.name;
    const request = parseRequestKey(key);
    const started = performance.now();
    this.metrics.activeWorkers.inc();
    for (const a of this.activities) a.begin();
    let outcome: ReconcileResult;
    try {
      // Inside try: a reconciler that throws synchronously is handled like one that rejects.
      const userAgent = this.userAgent;
      const result =
        (await (userAgent === undefined
          ? this.reconciler(request, signal)
          : withUserAgent(userAgent, () => this.reconciler(request, signal)))) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfter);
        outcome = 'requeue_after';
      } else if (result.requeue) {
        this.queue.addRateLimited(key);
        outcome = 'requeue';
      } else {
        this.queue.forget(key);
        outcome = 'success';
      }
    } catch (err) {
      outcome = 'error';
      this.metrics.reconcileErrors.inc();
      const terminal = err instanceof TerminalError;
      // No forget on error: the backoff keeps growing until a reconcile succeeds.
      if (!terminal) this.queue.addRateLimited(key);
      // A reconcile the controller's stop cut short (its requests aborted) failed because of the stop, not of
      // the object: an error line per in-flight reconcile at every shutdown would only be noise.
      const cutShortByStop = signal.aborted;
      this.log({
        level: cutShortByStop ? 'debug' : 'error',
        msg: cutShortByStop
          ? 'Reconcile cut short by stop'
          : terminal
            ? 'Reconciler error (terminal, not requeued)'
            : 'Reconciler error',
        controller,
        namespace: request.namespace,
        name: request.name,
        err: describeError(err),
      });
    } finally {
      for (const a of this.activities) a.end();
      this.metrics.activeWorkers.dec();
      this.metrics.reconcileTime.observe((performance.now() - started) / 1000);
    }
    this.metrics.reconcileTotal[outcome].inc();
  }
}
