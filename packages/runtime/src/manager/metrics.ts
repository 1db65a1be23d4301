import type { QueueMetrics } from '../workqueue/queue.ts';

/**
 * A tiny Prometheus registry: counters, gauges and histograms with labels, rendered in the text exposition
 * format (0.0.4). Names, labels and buckets follow controller-runtime's and client-go's metrics, so
 * dashboards written for Go controllers work unchanged.
 */

export type Labels = Record<string, string>;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

abstract class Metric {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** A stable key for one label set, in the declared label order (also how series are rendered). */
  protected seriesKey(labels: Labels): string {
    return this.labelNames.map((n) => `${n}="${escapeLabel(labels[n] ?? '')}"`).join(',');
  }

  abstract render(): string[];
}

export class Counter extends Metric {
  readonly type = 'counter';
  private readonly values = new Map<string, number>();

  inc(labels: Labels = {}, by = 1): void {
    const key = this.seriesKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(this.seriesKey(labels)) ?? 0;
  }

  render(): string[] {
    return [...this.values].map(([key, v]) => `${this.name}${braces(key)} ${formatValue(v)}`);
  }
}

export class Gauge extends Metric {
  readonly type = 'gauge';
  private readonly values = new Map<string, number>();

  set(labels: Labels, value: number): void {
    this.values.set(this.seriesKey(labels), value);
  }

  inc(labels: Labels = {}, by = 1): void {
    const key = this.seriesKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }

  /** Drops a series (its object is gone), so scrapes stop reporting it. */
  remove(labels: Labels): void {
    this.values.delete(this.seriesKey(labels));
  }

  get(labels: Labels = {}): number {
    return this.values.get(this.seriesKey(labels)) ?? 0;
  }

  render(): string[] {
    return [...this.values].map(([key, v]) => `${this.name}${braces(key)} ${formatValue(v)}`);
  }
}

interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Metric {
  readonly type = 'histogram';
  readonly buckets: readonly number[];
  private readonly series = new Map<string, HistogramSeries>();

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = this.seriesKey(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    // Counts are stored per bucket and accumulated when rendered.
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i]++;
    s.sum += value;
    s.count++;
  }

  /** The number of observations of one series. */
  count(labels: Labels = {}): number {
    return this.series.get(this.seriesKey(labels))?.count ?? 0;
  }

  render(): string[] {
    const lines: string[] = [];
    for (const [key, s] of this.series) {
      const prefix = key ? `${key},` : '';
      let cumulative = 0;
      this.buckets.forEach((b, i) => {
        cumulative += s.counts[i];
        lines.push(`${this.name}_bucket{${prefix}le="${formatValue(b)}"} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket{${prefix}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${braces(key)} ${formatValue(s.sum)}`);
      lines.push(`${this.name}_count${braces(key)} ${s.count}`);
    }
    return lines;
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  /** Gets or creates a counter; the same name always returns the same metric. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(name, Counter, () => new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(name, Gauge, () => new Gauge(name, help, labelNames));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.register(name, Histogram, () => new Histogram(name, help, labelNames, buckets));
  }

  /** The Prometheus text exposition of every metric. */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${m.name} ${m.type}`);
      out.push(...m.render());
    }
    return out.length ? `${out.join('\n')}\n` : '';
  }

  private register<M extends Metric>(
    name: string,
    kind: abstract new (...args: never[]) => M,
    create: () => M,
  ): M {
    const existing = this.metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind))
        throw new Error(`metric ${name} is already registered as a ${existing.type}`);
      return existing;
    }
    const metric = create();
    this.metrics.set(name, metric);
    return metric;
  }
}

/** The registry controllers, queues and the manager use unless given another (controller-runtime's `metrics.Registry`). */
export const defaultRegistry = new MetricsRegistry();

function braces(key: string): string {
  return key ? `{${key}}` : '';
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  return String(v);
}

/** controller-runtime's reconcile-time buckets (`pkg/internal/controller/metrics`). */
export const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** controller-runtime's workqueue buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns … 1000 s. */
export const WORKQUEUE_DURATION_BUCKETS = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);

export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

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
  depth.set(labels, 0);
  adds.inc(labels, 0);
  retries.inc(labels, 0);
  return {
    depth: (d) => depth.set(labels, d),
    add: () => adds.inc(labels),
    queueLatency: (s) => latency.observe(labels, s),
    workDuration: (s) => work.observe(labels, s),
    retry: () => retries.inc(labels),
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
