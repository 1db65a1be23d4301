import { readFile } from 'node:fs/promises';
import { AdmissionWebhooks } from '../packages/apiserver/src/admission/chain.ts';
import type { Storage } from '../packages/apiserver/src/storage/types.ts';
import { WatchCache } from '../packages/apiserver/src/watchcache/cache.ts';
import {
  Client,
  flag,
  median,
  type ServerProcess,
  startServerProcess,
  throughput,
  writeResults,
} from './lib.ts';

/**
 * What the admission webhook chain costs a write that no webhook applies to: bench:apiserver's create workload
 * (1 KiB Secrets, 16 clients over HTTPS) against three servers, in interleaved rounds that rotate which one
 * goes first, so that drifting load on the machine falls on all alike:
 * - baseline: the server without the chain, from another checkout (--baseline=DIR, e.g. the commit before
 *   the chain extracted with `git archive`; its node_modules/@certkit must point into its own packages);
 * - new: this checkout, no webhook configured (the chain must be a no-op: the figure with a target);
 * - new + unrelated webhook: this checkout with one Mutating and one ValidatingWebhookConfiguration whose rules
 *   name another resource, so every create consults the index and the rules but calls nothing.
 * Processes on this shared machine differ by a few percent from run to run, more than the chain can cost, so
 * the bench also times, in process, all that a write does for admission when no webhook is configured: one
 * read of AdmissionWebhooks.active, over empty, ready caches (ns per read, median of 5 runs of 20 million).
 * The servers run with --sqlite-synchronous=normal, so that the fsync of a commit does not hide the CPU a
 * request costs. Two figures per variant, each the median of the per-round ratios to the baseline: creates/s,
 * and the server process's CPU time per create (utime + stime from /proc), which load from other processes
 * on the machine disturbs far less than it disturbs throughput.
 * Usage: npm run bench:admission -- --baseline=DIR [--secrets=N --rounds=N]
 */

const CONCURRENCY = 16;
const BASELINE = flag('baseline');
const secrets = Number(flag('secrets') ?? 60_000);
const rounds = Number(flag('rounds') ?? 20);
const payload = Buffer.alloc(768, 'x').toString('base64');
const GROUP = 'admissionregistration.k8s.io';

if (!BASELINE)
  throw new Error('--baseline=DIR is required: a checkout of the server without the admission chain');

/** One webhook whose rules name a resource the bench never writes (its URL is never dialled). */
function unrelatedWebhooks(kind: string) {
  return {
    apiVersion: `${GROUP}/v1`,
    kind,
    metadata: { name: 'unrelated' },
    webhooks: [
      {
        name: 'unrelated.bench.example.com',
        clientConfig: { url: 'https://127.0.0.1:9/never' },
        rules: [{ operations: ['*'], apiGroups: ['example.com'], apiVersions: ['*'], resources: ['*'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}

interface Variant {
  name: string;
  server: ServerProcess;
  client: Client;
  rates: number[];
  /** Server CPU microseconds per create, per round. */
  cpuPerCreate: number[];
}

/** The process's CPU time so far (utime + stime), in seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of /proc/PID/stat (utime, stime), counted from the state, which is field 3.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function start(name: string, root: string | undefined): Promise<Variant> {
  const server = await startServerProcess(undefined, ['--sqlite-synchronous=normal'], { root });
  const client = new Client(server, CONCURRENCY);
  await client.call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  // Warm up connections and the JIT before measuring.
  await throughput(1000, CONCURRENCY, async (i) => {
    await client.call('POST', '/api/v1/namespaces/bench/configmaps', { metadata: { name: `warm-${i}` } });
  });
  return { name, server, client, rates: [], cpuPerCreate: [] };
}

async function createSecrets(v: Variant, first: number, count: number): Promise<number> {
  const { opsPerSec } = await throughput(count, CONCURRENCY, async (i) => {
    const res = await v.client.call('POST', '/api/v1/namespaces/bench/secrets', {
      metadata: { name: `secret-${first + i}`, labels: { bench: 'true' } },
      data: { payload },
    });
    if (res.status !== 201) throw new Error(`${v.name}: create failed: ${res.status} ${res.text}`);
  });
  return opsPerSec;
}

/** ns per `active` read with no configuration: the whole admission cost of a write without webhooks. */
function activeReadNs(): number {
  const chain = new AdmissionWebhooks({ getNamespace: () => undefined });
  const empty = () => {
    // Never started: it reads no storage; marked ready as a started cache with nothing to list becomes.
    const cache = new WatchCache({} as Storage, '/registry/admissionregistration.k8s.io/bench/', {}, false);
    cache.ready.setReady();
    return cache;
  };
  chain.mutatingIndex.attach(empty(), () => Promise.resolve([]));
  chain.validatingIndex.attach(empty(), () => Promise.resolve([]));
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const reads = 20_000_000;
    let active = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < reads; i++) if (chain.active) active++;
    times.push(Number(process.hrtime.bigint() - started) / reads);
    if (active !== 0) throw new Error('the chain is active without configurations');
  }
  return Number(median(times).toFixed(2));
}

const activeNs = activeReadNs();
const variants = [
  await start('baseline', BASELINE),
  await start('new', undefined),
  await start('new + unrelated webhook', undefined),
];
try {
  const configured = variants[2].client;
  for (const [kind, resource] of [
    ['MutatingWebhookConfiguration', 'mutatingwebhookconfigurations'],
    ['ValidatingWebhookConfiguration', 'validatingwebhookconfigurations'],
  ]) {
    const res = await configured.call('POST', `/apis/${GROUP}/v1/${resource}`, unrelatedWebhooks(kind));
    if (res.status !== 201) throw new Error(`configuring ${kind} failed: ${res.status} ${res.text}`);
  }
  const perRound = Math.ceil(secrets / rounds);
  for (let r = 0; r < rounds; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      const cpuBefore = await cpuSeconds(v.server.pid);
      v.rates.push(await createSecrets(v, r * perRound, perRound));
      v.cpuPerCreate.push((((await cpuSeconds(v.server.pid)) - cpuBefore) * 1e6) / perRound);
    }
  }
  const base = variants[0];
  const ratio = (v: Variant) => Number(median(v.rates.map((rate, i) => rate / base.rates[i])).toFixed(3));
  const cpuRatio = (v: Variant) =>
    Number(median(v.cpuPerCreate.map((cpu, i) => cpu / base.cpuPerCreate[i])).toFixed(3));
  // The whole run's CPU over the baseline's: each round's creates weigh alike, whatever its noise.
  const totalCpuRatio = (v: Variant) =>
    Number(
      (v.cpuPerCreate.reduce((a, b) => a + b, 0) / base.cpuPerCreate.reduce((a, b) => a + b, 0)).toFixed(3),
    );
  const results = {
    date: new Date().toISOString(),
    concurrency: CONCURRENCY,
    secrets,
    rounds,
    createsPerSec: Object.fromEntries(variants.map((v) => [v.name, Math.round(median(v.rates))])),
    cpuMicrosecondsPerCreate: Object.fromEntries(
      variants.map((v) => [v.name, Math.round(median(v.cpuPerCreate))]),
    ),
    ratioToBaseline: {
      noWebhooks: {
        createsPerSec: ratio(variants[1]),
        cpuPerCreate: cpuRatio(variants[1]),
        totalCpu: totalCpuRatio(variants[1]),
      },
      unrelatedWebhook: {
        createsPerSec: ratio(variants[2]),
        cpuPerCreate: cpuRatio(variants[2]),
        totalCpu: totalCpuRatio(variants[2]),
      },
    },
    perRound: Object.fromEntries(
      variants.map((v) => [
        v.name,
        { createsPerSec: v.rates.map(Math.round), cpuPerCreate: v.cpuPerCreate.map(Math.round) },
      ]),
    ),
    inProcessActiveReadNs: activeNs,
    loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
    targets: { noWebhooksCpuRatio: 1.03 },
  };
  const table = [
    '| measure | result | target |',
    '|---|---|---|',
    ...variants.map(
      (v) =>
        `| ${v.name}: creates/s; server CPU per create (1 KiB Secrets, ${CONCURRENCY} clients, HTTPS, synchronous=normal; medians of ${rounds} rounds) | ${results.createsPerSec[v.name]}; ${results.cpuMicrosecondsPerCreate[v.name]} µs | — |`,
    ),
    `| no webhook configured / baseline without the chain: CPU per create (median of the rounds' ratios) | ${results.ratioToBaseline.noWebhooks.cpuPerCreate} | ≤ 1.03 |`,
    `| no webhook configured / baseline: the whole run's server CPU | ${results.ratioToBaseline.noWebhooks.totalCpu} | — |`,
    `| no webhook configured / baseline: creates/s (median of the rounds' ratios) | ${results.ratioToBaseline.noWebhooks.createsPerSec} | — |`,
    `| one unrelated webhook of each kind / baseline: CPU per create; whole run's CPU; creates/s | ${results.ratioToBaseline.unrelatedWebhook.cpuPerCreate}; ${results.ratioToBaseline.unrelatedWebhook.totalCpu}; ${results.ratioToBaseline.unrelatedWebhook.createsPerSec} | — |`,
    `| in process: one read of AdmissionWebhooks.active with nothing configured (what a write does for admission then, besides a few branches on undefined; median of 5 × 20M) | ${activeNs} ns | — |`,
    `| load average at the end (2 cores, shared) | ${results.loadAverage} | — |`,
  ].join('\n');
  await writeResults('admission', results, table);
} finally {
  for (const v of variants) {
    v.client.close();
    await v.server.stop();
  }
}
