/**
 * A small Prometheus text-format registry: counters and gauges with labels. The API server's metrics are
 * few and fixed, so this stays simpler than pulling in a client library.
 */

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  const escaped = entries.map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return `{${escaped.join(',')}}`;
}

export class Counter {
  readonly name: string;
  readonly help: string;
  private readonly values = new Map<string, number>();
  /** Rendered label sets by an unambiguous plain key: escaping them anew on every count cost more than counting. */
  private readonly rendered = new Map<string, string>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  inc(labels: Labels = {}, by = 1): void {
    let plain = '';
    // Length-prefixed, so that no two label sets share a key whatever characters they hold.
    for (const name in labels) plain += `${name.length}:${name}${labels[name].length}:${labels[name]}`;
    let key = this.rendered.get(plain);
    if (key === undefined) {
      key = labelText(labels);
      this.rendered.set(plain, key);
    }
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [labels, value] of this.values) lines.push(`${this.name}${labels} ${value}`);
    return lines.join('\n');
  }
}

/** A metric read when scraped, from a function listing the current label sets and values. */
export class Collected {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  private readonly collect: () => [Labels, number][];

  constructor(name: string, help: string, type: 'gauge' | 'counter', collect: () => [Labels, number][]) {
    this.name = name;
    this.help = help;
    this.type = type;
    this.collect = collect;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const [labels, value] of this.collect()) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join('\n');
  }
}

export class MetricsRegistry {
  private readonly metrics: (Counter | Collected)[] = [];

  counter(name: string, help: string): Counter {
    const c = new Counter(name, help);
    this.metrics.push(c);
    return c;
  }

  gauge(name: string, help: string, collect: () => [Labels, number][]): Collected {
    const g = new Collected(name, help, 'gauge', collect);
    this.metrics.push(g);
    return g;
  }

  /** A counter kept elsewhere (e.g. by a cache), read at scrape time. */
  collectedCounter(name: string, help: string, collect: () => [Labels, number][]): Collected {
    const c = new Collected(name, help, 'counter', collect);
    this.metrics.push(c);
    return c;
  }

  render(): string {
    return `${this.metrics.map((m) => m.render()).join('\n')}\n`;
  }
}
