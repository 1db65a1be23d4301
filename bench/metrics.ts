import { createRequire } from 'node:module';
import { MetricsRegistry } from '@certkit/apimachinery';
import * as prom from 'prom-client';
import { median, writeResults } from './lib.ts';

/**
 * What a metric observation and a scrape cost: certkit's registry (`@certkit/apimachinery`'s metrics.ts)
 * against prom-client, in one process, alternately (ABBA rounds: the machine is noisy, so compare ratios
 * within a run). Decides ADR 0901: adopt prom-client unless ours costs meaningfully less per observation.
 *
 * Per observation (ns/op), each with label values rotating over a few series as a hot path sees them:
 *   - counter inc, gauge set and histogram observe through the label-object API (`inc({code, method})`);
 *   - the same through a child bound once (ours `with(labels)`, prom-client's `labels(labels)`), which is
 *     how the runtime's controllers, queues and client count.
 * Per scrape (ms): the text exposition of a registry shaped like a controller with CERTS Certificates
 * (cert-manager's per-Certificate gauges) and CONTROLLERS controllers (controller-runtime's and the
 * workqueue's histograms and counters), and the API server's request counter and duration histogram.
 *
 * Usage: npm run bench:metrics [-- --rounds=8 --ops=400000 --certs=2000]
 */

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 8);
const OPS = Number(arg('ops') ?? 400_000);
const CERTS = Number(arg('certs') ?? 2000);
const CONTROLLERS = 10;
const PROM_CLIENT_VERSION = (
  createRequire(import.meta.url)('prom-client/package.json') as { version: string }
).version;
const SCRAPES = 20;

function log(msg: string) {
  process.stderr.write(`[bench:metrics] ${msg}\n`);
}

/** controller-runtime's reconcile-time buckets, as the runtime registers them. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** The label sets a hot path cycles through: a client's (code, method) pairs. */
const CLIENT_LABELS = ['200', '201', '404', '409'].flatMap((code) =>
  ['GET', 'PUT', 'POST', 'PATCH'].map((method) => ({ code, method })),
);
const CONTROLLER_LABELS = Array.from({ length: 8 }, (_, i) => ({ controller: `controller-${i}` }));
const VALUES = Array.from({ length: 64 }, (_, i) => (i * 0.37) % 3);

/** One implementation's observation operations, set up outside the timed loops. */
interface Subject {
  name: 'certkit' | 'prom-client';
  counterInc(i: number): void;
  counterIncBound(i: number): void;
  gaugeSet(i: number): void;
  gaugeSetBound(i: number): void;
  histogramObserve(i: number): void;
  histogramObserveBound(i: number): void;
}

type Operation = Exclude<keyof Subject, 'name'>;
const OPERATIONS: Operation[] = [
  'counterInc',
  'counterIncBound',
  'gaugeSet',
  'gaugeSetBound',
  'histogramObserve',
  'histogramObserveBound',
];

function ours(): Subject {
  const r = new MetricsRegistry();
  const counter = r.counter('requests_total', 'Requests.', ['code', 'method']);
  const counters = CLIENT_LABELS.map((l) => counter.with(l));
  const gauge = r.gauge('active_workers', 'Workers.', ['controller']);
  const gauges = CONTROLLER_LABELS.map((l) => gauge.with(l));
  const histogram = r.histogram('reconcile_time_seconds', 'Time.', ['controller'], RECONCILE_BUCKETS);
  const histograms = CONTROLLER_LABELS.map((l) => histogram.with(l));
  return {
    name: 'certkit',
    counterInc: (i) => counter.inc(CLIENT_LABELS[i & 15]),
    counterIncBound: (i) => counters[i & 15].inc(),
    gaugeSet: (i) => gauge.set(CONTROLLER_LABELS[i & 7], i),
    gaugeSetBound: (i) => gauges[i & 7].set(i),
    histogramObserve: (i) => histogram.observe(CONTROLLER_LABELS[i & 7], VALUES[i & 63]),
    histogramObserveBound: (i) => histograms[i & 7].observe(VALUES[i & 63]),
  };
}

function promClient(): Subject {
  const registers = [new prom.Registry()];
  const counter = new prom.Counter({
    name: 'requests_total',
    help: 'Requests.',
    labelNames: ['code', 'method'],
    registers,
  });
  const counters = CLIENT_LABELS.map((l) => counter.labels(l));
  const gauge = new prom.Gauge({
    name: 'active_workers',
    help: 'Workers.',
    labelNames: ['controller'],
    registers,
  });
  const gauges = CONTROLLER_LABELS.map((l) => gauge.labels(l));
  const histogram = new prom.Histogram({
    name: 'reconcile_time_seconds',
    help: 'Time.',
    labelNames: ['controller'],
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const histograms = CONTROLLER_LABELS.map((l) => histogram.labels(l));
  return {
    name: 'prom-client',
    counterInc: (i) => counter.inc(CLIENT_LABELS[i & 15]),
    counterIncBound: (i) => counters[i & 15].inc(),
    gaugeSet: (i) => gauge.set(CONTROLLER_LABELS[i & 7], i),
    gaugeSetBound: (i) => gauges[i & 7].set(i),
    histogramObserve: (i) => histogram.observe(CONTROLLER_LABELS[i & 7], VALUES[i & 63]),
    histogramObserveBound: (i) => histograms[i & 7].observe(VALUES[i & 63]),
  };
}

/** Nanoseconds per call of `op` over OPS calls. */
function nsPerOp(op: (i: number) => void): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) op(i);
  return Number(process.hrtime.bigint() - started) / OPS;
}

/** A registry's worth of series, as a controller with CERTS Certificates and an API server hold them. */
interface Population {
  name: 'certkit' | 'prom-client';
  render(): Promise<string>;
}

const CERT_LABELS = ['name', 'namespace', 'issuer_name', 'issuer_kind', 'issuer_group'];
const certLabels = (i: number) => ({
  name: `cert-${i}`,
  namespace: `ns-${i % 20}`,
  issuer_name: `issuer-${i % 5}`,
  issuer_kind: 'Issuer',
  issuer_group: 'cert-manager.io',
});
/** kube-apiserver's request duration buckets. */
const REQUEST_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];
const REQUEST_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
const RESOURCES = ['secrets', 'certificates', 'certificaterequests', 'leases', 'events', 'orders'];
const VERBS = ['GET', 'LIST', 'WATCH', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Fills a population through a small interface both implementations are adapted to. */
interface Filler {
  gauge(name: string, labelNames: string[]): (labels: Record<string, string>, v: number) => void;
  counter(name: string, labelNames: string[]): (labels: Record<string, string>, v: number) => void;
  histogram(
    name: string,
    labelNames: string[],
    buckets: number[],
  ): (labels: Record<string, string>, v: number) => void;
}

function populate(f: Filler): void {
  const expiration = f.gauge('certmanager_certificate_expiration_timestamp_seconds', CERT_LABELS);
  const renewal = f.gauge('certmanager_certificate_renewal_timestamp_seconds', CERT_LABELS);
  const ready = f.gauge('certmanager_certificate_ready_status', [...CERT_LABELS, 'condition']);
  for (let i = 0; i < CERTS; i++) {
    const labels = certLabels(i);
    expiration(labels, 1.8e9 + i);
    renewal(labels, 1.7e9 + i);
    for (const condition of ['True', 'False', 'Unknown'])
      ready({ ...labels, condition }, condition === 'True' ? 1 : 0);
  }
  const reconcileTotal = f.counter('controller_runtime_reconcile_total', ['controller', 'result']);
  const reconcileTime = f.histogram(
    'controller_runtime_reconcile_time_seconds',
    ['controller'],
    RECONCILE_BUCKETS,
  );
  const queueDuration = f.histogram(
    'workqueue_queue_duration_seconds',
    ['name', 'controller'],
    QUEUE_BUCKETS,
  );
  const workDuration = f.histogram('workqueue_work_duration_seconds', ['name', 'controller'], QUEUE_BUCKETS);
  const depth = f.gauge('workqueue_depth', ['name', 'controller']);
  for (let c = 0; c < CONTROLLERS; c++) {
    const controller = `controller-${c}`;
    for (const result of ['success', 'error', 'requeue', 'requeue_after'])
      reconcileTotal({ controller, result }, 3);
    for (let k = 0; k < 50; k++) {
      reconcileTime({ controller }, VALUES[k]);
      queueDuration({ name: controller, controller }, VALUES[k] / 100);
      workDuration({ name: controller, controller }, VALUES[k] / 10);
    }
    depth({ name: controller, controller }, c);
  }
  const requests = f.counter('apiserver_request_total', [...REQUEST_LABELS, 'code']);
  const duration = f.histogram('apiserver_request_duration_seconds', REQUEST_LABELS, REQUEST_BUCKETS);
  for (const resource of RESOURCES)
    for (const verb of VERBS) {
      const labels = {
        verb,
        group: '',
        version: 'v1',
        resource,
        subresource: '',
        scope: 'namespace',
        component: 'apiserver',
      };
      requests({ ...labels, code: '200' }, 10);
      duration(labels, 0.01);
    }
}

function oursPopulation(): Population {
  const r = new MetricsRegistry();
  populate({
    gauge: (name, labelNames) => {
      const g = r.gauge(name, 'Help.', labelNames);
      return (labels, v) => g.set(labels, v);
    },
    counter: (name, labelNames) => {
      const c = r.counter(name, 'Help.', labelNames);
      return (labels, v) => c.inc(labels, v);
    },
    histogram: (name, labelNames, buckets) => {
      const h = r.histogram(name, 'Help.', labelNames, buckets);
      return (labels, v) => h.observe(labels, v);
    },
  });
  return { name: 'certkit', render: () => Promise.resolve(r.render()) };
}

function promPopulation(): Population {
  const r = new prom.Registry();
  const registers = [r];
  populate({
    gauge: (name, labelNames) => {
      const g = new prom.Gauge({ name, help: 'Help.', labelNames, registers });
      return (labels, v) => g.set(labels, v);
    },
    counter: (name, labelNames) => {
      const c = new prom.Counter({ name, help: 'Help.', labelNames, registers });
      return (labels, v) => c.inc(labels, v);
    },
    histogram: (name, labelNames, buckets) => {
      const h = new prom.Histogram({ name, help: 'Help.', labelNames, buckets, registers });
      return (labels, v) => h.observe(labels, v);
    },
  });
  return { name: 'prom-client', render: () => r.metrics() };
}

/** Median milliseconds of a scrape, over SCRAPES scrapes (after one to warm up). */
async function scrapeMs(p: Population): Promise<{ ms: number; samples: number; bytes: number }> {
  const first = await p.render();
  const times: number[] = [];
  for (let i = 0; i < SCRAPES; i++) {
    const started = performance.now();
    await p.render();
    times.push(performance.now() - started);
  }
  const samples = first.split('\n').filter((l) => l && !l.startsWith('#')).length;
  return { ms: median(times), samples, bytes: Buffer.byteLength(first) };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const subjects = { certkit: ours(), 'prom-client': promClient() };
  const populations = { certkit: oursPopulation(), 'prom-client': promPopulation() };
  type Name = keyof typeof subjects;
  const ns: Record<Name, Record<Operation, number[]>> = {
    certkit: Object.fromEntries(OPERATIONS.map((o) => [o, []])) as unknown as Record<Operation, number[]>,
    'prom-client': Object.fromEntries(OPERATIONS.map((o) => [o, []])) as unknown as Record<
      Operation,
      number[]
    >,
  };
  const scrape: Record<Name, number[]> = { certkit: [], 'prom-client': [] };
  const series: Record<Name, { samples: number; bytes: number }> = {
    certkit: { samples: 0, bytes: 0 },
    'prom-client': { samples: 0, bytes: 0 },
  };
  // Warm both up first, so that neither is timed while the JIT still compiles it.
  for (const s of Object.values(subjects)) for (const o of OPERATIONS) nsPerOp(s[o]);
  for (let r = 0; r < ROUNDS; r++) {
    // ABBA: alternate which goes first, so that drift in the machine's load falls on both alike.
    const order: Name[] = r % 2 === 0 ? ['certkit', 'prom-client'] : ['prom-client', 'certkit'];
    for (const o of OPERATIONS) for (const name of order) ns[name][o].push(nsPerOp(subjects[name][o]));
    for (const name of order) {
      const s = await scrapeMs(populations[name]);
      scrape[name].push(s.ms);
      series[name] = { samples: s.samples, bytes: s.bytes };
    }
    log(`round ${r + 1}/${ROUNDS} done`);
  }
  const ratio = (a: number[], b: number[]) => median(a.map((x, i) => b[i] / x));
  const rows = OPERATIONS.map((o) => ({
    operation: o,
    certkitNs: round(median(ns.certkit[o])),
    promClientNs: round(median(ns['prom-client'][o])),
    /** prom-client's cost over ours: the median of per-round ratios. */
    promClientOverCertkit: round(ratio(ns.certkit[o], ns['prom-client'][o]), 2),
  }));
  const scrapeRow = {
    certkitMs: round(median(scrape.certkit), 2),
    promClientMs: round(median(scrape['prom-client']), 2),
    promClientOverCertkit: round(ratio(scrape.certkit, scrape['prom-client']), 2),
    samples: series.certkit.samples,
    promClientSamples: series['prom-client'].samples,
    bytes: series.certkit.bytes,
  };
  if (scrapeRow.samples !== scrapeRow.promClientSamples)
    throw new Error(
      `the two populations differ: ${scrapeRow.samples} vs ${scrapeRow.promClientSamples} samples`,
    );
  const names: Record<Operation, string> = {
    counterInc: 'counter inc, label object (2 labels, 16 series)',
    counterIncBound: 'counter inc, bound child',
    gaugeSet: 'gauge set, label object (1 label, 8 series)',
    gaugeSetBound: 'gauge set, bound child',
    histogramObserve: 'histogram observe, label object (1 label, 40 buckets)',
    histogramObserveBound: 'histogram observe, bound child',
  };
  const table = [
    `Per observation (ns/op, median of ${ROUNDS} ABBA rounds of ${OPS} calls; ratio = median of per-round ratios)`,
    '',
    '| operation | certkit | prom-client | prom-client / certkit |',
    '|---|---|---|---|',
    ...rows.map(
      (r) => `| ${names[r.operation]} | ${r.certkitNs} | ${r.promClientNs} | ${r.promClientOverCertkit} |`,
    ),
    '',
    `Scrape: text exposition of ${scrapeRow.samples} samples (${round(scrapeRow.bytes / 1024)} KiB): ${CERTS} Certificates' ` +
      `cert-manager gauges, ${CONTROLLERS} controllers' reconcile and workqueue metrics, the API server's request ` +
      `counter and duration histogram (ms, median of ${SCRAPES} scrapes per round)`,
    '',
    '| | certkit | prom-client | prom-client / certkit |',
    '|---|---|---|---|',
    `| scrape | ${scrapeRow.certkitMs} | ${scrapeRow.promClientMs} | ${scrapeRow.promClientOverCertkit} |`,
    '',
    `prom-client ${PROM_CLIENT_VERSION}; Node ${process.version}; 2 CPUs shared with whatever else runs.`,
  ].join('\n');
  await writeResults(
    'metrics',
    {
      rounds: ROUNDS,
      ops: OPS,
      certs: CERTS,
      controllers: CONTROLLERS,
      rows,
      scrape: scrapeRow,
      raw: { ns, scrape },
    },
    table,
  );
}

await main();
