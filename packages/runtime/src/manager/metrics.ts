import {
  type Counter,
  type CounterChild,
  type Gauge,
  type GaugeChild,
  type Histogram,
  type HistogramChild,
  MetricsRegistry,
} from '@certkit/apimachinery';
import type { QueueMetrics } from '../workqueue/queue.ts';

// The registry itself is apimachinery's, the one home of metrics for every package; the runtime offers it
// as part of its own surface, as controller-runtime hands out client_golang's registry.
export {
  Counter,
  type CounterChild,
  Gauge,
  type GaugeChild,
  Histogram,
  type HistogramChild,
  type Labels,
  MetricsRegistry,
  PROMETHEUS_CONTENT_TYPE,
} from '@certkit/apimachinery';

/**
 * controller-runtime's and client-go's metrics (names, labels and buckets as theirs, so dashboards written for
 * Go controllers work unchanged), kept in the one metrics registry of `@certkit/apimachinery`.
 */

/**
 * The registry controllers, queues and the manager use unless given another (controller-runtime's
 * `metrics.Registry`).
 */
export const defaultRegistry = new MetricsRegistry();

/** controller-runtime's reconcile-time buckets (`pkg/internal/controller/metrics`). */
export const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** controller-runtime's workqueue buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns … 1000 s. */
export const WORKQUEUE_DURATION_BUCKETS = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);

/** The `result` label of controller_runtime_reconcile_total. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** ControllerMetrics' series for one controller. */
export interface BoundControllerMetrics {
  reconcileTotal: Record<ReconcileResult, CounterChild>;
  reconcileErrors: CounterChild;
  reconcileTime: HistogramChild;
  activeWorkers: GaugeChild;
}

/** The per-controller metrics controller-runtime exports. */
export class ControllerMetrics {
  readonly reconcileTotal: Counter;
  readonly reconcileErrors: Counter;
  readonly reconcileTime: Histogram;
  readonly activeWorkers: Gauge;
  readonly maxConcurrentReconciles: Gauge;

  constructor(registry: MetricsRegistry) {
    this.reconcileTotal = registry.counter(
      'controller_runtime_reconcile_total',
      'Total number of reconciliations per controller',
      ['controller', 'result'],
    );
    this.reconcileErrors = registry.counter(
      'controller_runtime_reconcile_errors_total',
      'Total number of reconciliation errors per controller',
      ['controller'],
    );
    this.reconcileTime = registry.histogram(
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconciliation per controller',
      ['controller'],
      RECONCILE_TIME_BUCKETS,
    );
    this.activeWorkers = registry.gauge(
      'controller_runtime_active_workers',
      'Number of currently used workers per controller',
      ['controller'],
    );
    this.maxConcurrentReconciles = registry.gauge(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller',
      ['controller'],
    );
  }

  /** The series of one controller, bound once: they are updated on every reconcile. */
  forController(controller: string): BoundControllerMetrics {
    const total = this.reconcileTotal;
    return {
      reconcileTotal: {
        success: total.with({ controller, result: 'success' }),
        error: total.with({ controller, result: 'error' }),
        requeue: total.with({ controller, result: 'requeue' }),
        requeue_after: total.with({ controller, result: 'requeue_after' }),
      },
      reconcileErrors: this.reconcileErrors.with({ controller }),
      reconcileTime: this.reconcileTime.with({ controller }),
      activeWorkers: this.activeWorkers.with({ controller }),
    };
  }

  /** Zero series for every result, as controller-runtime initialises them, so rates exist from the start. */
  init(controller: string, maxConcurrentReconciles: number): void {
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const)
      this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
    this.activeWorkers.set({ controller }, 0);
    this.maxConcurrentReconciles.set({ controller }, maxConcurrentReconciles);
  }
}

/**
 * Queue hooks feeding controller-runtime's workqueue metrics, labelled as it labels them (`name` and
 * `controller`, both the controller's name).
 */
export function workqueueMetrics(registry: MetricsRegistry, name: string): QueueMetrics {
  const labels = { name, controller: name };
  const depth = registry.gauge('workqueue_depth', 'Current depth of workqueue', ['name', 'controller']);
  const adds = registry.counter('workqueue_adds_total', 'Total number of adds handled by workqueue', [
    'name',
    'controller',
  ]);
  const latency = registry.histogram(
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested',
    ['name', 'controller'],
    WORKQUEUE_DURATION_BUCKETS,
  );
  const work = registry.histogram(
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes.',
    ['name', 'controller'],
    WORKQUEUE_DURATION_BUCKETS,
  );
  const retries = registry.counter(
    'workqueue_retries_total',
    'Total number of retries handled by workqueue',
    ['name', 'controller'],
  );
  // Bound once: the queue reports on every add, get and done, always with these labels.
  const depthOf = depth.with(labels);
  const addsOf = adds.with(labels);
  const retriesOf = retries.with(labels);
  const latencyOf = latency.with(labels);
  const workOf = work.with(labels);
  depthOf.set(0);
  addsOf.inc(0);
  retriesOf.inc(0);
  return {
    depth: (d) => depthOf.set(d),
    add: () => addsOf.inc(),
    queueLatency: (s) => latencyOf.observe(s),
    workDuration: (s) => workOf.observe(s),
    retry: () => retriesOf.inc(),
  };
}

/**
 * What the REST client reports per request through its `onRequest` hook (client/transport.ts's
 * RequestInfo fits: it carries the Kubernetes verb, from which the HTTP method follows).
 */
export interface RequestEvent {
  /** HTTP method; derived from `verb` when absent. */
  method?: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, … or an HTTP method. */
  verb?: string;
  /** HTTP status; 0 or a string when no response arrived. */
  code: number | string;
}

const VERB_METHODS: Record<string, string> = {
  get: 'GET',
  list: 'GET',
  watch: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETE',
};

/**
 * A client `onRequest` hook counting requests into `rest_client_requests_total{code,method}`. A request
 * that got no response is counted with code `<error>`, as client-go does.
 */
export function restClientMetricsHook(
  registry: MetricsRegistry = defaultRegistry,
): (event: RequestEvent) => void {
  const requests = registry.counter(
    'rest_client_requests_total',
    'Number of HTTP requests, partitioned by status code and method.',
    ['code', 'method'],
  );
  return (event) => {
    const verb = event.verb?.toLowerCase() ?? '';
    const method = (event.method ?? VERB_METHODS[verb] ?? verb).toUpperCase();
    const code = event.code === 0 || event.code === '' ? '<error>' : String(event.code);
    requests.inc({ code, method });
  };
}

/** The `leader_election_master_status` gauge controller-runtime exports (1 while leading). */
export function leaderElectionGauge(registry: MetricsRegistry): Gauge {
  return registry.gauge(
    'leader_election_master_status',
    'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
    ['name'],
  );
}
