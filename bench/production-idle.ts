import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuilds } from '../scripts/build.ts';
import { startCluster } from './controller-lib.ts';
import { median, rssMiB, writeResults } from './lib.ts';

/**
 * What an idle certkit costs as production runs it (compiled JavaScript from dist/, docs/adr/1103) against
 * the TypeScript sources stripped at load, and with V8 flags for a small heap. Two processes, each started
 * as a user starts it, `node [NODE FLAGS] packages/cli/bin/certkit.js …`, and left idle:
 *   - `certkit controller` (metrics endpoint on) against one `certkit apiserver` with the cert-manager.io CRDs
 *     and nothing else, once /readyz passes;
 *   - `certkit up` (API server and controller in one process) on a fresh data dir, once it says the
 *     controller runs.
 * After SETTLE_MS, whole-process RSS (VmRSS from /proc, median of 5 readings over a second), the peak RSS so
 * far (VmHWM) and the time from spawn to ready. Every mode runs once per round, the order rotating from one
 * round to the next so that drift in the machine's load falls on all alike; figures are medians over rounds.
 *
 * Modes: `sources` (`--conditions=source`: Node strips the TypeScript at load, as tests run), `compiled`
 * (dist/, no flags), `compiled + flags` (dist/ with PRODUCTION_NODE_FLAGS, what `npm start` and the image
 * run), and each candidate flag set below on dist/, which is how the production flags were chosen.
 *
 * Usage: npm run bench:production-idle [-- --rounds=5 --no-candidates]
 * Needs a current build (`npm run build`); refuses a stale one.
 */

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 5);
const SETTLE_MS = 5000;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'packages/cli/bin/certkit.js');

/**
 * The node flags production runs with, read from where they are set: `npm start` in package.json (the
 * container image's ENTRYPOINT repeats them; packages/cli/src/production-entry.test.ts keeps the two equal).
 */
function productionNodeFlags(): string[] {
  const start = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  const m = /\bnode((?: --[\w-]+(?:=\S+)?)*) packages\/cli\/bin\/certkit\.js\b/.exec(start);
  if (!m) throw new Error(`package.json: start does not run node … packages/cli/bin/certkit.js: ${start}`);
  return m[1].split(' ').filter(Boolean);
}
const PRODUCTION_NODE_FLAGS = productionNodeFlags();

interface Mode {
  name: string;
  nodeArgs: string[];
}

const MODES: Mode[] = [
  { name: 'sources', nodeArgs: ['--conditions=source'] },
  { name: 'compiled', nodeArgs: [] },
  { name: 'compiled + flags', nodeArgs: PRODUCTION_NODE_FLAGS },
];

/** Flag sets tried on dist/ (beside the chosen ones) so that the choice is a measurement. */
const CANDIDATES: Mode[] = [
  { name: 'compiled --max-semi-space-size=1', nodeArgs: ['--max-semi-space-size=1'] },
  { name: 'compiled --max-semi-space-size=2', nodeArgs: ['--max-semi-space-size=2'] },
  { name: 'compiled --max-semi-space-size=4', nodeArgs: ['--max-semi-space-size=4'] },
  { name: 'compiled --optimize-for-size', nodeArgs: ['--optimize-for-size'] },
  {
    name: 'compiled --max-semi-space-size=1 --optimize-for-size',
    nodeArgs: ['--max-semi-space-size=1', '--optimize-for-size'],
  },
  { name: 'compiled --no-opt', nodeArgs: ['--no-opt'] },
  { name: 'compiled --jitless', nodeArgs: ['--jitless'] },
];

function log(msg: string) {
  process.stderr.write(`[bench:production-idle] ${msg}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** RSS sampled a few times over a second, the median: one reading can catch a GC in progress. */
async function steadyRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(await rssMiB(pid));
    await sleep(250);
  }
  return median(samples);
}

interface Figures {
  rss: number;
  peakRss: number;
  readyMs: number;
}

/**
 * `node NODE_ARGS bin/certkit.js ARGS` with NODE_OPTIONS cleared: the npm script that runs this bench sets the
 * `source` condition there (.npmrc), and each mode says for itself whether it wants it.
 */
function startCertkit(mode: Mode, args: string[]): ChildProcess {
  return spawn(process.execPath, [...mode.nodeArgs, BIN, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

async function settleAndMeasure(child: ChildProcess, started: number): Promise<Figures> {
  const readyMs = Math.round(performance.now() - started);
  await sleep(SETTLE_MS);
  const rss = await steadyRss(child.pid!);
  const peakRss = await rssMiB(child.pid!, 'VmHWM');
  return { rss, peakRss, readyMs };
}

async function measureController(mode: Mode, kubeconfig: string): Promise<Figures> {
  const port = await freePort();
  const started = performance.now();
  const child = startCertkit(mode, [
    'controller',
    '--kubeconfig',
    kubeconfig,
    '--leader-elect=false',
    `--metrics-bind-address=127.0.0.1:${port}`,
  ]);
  child.stdout!.resume();
  try {
    const deadline = Date.now() + 60_000;
    while (
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (child.exitCode !== null) throw new Error(`the controller exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error('the controller did not get ready');
      await sleep(50);
    }
    return await settleAndMeasure(child, started);
  } finally {
    await stop(child);
  }
}

async function measureUp(mode: Mode): Promise<Figures> {
  const dataDir = await mkdtemp(join(tmpdir(), 'certkit-bench-up-'));
  const started = performance.now();
  const child = startCertkit(mode, ['up', '--data-dir', dataDir, '--port', '0']);
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('certificate controller running')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`certkit up exited with ${code}: ${out}`)));
    });
    return await settleAndMeasure(child, started);
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const stale = staleBuilds();
  if (stale.length > 0) throw new Error(`stale or missing build (${stale.join(', ')}): run npm run build`);
  const modes = process.argv.includes('--no-candidates') ? MODES : [...MODES, ...CANDIDATES];
  const runs = new Map(modes.map((m) => [m.name, { controller: [] as Figures[], up: [] as Figures[] }]));
  const cluster = await startCluster();
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = [...modes.slice(r % modes.length), ...modes.slice(0, r % modes.length)];
      for (const mode of order) {
        const controller = await measureController(mode, cluster.kubeconfigPath);
        const up = await measureUp(mode);
        runs.get(mode.name)!.controller.push(controller);
        runs.get(mode.name)!.up.push(up);
        log(`round ${r + 1} ${mode.name}: controller ${JSON.stringify(controller)} up ${JSON.stringify(up)}`);
      }
    }
  } finally {
    await cluster.stop();
  }
  const med = (figures: Figures[], key: keyof Figures) => round2(median(figures.map((f) => f[key])));
  const rows = modes.map((mode) => {
    const { controller, up } = runs.get(mode.name)!;
    return {
      mode: mode.name,
      nodeArgs: mode.nodeArgs,
      controller: {
        rss: med(controller, 'rss'),
        peakRss: med(controller, 'peakRss'),
        readyMs: med(controller, 'readyMs'),
      },
      up: { rss: med(up, 'rss'), peakRss: med(up, 'peakRss'), readyMs: med(up, 'readyMs') },
    };
  });
  const base = rows[0];
  const ratio = (n: number, of: number) => (n / of).toFixed(2);
  const table = [
    `Idle certkit, sources vs compiled vs compiled + V8 flags (median of ${ROUNDS} rotating rounds; ` +
      `production flags: \`${PRODUCTION_NODE_FLAGS.join(' ')}\`)`,
    '',
    '| mode | node flags | controller RSS (MiB) | × sources | controller peak | controller ready (ms) | up RSS (MiB) | × sources | up peak | up ready (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.nodeArgs.map((a) => `\`${a}\``).join(' ')} | ${r.controller.rss} | ` +
        `${ratio(r.controller.rss, base.controller.rss)} | ${r.controller.peakRss} | ${r.controller.readyMs} | ` +
        `${r.up.rss} | ${ratio(r.up.rss, base.up.rss)} | ${r.up.peakRss} | ${r.up.readyMs} |`,
    ),
    '',
    `\`certkit controller\`: metrics endpoint on, against one \`certkit apiserver\` with the CRDs and no objects, ` +
      `measured ${SETTLE_MS / 1000} s after /readyz. \`certkit up\`: fresh data dir, measured ${SETTLE_MS / 1000} s ` +
      'after the controller runs. RSS = VmRSS from /proc (median of 5 readings over a second), peak = VmHWM. ' +
      `Node ${process.version}; 2 CPUs shared with whatever else runs.`,
  ].join('\n');
  await writeResults(
    'production-idle',
    { rounds: ROUNDS, settleMs: SETTLE_MS, rows, runs: Object.fromEntries(runs) },
    table,
  );
}

await main();
