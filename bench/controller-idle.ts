import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from './controller-lib.ts';
import { median, rssMiB, writeResults } from './lib.ts';
import { freePort } from '../packages/testenv/src/net/free-ports.ts';

/**
 * What an idle `certkit controller` costs, against a checkout from before a change, alternately in one run
 * (the machine is noisy: compare within a run). Each controller runs as users run it, its metrics endpoint
 * on (prom-client's process collectors are registered by what serves /metrics), against one `certkit
 * apiserver` with the cert-manager.io CRDs and nothing else. Once /readyz passes and it has settled:
 *   - whole-process RSS (VmRSS from /proc, median of 5 readings over a second);
 *   - CPU time (utime + stime from /proc/PID/stat) over IDLE_MS, as ms of CPU per second idle: what timers
 *     that wake an idle process cost;
 *   - RSS again after one scrape of /metrics, as Prometheus would make every 15 to 60 s.
 *
 * Usage: npm run bench:controller-idle -- --baseline=/path/to/checkout-before [--baseline-label=COMMIT] [--rounds=5]
 * The baseline checkout needs its own node_modules (e.g. `git archive` of the earlier commit plus `npm ci`).
 */

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const BASELINE = arg('baseline');
/** What to call the baseline in the results when it is not a git checkout (e.g. a `git archive` of a commit). */
const BASELINE_LABEL = arg('baseline-label');
const ROUNDS = Number(arg('rounds') ?? 5);
const SETTLE_MS = 5000;
const IDLE_MS = 10_000;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function log(msg: string) {
  process.stderr.write(`[bench:controller-idle] ${msg}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RSS sampled a few times over a second, the median: one reading can catch a GC in progress. */
async function steadyRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(await rssMiB(pid));
    await sleep(250);
  }
  return median(samples);
}

/** User + system CPU time of a process so far, in ms (from /proc/PID/stat, in clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Figures {
  idleRss: number;
  idleCpuMsPerSec: number;
  afterScrapeRss: number;
}

async function measure(checkout: string, kubeconfig: string): Promise<Figures> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(checkout, 'packages/cli/src/main.ts'),
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--leader-elect=false',
      `--metrics-bind-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    const deadline = Date.now() + 60_000;
    while (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (Date.now() > deadline) throw new Error('the controller did not get ready');
      await sleep(100);
    }
    await sleep(SETTLE_MS);
    const idleRss = await steadyRss(child.pid!);
    const cpuBefore = await cpuMs(child.pid!);
    await sleep(IDLE_MS);
    const idleCpuMsPerSec = (await cpuMs(child.pid!)) - cpuBefore;
    const scraped = await fetch(`${url}/metrics`).then((r) => r.text());
    if (!scraped.includes('controller_runtime_reconcile_total')) throw new Error('unexpected /metrics');
    await sleep(1000);
    const afterScrapeRss = await steadyRss(child.pid!);
    return { idleRss, idleCpuMsPerSec: idleCpuMsPerSec / (IDLE_MS / 1000), afterScrapeRss };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('--baseline=<checkout before the change> is required');
  const commit = (dir: string) => {
    if (dir === BASELINE && BASELINE_LABEL) return BASELINE_LABEL;
    try {
      return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim().slice(0, 12);
    } catch {
      return dir;
    }
  };
  const cluster = await startCluster();
  const runs: { baseline: Figures[]; current: Figures[] } = { baseline: [], current: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so that drift in the machine's load falls on both alike.
      const order = r % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
      for (const which of order) {
        const figures = await measure(which === 'baseline' ? BASELINE : root, cluster.kubeconfigPath);
        runs[which].push(figures);
        log(`round ${r + 1} ${which}: ${JSON.stringify(figures)}`);
      }
    }
  } finally {
    await cluster.stop();
  }
  const keys = ['idleRss', 'idleCpuMsPerSec', 'afterScrapeRss'] as const;
  const rows = keys.map((key) => {
    const baseline = round2(median(runs.baseline.map((f) => f[key])));
    const current = round2(median(runs.current.map((f) => f[key])));
    return { key, baseline, current, difference: round2(current - baseline) };
  });
  const names: Record<(typeof keys)[number], string> = {
    idleRss: 'RSS idle, synced, not yet scraped (MiB)',
    idleCpuMsPerSec: `CPU while idle (ms per second, over ${IDLE_MS / 1000} s)`,
    afterScrapeRss: 'RSS after one scrape of /metrics (MiB)',
  };
  const table = [
    `Idle \`certkit controller\` (metrics endpoint on, no Certificates; median of ${ROUNDS} alternating rounds; ` +
      `baseline ${commit(BASELINE)}, current ${commit(root)})`,
    '',
    '| | baseline | current | difference |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${names[r.key]} | ${r.baseline} | ${r.current} | ${r.difference} |`),
    '',
    `Whole-process VmRSS from /proc; Node ${process.version}; 2 CPUs shared with whatever else runs.`,
  ].join('\n');
  await writeResults(
    'controller-idle',
    { baselineCommit: commit(BASELINE), rounds: ROUNDS, rows, runs },
    table,
  );
}

await main();
