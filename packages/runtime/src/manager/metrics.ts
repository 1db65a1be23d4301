import type { QueueMetrics } from '../workqueue/queue.ts';

/**
 * A tiny Prometheus registry: counters, gauges and histograms with labels, rendered in the text exposition
 * format (0.0.4). Names, labels and buckets follow controller-runtime's and client-go's metrics, so
 * dashboards written for Go controllers work unchanged.
 */

export type Labels = Record<string, string>;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One series: its label values in declared order, and its label text, escaped once when first rendered. */
interface Series {
  readonly values: readonly string[];
  key: string | undefined;
  /** False once removed: a bound child then looks its series up again (and re-creates it on a write). */
  attached: boolean;
}

/** A level of the series tree: label value → the next level, or the series at the last label. */
type Level<S> = Map<string, Level<S> | S>;

abstract class Metric<S extends Series = Series> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  /**
   * Series by label values, one map level per label, so finding the series of an observation builds no
   * string and escapes nothing (escaping waits for rendering). With no labels the tree is unused.
   */
  readonly #tree: Level<S> = new Map();
  #unlabelled: S | undefined;
  /** Every series in the order it was created, which is the exposition order. */
  protected readonly series = new Set<S>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  protected abstract newSeries(values: readonly string[]): S;

  /** The label values of `labels` in declared order; missing ones are empty, as Prometheus treats them. */
  protected valuesOf(labels: Labels): string[] {
    const names = this.labelNames;
    const values = new Array<string>(names.length);
    for (let i = 0; i < names.length; i++) values[i] = labelValue(labels[names[i]]);
    return values;
  }

  /** The series for these labels, created if `create` (otherwise undefined when there is none). */
  protected lookup(labels: Labels, create: true): S;
  protected lookup(labels: Labels, create: false): S | undefined;
  protected lookup(labels: Labels, create: boolean): S | undefined {
    const names = this.labelNames;
    const last = names.length - 1;
    if (last < 0) {
      if (!this.#unlabelled && create) this.#unlabelled = this.#add([]);
      return this.#unlabelled;
    }
    let level = this.#tree;
    for (let i = 0; i < last; i++) {
      const value = labelValue(labels[names[i]]);
      let next = level.get(value) as Level<S> | undefined;
      if (!next) {
        if (!create) return undefined;
        level.set(value, (next = new Map()));
      }
      level = next;
    }
    const value = labelValue(labels[names[last]]);
    let series = level.get(value) as S | undefined;
    if (!series && create) level.set(value, (series = this.#add(this.valuesOf(labels))));
    return series;
  }

  /**
   * For a bound child: the series of these labels, found once and then kept. Like the label API, it is
   * only created by a write (`create`), and found again if it was removed meanwhile.
   */
  protected binder(labels: Labels): (create: boolean) => S | undefined {
    const copy: Labels = {};
    this.labelNames.forEach((name) => (copy[name] = labelValue(labels[name])));
    let series: S | undefined;
    return (create) => {
      if (series?.attached) return series;
      series = create ? this.lookup(copy, true) : this.lookup(copy, false);
      return series;
    };
  }

  /** Drops the series of these labels, pruning tree levels it leaves empty. */
  protected removeSeries(labels: Labels): void {
    const names = this.labelNames;
    if (names.length === 0) {
      if (this.#unlabelled) this.#detach(this.#unlabelled);
      this.#unlabelled = undefined;
      return;
    }
    const path: Level<S>[] = [];
    let level = this.#tree;
    for (let i = 0; i < names.length - 1; i++) {
      const next = level.get(labelValue(labels[names[i]])) as Level<S> | undefined;
      if (!next) return;
      path.push(level);
      level = next;
    }
    const value = labelValue(labels[names[names.length - 1]]);
    const series = level.get(value) as S | undefined;
    if (!series) return;
    this.#detach(series);
    level.delete(value);
    for (let i = path.length - 1; i >= 0 && level.size === 0; i--) {
      path[i].delete(series.values[i]);
      level = path[i];
    }
  }

  /** The rendered label set of a series, e.g. `code="200",method="GET"`; '' without labels. */
  protected keyOf(series: S): string {
    return (series.key ??= this.labelNames
      .map((n, i) => `${n}="${escapeLabel(series.values[i])}"`)
      .join(','));
  }

  #add(values: readonly string[]): S {
    const series = this.newSeries(values);
    this.series.add(series);
    return series;
  }

  #detach(series: S): void {
    series.attached = false;
    this.series.delete(series);
  }

  abstract render(): string[];
}

interface ValueSeries extends Series {
  value: number;
}

abstract class ValueMetric extends Metric<ValueSeries> {
  protected newSeries(values: readonly string[]): ValueSeries {
    return { values, key: undefined, attached: true, value: 0 };
  }

  get(labels: Labels = {}): number {
    return this.lookup(labels, false)?.value ?? 0;
  }

  render(): string[] {
    const lines: string[] = [];
    for (const s of this.series) lines.push(`${this.name}${braces(this.keyOf(s))} ${formatValue(s.value)}`);
    return lines;
  }
}

/** A counter bound to one label set (`Counter.with`): no lookup per increment. */
export interface CounterChild {
  inc(by?: number): void;
  get(): number;
}

export class Counter extends ValueMetric {
  readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    this.lookup(labels, true).value += by;
  }

  /** The series of these labels, bound once, for callers that always count the same labels. */
  with(labels: Labels = {}): CounterChild {
    const series = this.binder(labels);
    return {
      inc: (by = 1) => void (series(true)!.value += by),
      get: () => series(false)?.value ?? 0,
    };
  }
}

/** A gauge bound to one label set (`Gauge.with`). */
export interface GaugeChild {
  set(value: number): void;
  inc(by?: number): void;
  dec(by?: number): void;
  get(): number;
}

export class Gauge extends ValueMetric {
  readonly type = 'gauge';

  set(labels: Labels, value: number): void {
    this.lookup(labels, true).value = value;
  }

  inc(labels: Labels = {}, by = 1): void {
    this.lookup(labels, true).value += by;
  }

  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }

  /** Drops a series (its object is gone), so scrapes stop reporting it. */
  remove(labels: Labels): void {
    this.removeSeries(labels);
  }

  /** The series of these labels, bound once; a write after remove() brings the series back. */
  with(labels: Labels = {}): GaugeChild {
    const series = this.binder(labels);
    return {
      set: (value) => void (series(true)!.value = value),
      inc: (by = 1) => void (series(true)!.value += by),
      dec: (by = 1) => void (series(true)!.value -= by),
      get: () => series(false)?.value ?? 0,
    };
  }
}

interface HistogramSeries extends Series {
  /** Observations per bucket (not cumulative: accumulated when rendered). */
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram bound to one label set (`Histogram.with`). */
export interface HistogramChild {
  observe(value: number): void;
  count(): number;
}

export class Histogram extends Metric<HistogramSeries> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  protected newSeries(values: readonly string[]): HistogramSeries {
    return { values, key: undefined, attached: true, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }

  observe(labels: Labels, value: number): void {
    this.#record(this.lookup(labels, true), value);
  }

  /** The number of observations of one series. */
  count(labels: Labels = {}): number {
    return this.lookup(labels, false)?.count ?? 0;
  }

  /** The series of these labels, bound once, for callers that always observe the same labels. */
  with(labels: Labels = {}): HistogramChild {
    const series = this.binder(labels);
    return {
      observe: (value) => this.#record(series(true)!, value),
      count: () => series(false)?.count ?? 0,
    };
  }

  #record(series: HistogramSeries, value: number): void {
    const buckets = this.buckets;
    // The first bucket the value fits in; none for NaN or above the last bound (only +Inf counts it).
    for (let i = 0; i < buckets.length; i++) {
      if (value <= buckets[i]) {
        series.counts[i]++;
        break;
      }
    }
    series.sum += value;
    series.count++;
  }

  render(): string[] {
    const lines: string[] = [];
    const bounds = this.buckets.map(formatValue);
    for (const s of this.series) {
      const key = this.keyOf(s);
      const prefix = key ? `${key},` : '';
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += s.counts[i];
        lines.push(`${this.name}_bucket{${prefix}le="${bounds[i]}"} ${cumulative}`);
      }
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

/** A label value as the series tree keys it: a missing label is the empty value. */
function labelValue(v: string | undefined): string {
  return v === undefined || v === null ? '' : typeof v === 'string' ? v : String(v);
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
