/**
 * The one Prometheus registry of every certkit package (docs/adr/0901-one-metrics-registry.md): counters,
 * gauges and histograms with labels, metrics read when scraped, rendered in the text exposition format
 * (0.0.4). It is ours rather than prom-client's because an observation costs a fraction of prom-client's
 * (bench/results/metrics.md): a series is bound to its labels once, so counting is an addition. The
 * metrics themselves (controller-runtime's, client-go's, kube-apiserver's, cert-manager's) are declared by
 * the packages that observe them; process_* and nodejs_* come from prom-client (process-metrics.ts).
 */

export type Labels = Record<string, string>;

/** The Content-Type of the Prometheus text exposition format that `/metrics` answers with. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One series: its label values in declared order, and its label text, escaped once when first rendered. */
interface Series {
  readonly values: readonly string[];
  key: string | undefined;
  /** False once removed: a bound child then looks its series up again (and re-creates it on a write). */
  attached: boolean;
}

/**
 * A node of the series tree below a map entry at depth d (the map is keyed by the value of label d): the one
 * series under that prefix, or a branch. Levels are skipped wherever all series below share their values,
 * which the series themselves carry (a path-compressed trie): a metric whose first label is an object's
 * name, with the other labels shared or few, costs one map entry per object rather than a map per label and
 * object (docs/adr/1110).
 */
type Node<S extends Series> = S | Branch<S>;

/** Series that agree on the labels before `depth` (as `via`, one of them, says) and differ at `depth`. */
class Branch<S extends Series> {
  readonly depth: number;
  readonly via: S;
  readonly children: Map<string, Node<S>>;

  constructor(depth: number, via: S, children: Map<string, Node<S>>) {
    this.depth = depth;
    this.via = via;
    this.children = children;
  }
}

abstract class Metric<S extends Series = Series> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  /**
   * Series by label values, in a tree keyed by label value, so finding the series of an observation builds
   * no string and escapes nothing (escaping waits for rendering); the label values of an observation are
   * mostly the very strings of earlier ones, whose hashes V8 keeps. With no labels the tree is unused.
   */
  readonly #root = new Map<string, Node<S>>();
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
    if (names.length === 0) {
      if (!this.#unlabelled && create) this.#unlabelled = this.#add([]);
      return this.#unlabelled;
    }
    let map = this.#root;
    let depth = 0;
    for (;;) {
      const key = labelValue(labels[names[depth]]);
      const node = map.get(key);
      if (node === undefined) {
        if (!create) return undefined;
        const series = this.#add(this.valuesOf(labels));
        map.set(key, series);
        return series;
      }
      // The labels after `depth` that the node's series share: all of them for a series, up to the branch's.
      const isBranch = node instanceof Branch;
      const upTo = isBranch ? node.depth : names.length;
      const shared = isBranch ? node.via.values : node.values;
      let differ = depth + 1;
      while (differ < upTo && shared[differ] === labelValue(labels[names[differ]])) differ++;
      if (differ === upTo) {
        if (!isBranch) return node;
        map = node.children;
        depth = node.depth;
        continue;
      }
      if (!create) return undefined;
      // The labels part from the node's series at `differ`: a branch there holds both.
      const series = this.#add(this.valuesOf(labels));
      const children = new Map<string, Node<S>>([
        [shared[differ], node],
        [series.values[differ], series],
      ]);
      map.set(key, new Branch(differ, isBranch ? node.via : node, children));
      return series;
    }
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

  /** Drops the series of these labels, and a branch it leaves with one node (that node takes its place). */
  protected removeSeries(labels: Labels): void {
    const names = this.labelNames;
    if (names.length === 0) {
      if (this.#unlabelled) this.#detach(this.#unlabelled);
      this.#unlabelled = undefined;
      return;
    }
    const series = this.lookup(labels, false);
    if (!series) return;
    this.#detach(series);
    // Walk down again to the map holding the series, and the one holding that map's branch.
    const values = series.values;
    let parent: Map<string, Node<S>> | undefined;
    let parentKey = '';
    let map = this.#root;
    let depth = 0;
    for (;;) {
      const node = map.get(values[depth])!;
      if (node === series) {
        map.delete(values[depth]);
        if (parent && map.size === 1) parent.set(parentKey, map.values().next().value!);
        else if (parent && map.size === 0) parent.delete(parentKey);
        return;
      }
      const branch = node as Branch<S>;
      parent = map;
      parentKey = values[depth];
      map = branch.children;
      depth = branch.depth;
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

  /** The current value of the series of these labels (0 when it has none). */
  get(labels: Labels = {}): number {
    return this.lookup(labels, false)?.value ?? 0;
  }

  /** The metric's sample lines in the exposition format (without HELP and TYPE). */
  render(): string[] {
    const lines: string[] = [];
    for (const s of this.series) lines.push(`${this.name}${braces(this.keyOf(s))} ${formatValue(s.value)}`);
    return lines;
  }
}

/** A counter bound to one label set (`Counter.with`): no lookup per increment. */
export interface CounterChild {
  /** Adds `by` (default 1). */
  inc(by?: number): void;
  /** The current value. */
  get(): number;
}

/** A monotonic counter, labelled; `with(labels)` binds one series. */
export class Counter extends ValueMetric {
  readonly type = 'counter';

  /** Adds `by` (default 1) to the series of these labels. */
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
  /** Sets the value. */
  set(value: number): void;
  /** Adds `by` (default 1). */
  inc(by?: number): void;
  /** Subtracts `by` (default 1). */
  dec(by?: number): void;
  /** The current value. */
  get(): number;
}

/** A value that goes up and down, labelled; `with(labels)` binds one series. */
export class Gauge extends ValueMetric {
  readonly type = 'gauge';

  /** Sets the series of these labels to `value`. */
  set(labels: Labels, value: number): void {
    this.lookup(labels, true).value = value;
  }

  /** Adds `by` (default 1) to the series of these labels. */
  inc(labels: Labels = {}, by = 1): void {
    this.lookup(labels, true).value += by;
  }

  /** Subtracts `by` (default 1) from the series of these labels. */
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
  /** Records one observation. */
  observe(value: number): void;
  /** The number of observations so far. */
  count(): number;
}

/** A histogram with fixed buckets, labelled; `with(labels)` binds one series. */
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

  /** Records one observation in the series of these labels. */
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

  /** The bucket, sum and count lines of every series, in the exposition format. */
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

/** A metric read when scraped: its series come from a function (client_golang's GaugeFunc, with labels). */
class CollectedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly #collect: () => Iterable<readonly [Labels, number]>;

  constructor(
    name: string,
    help: string,
    type: 'counter' | 'gauge',
    collect: () => Iterable<readonly [Labels, number]>,
  ) {
    this.name = name;
    this.help = help;
    this.type = type;
    this.#collect = collect;
  }

  /** Labels in the order the function gives them: it builds each label set itself. */
  render(): string[] {
    const lines: string[] = [];
    for (const [labels, value] of this.#collect()) {
      const key = Object.entries(labels)
        .map(([n, v]) => `${n}="${escapeLabel(labelValue(v))}"`)
        .join(',');
      lines.push(`${this.name}${braces(key)} ${formatValue(value)}`);
    }
    return lines;
  }
}

/** Text in the exposition format that another source renders, added to every scrape (see scrape()). */
export type Collector = () => Promise<string>;

/**
 * The Prometheus registry of a process: counters, gauges and histograms by name, plus collectors of text
 * rendered elsewhere; `scrape()` is what `/metrics` serves.
 */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric | CollectedMetric>();
  private readonly collectors = new Map<string, Collector>();

  /** Gets or creates a counter; the same name always returns the same metric. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(name, Counter, () => new Counter(name, help, labelNames));
  }

  /** Gets or creates a gauge; the same name always returns the same metric. */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(name, Gauge, () => new Gauge(name, help, labelNames));
  }

  /**
   * Gets or creates a histogram with these bucket upper bounds; the same name always returns the same metric.
   */
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.register(name, Histogram, () => new Histogram(name, help, labelNames, buckets));
  }

  /**
   * A gauge whose series `collect` lists when scraped, for values another module keeps anyway (a cache's
   * size, a limiter's inflight count): nothing to update on the hot path.
   */
  gaugeFunc(name: string, help: string, collect: () => Iterable<readonly [Labels, number]>): void {
    this.register(name, CollectedMetric, () => new CollectedMetric(name, help, 'gauge', collect));
  }

  /** A counter kept elsewhere (e.g. by a cache), read when scraped. */
  counterFunc(name: string, help: string, collect: () => Iterable<readonly [Labels, number]>): void {
    this.register(name, CollectedMetric, () => new CollectedMetric(name, help, 'counter', collect));
  }

  /**
   * Adds another source's exposition to scrape() (the process metrics); a second collector of the same
   * name is ignored, so each source appears once however many times it is registered.
   */
  addCollector(name: string, collector: Collector): void {
    if (!this.collectors.has(name)) this.collectors.set(name, collector);
  }

  /** What a /metrics endpoint answers: render(), then every collector's exposition. */
  async scrape(): Promise<string> {
    let text = this.render();
    for (const collect of this.collectors.values()) {
      const more = await collect();
      if (more) text += more.endsWith('\n') ? more : `${more}\n`;
    }
    return text;
  }

  /** The Prometheus text exposition of this registry's own metrics (the collectors' are scrape()'s). */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${m.name} ${m.type}`);
      out.push(...m.render());
    }
    return out.length ? `${out.join('\n')}\n` : '';
  }

  private register<M extends Metric | CollectedMetric>(
    name: string,
    kind: abstract new (...args: never[]) => M,
    create: () => M,
  ): M {
    const existing = this.metrics.get(name);
    if (existing) {
      // A metric read from a function is owned by whoever registered it: a second one would go unseen.
      if (!(existing instanceof kind) || existing instanceof CollectedMetric)
        throw new Error(`metric ${name} is already registered as a ${existing.type}`);
      return existing;
    }
    const metric = create();
    this.metrics.set(name, metric);
    return metric;
  }
}

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
