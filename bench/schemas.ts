import { execFileSync } from 'node:child_process';
import { Client, median, rssMiB, startServerProcess, waitReadyz, writeResults } from './lib.ts';

/**
 * What decoding built-in kinds by their Kubernetes types (and serving them in OpenAPI) costs in memory: the
 * whole-process RSS of `certkit up`, idle, against a checkout from before the change, alternately in one run
 * (the machine is noisy: compare within a run). Then, for both, after one write of each built-in kind (which
 * loads those kinds' types) and after every OpenAPI document has been asked for (which builds and caches them).
 *
 * Usage: npm run bench:schemas -- --baseline=/path/to/checkout-before [--rounds=5]
 * The baseline checkout needs its own node_modules (e.g. `git archive` of the earlier commit plus `npm ci`).
 */

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const BASELINE = arg('baseline');
const ROUNDS = Number(arg('rounds') ?? 5);
const SETTLE_MS = 5000;

function log(msg: string) {
  process.stderr.write(`[bench:schemas] ${msg}\n`);
}

/** RSS sampled a few times over a second, the median: one reading can catch a GC in progress. */
async function steadyRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(await rssMiB(pid));
    await new Promise((r) => setTimeout(r, 250));
  }
  return median(samples);
}

interface Figures {
  idle: number;
  afterWrites: number;
  afterOpenApi: number;
}

const NS = '/api/v1/namespaces/default';
const WRITES: [string, unknown][] = [
  [`${NS}/secrets`, { metadata: { name: 'bench' }, stringData: { a: 'b' } }],
  [`${NS}/configmaps`, { metadata: { name: 'bench' }, data: { a: 'b' } }],
  [`${NS}/serviceaccounts`, { metadata: { name: 'bench' } }],
  [`${NS}/events`, { metadata: { name: 'bench' }, involvedObject: { kind: 'ConfigMap', name: 'bench' } }],
  ['/apis/coordination.k8s.io/v1/namespaces/default/leases', { metadata: { name: 'bench' }, spec: {} }],
  ['/api/v1/namespaces', { metadata: { name: 'bench' } }],
];

async function measure(root: string | undefined): Promise<Figures> {
  const server = await startServerProcess(undefined, [], { command: 'up', root });
  const client = new Client(server);
  try {
    await waitReadyz(client);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idle = await steadyRss(server.pid);
    for (const [path, body] of WRITES) {
      const res = await client.call('POST', path, body);
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    }
    const afterWrites = await steadyRss(server.pid);
    const root3 = JSON.parse((await client.call('GET', '/openapi/v3')).text) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    for (const { serverRelativeURL } of Object.values(root3.paths))
      await client.call('GET', serverRelativeURL);
    await client.call('GET', '/openapi/v2');
    const afterOpenApi = await steadyRss(server.pid);
    return { idle, afterWrites, afterOpenApi };
  } finally {
    client.close();
    await server.stop();
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('--baseline=<checkout before the change> is required');
  const baselineCommit = execFileSync('git', ['-C', BASELINE, 'rev-parse', 'HEAD'], { encoding: 'utf8' })
    .trim()
    .slice(0, 12);
  const runs: { baseline: Figures[]; current: Figures[] } = { baseline: [], current: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so that drift in the machine's load falls on both alike.
    const order = r % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
    for (const which of order) {
      const figures = await measure(which === 'baseline' ? BASELINE : undefined);
      runs[which].push(figures);
      log(`round ${r + 1} ${which}: ${JSON.stringify(figures)}`);
    }
  }
  const med = (which: 'baseline' | 'current', key: keyof Figures) =>
    round2(median(runs[which].map((f) => f[key])));
  const rows: { phase: string; baseline: number; current: number; difference: number; ratio: number }[] = (
    ['idle', 'afterWrites', 'afterOpenApi'] as const
  ).map((key) => ({
    phase: key as string,
    baseline: med('baseline', key),
    current: med('current', key),
    difference: round2(med('current', key) - med('baseline', key)),
    ratio: round2(med('current', key) / med('baseline', key)),
  }));
  // Growth within one process is steadier than RSS across processes, which varies by a few MiB run to run.
  const growth = (which: 'baseline' | 'current', from: keyof Figures, to: keyof Figures) =>
    round2(median(runs[which].map((f) => f[to] - f[from])));
  for (const [phase, from, to] of [
    ['writesGrowth', 'idle', 'afterWrites'],
    ['openApiGrowth', 'afterWrites', 'afterOpenApi'],
  ] as const) {
    const baseline = growth('baseline', from, to);
    const current = growth('current', from, to);
    rows.push({ phase, baseline, current, difference: round2(current - baseline), ratio: NaN });
  }
  const labels: Record<string, string> = {
    idle: 'idle `certkit up`',
    afterWrites: 'after one write of each built-in kind',
    afterOpenApi: 'after every /openapi/v3 document and /openapi/v2',
    writesGrowth: 'growth in the process: one write of each built-in kind',
    openApiGrowth: 'growth in the process: every OpenAPI document',
  };
  const table = [
    `RSS of \`certkit up\` (MiB, median of ${ROUNDS} alternating rounds; baseline ${baselineCommit})`,
    '',
    '| phase | baseline | with typed decoding + OpenAPI schemas | difference | ratio |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${labels[r.phase]} | ${r.baseline} | ${r.current} | ${r.difference} | ${Number.isNaN(r.ratio) ? '—' : r.ratio} |`,
    ),
  ].join('\n');
  await writeResults('schemas', { baselineCommit, rounds: ROUNDS, rows, runs }, table);
}

await main();
