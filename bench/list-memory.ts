import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, rssMiB, type ServerProcess, startServerProcess, throughput, waitReadyz } from './lib.ts';
import { flag, listFlag, writeResults } from './lib.ts';

/**
 * The API server's memory under many concurrent LISTs of a large namespace (issue 20, item 5): a namespace
 * of ConfigMaps totalling --mb megabytes, listed --concurrency times at once over HTTPS, each client
 * reading its body as fast as it can. Two namespaces: a few hundred large ConfigMaps (--large-kb each), and
 * tens of thousands of small ones (--small-bytes each), whose lists are mostly per-object overhead.
 *
 * Each list is made twice: without a resourceVersion (a consistent read, from storage: what curl, client-node
 * and client-go's plain List send) and with resourceVersion=0 (from the watch cache). Every measurement runs
 * on a fresh `certkit apiserver` process, started on a copy of one seeded data dir; the figure is its RSS
 * growth, from VmRSS before the lists to the peak of VmRSS sampled every 20 ms while they run. Every answer
 * must be 200 or 429; the bodies' SHA-256 must all be equal, and equal to the baseline's.
 *
 * With --baseline=DIR (another checkout, e.g. /work/main before the change) the same runs are made against
 * its server, and the ratios reported.
 *
 * Usage: npm run bench:list-memory [-- --mb=55 --concurrency=30 --small-concurrency=20 --large-kb=100
 *        --small-bytes=700 --baseline=DIR --only=large|small --apiserver-node-args=a,b]
 */

const MB = Number(flag('mb') ?? 55);
const CONCURRENCY = Number(flag('concurrency') ?? 30);
const SMALL_CONCURRENCY = Number(flag('small-concurrency') ?? 20);
const LARGE_KB = Number(flag('large-kb') ?? 100);
const SMALL_BYTES = Number(flag('small-bytes') ?? 700);
const BASELINE = flag('baseline');
const ONLY = flag('only');
const NODE_ARGS = listFlag('apiserver-node-args');
const NS = 'bench';
/** The figure: RSS growth under this, every request answered 200 or 429. */
const LIMIT_MIB = 300;

const run = promisify(execFile);

function log(msg: string) {
  process.stderr.write(`[bench:list-memory] ${msg}\n`);
}

interface Scenario {
  name: 'large' | 'small';
  objects: number;
  bytesPerObject: number;
  concurrency: number;
}

interface Answer {
  /** The HTTP status, or the error that ended the request (e.g. ECONNRESET when the server died). */
  status: number | string;
  bytes: number;
  sha256: string;
}

/** A LIST read to its end without keeping it: its status, size and hash. */
function list(server: ServerProcess, agent: Agent, path: string): Promise<Answer> {
  const failed = (err: Error & { code?: string }) => ({
    status: err.code ?? err.message,
    bytes: 0,
    sha256: '',
  });
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      { agent, headers: { Authorization: `Bearer ${server.token}`, Accept: 'application/json' } },
      (res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          hash.update(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, sha256: hash.digest('hex') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  }).catch(failed);
}

/** Fills the namespace through the API, --mb megabytes in `objects` ConfigMaps. */
async function seed(server: ServerProcess, scenario: Scenario): Promise<void> {
  const client = new Client(server, 16);
  try {
    await waitReadyz(client);
    const ns = await client.call('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
    // Text of the size asked for, with characters JSON escapes and multi-byte ones, so that encoding is
    // exercised as with real data.
    const filler = (i: number) => {
      const unit = `line ${i} "quoted" \\ é ✓\n`;
      return unit.repeat(Math.ceil(scenario.bytesPerObject / unit.length)).slice(0, scenario.bytesPerObject);
    };
    const result = await throughput(scenario.objects, 16, async (i) => {
      const res = await client.call('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        metadata: { name: `cm-${String(i).padStart(6, '0')}`, labels: { bench: 'list-memory' } },
        data: { payload: filler(i) },
      });
      if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text}`);
    });
    log(`seeded ${scenario.objects} ConfigMaps in ${result.seconds.toFixed(1)} s`);
  } finally {
    client.close();
  }
}

interface Measurement {
  server: 'baseline' | 'new';
  scenario: Scenario['name'];
  read: 'storage' | 'cache';
  concurrency: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  growthMiB: number;
  seconds: number;
  statuses: Record<string, number>;
  /** How the server process ended when it did during the lists (e.g. killed for running out of memory). */
  serverExit?: string;
  bodyMiB: number;
  sha256: string[];
}

async function measure(
  root: string | undefined,
  dataDir: string,
  serverName: Measurement['server'],
  scenario: Scenario,
  read: Measurement['read'],
): Promise<Measurement> {
  const copy = await mkdtemp(join(tmpdir(), 'certkit-bench-list-'));
  await run('cp', ['-a', `${dataDir}/.`, copy]);
  const server = await startServerProcess(copy, [], { root, nodeArgs: NODE_ARGS });
  const client = new Client(server, 2);
  const agent = new Agent({ ca: server.ca, keepAlive: false, maxSockets: Infinity });
  let serverExit: string | undefined;
  server.child.once('exit', (code, signal) => {
    serverExit = `exited with ${signal ?? code}`;
  });
  try {
    await waitReadyz(client);
    // The watch cache holds the namespace once /readyz passes; let the start's garbage settle.
    await new Promise((r) => setTimeout(r, 2000));
    const before = await rssMiB(server.pid);
    let peak = before;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssMiB(server.pid).catch(() => 0));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const path = `/api/v1/namespaces/${NS}/configmaps${read === 'cache' ? '?resourceVersion=0' : ''}`;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: scenario.concurrency }, () => list(server, agent, path)),
    );
    const seconds = (performance.now() - started) / 1000;
    sampling = false;
    await sampler;
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const ok = answers.filter((a) => a.status === 200);
    const m: Measurement = {
      server: serverName,
      scenario: scenario.name,
      read,
      concurrency: scenario.concurrency,
      rssBeforeMiB: Math.round(before),
      rssPeakMiB: Math.round(peak),
      growthMiB: Math.round(peak - before),
      seconds: Math.round(seconds * 10) / 10,
      statuses,
      serverExit,
      bodyMiB: Math.round(((ok[0]?.bytes ?? 0) / 2 ** 20) * 10) / 10,
      sha256: [...new Set(ok.map((a) => a.sha256))],
    };
    log(JSON.stringify(m));
    return m;
  } finally {
    agent.destroy();
    client.close();
    if (serverExit === undefined) await server.stop();
    await rm(copy, { recursive: true, force: true });
  }
}

/** Checks one list body whole: it parses, and holds every seeded ConfigMap. */
async function checkBody(dataDir: string, scenario: Scenario): Promise<void> {
  const copy = await mkdtemp(join(tmpdir(), 'certkit-bench-list-'));
  await run('cp', ['-a', `${dataDir}/.`, copy]);
  const server = await startServerProcess(copy);
  const client = new Client(server, 1);
  try {
    await waitReadyz(client);
    for (const query of ['', '?resourceVersion=0']) {
      const res = await client.call('GET', `/api/v1/namespaces/${NS}/configmaps${query}`);
      const items = (JSON.parse(res.text) as { items: unknown[] }).items;
      if (res.status !== 200 || items.length !== scenario.objects) {
        throw new Error(`list${query}: ${res.status}, ${items.length} items of ${scenario.objects}`);
      }
    }
  } finally {
    client.close();
    await server.stop();
    await rm(copy, { recursive: true, force: true });
  }
}

const bytes = MB * 1e6;
const scenarios: Scenario[] = [
  {
    name: 'large' as const,
    objects: Math.round(bytes / (LARGE_KB * 1000)),
    bytesPerObject: LARGE_KB * 1000,
    concurrency: CONCURRENCY,
  },
  {
    name: 'small' as const,
    objects: Math.round(bytes / SMALL_BYTES),
    bytesPerObject: SMALL_BYTES,
    concurrency: SMALL_CONCURRENCY,
  },
].filter((s) => !ONLY || s.name === ONLY);

const servers: { name: Measurement['server']; root?: string }[] = [
  ...(BASELINE ? [{ name: 'baseline' as const, root: BASELINE }] : []),
  { name: 'new' as const },
];

const measurements: Measurement[] = [];
const baselineCommit = BASELINE
  ? (await run('git', ['-C', BASELINE, 'rev-parse', '--short', 'HEAD'])).stdout.trim()
  : undefined;
for (const scenario of scenarios) {
  const seeded = await startServerProcess();
  let dataDir = '';
  try {
    log(`scenario ${scenario.name}: ${scenario.objects} ConfigMaps of ${scenario.bytesPerObject} bytes`);
    await seed(seeded, scenario);
    dataDir = await mkdtemp(join(tmpdir(), 'certkit-bench-seeded-'));
    await run('cp', ['-a', `${seeded.dataDir}/.`, dataDir]);
  } finally {
    await seeded.stop();
  }
  try {
    await checkBody(dataDir, scenario);
    for (const read of ['storage', 'cache'] as const) {
      for (const server of servers) {
        measurements.push(await measure(server.root, dataDir, server.name, scenario, read));
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const failures: string[] = [];
for (const m of measurements) {
  const answered = Object.entries(m.statuses).every(([code]) => code === '200' || code === '429');
  if (m.server === 'new' && m.growthMiB >= LIMIT_MIB)
    failures.push(`${m.scenario}/${m.read}: growth ${m.growthMiB} MiB`);
  if (m.server === 'new' && !answered)
    failures.push(`${m.scenario}/${m.read}: ${JSON.stringify(m.statuses)}`);
  if (m.sha256.length > 1)
    failures.push(`${m.server} ${m.scenario}/${m.read}: bodies differ between requests`);
  const other = measurements.find(
    (o) => o !== m && o.scenario === m.scenario && o.read === m.read && o.server !== m.server,
  );
  if (other && other.sha256[0] !== m.sha256[0] && m.server === 'new')
    failures.push(`${m.scenario}/${m.read}: body differs from the baseline's`);
}

const row = (m: Measurement) => {
  const base = measurements.find(
    (o) => o.server === 'baseline' && o.scenario === m.scenario && o.read === m.read,
  );
  const ratio = base && m.server === 'new' ? (m.growthMiB / base.growthMiB).toFixed(3) : '';
  const codes =
    Object.entries(m.statuses)
      .map(([code, n]) => `${n}×${code}`)
      .join(' ') + (m.serverExit ? ` (server ${m.serverExit})` : '');
  return `| ${m.scenario} | ${m.read} | ${m.server} | ${m.concurrency} | ${m.bodyMiB} | ${m.rssBeforeMiB} | ${m.rssPeakMiB} | **${m.growthMiB}** | ${ratio} | ${m.seconds} | ${codes} |`;
};
const table = [
  `# bench:list-memory`,
  '',
  `Server RSS growth (peak VmRSS sampled every 20 ms during the lists − VmRSS before them) while N clients LIST a`,
  `namespace of ~${MB} MB of ConfigMaps at once over HTTPS, each on a fresh \`certkit apiserver\` process.`,
  `"storage": no resourceVersion (consistent read, paged from SQLite); "cache": resourceVersion=0 (watch cache).`,
  `Figure: growth under ${LIMIT_MIB} MiB, every request answered 200 or 429.`,
  BASELINE ? `Baseline: ${BASELINE} at ${baselineCommit}; ratio = new growth / baseline growth.` : '',
  '',
  '| namespace | read | server | lists at once | body MiB | RSS before MiB | RSS peak MiB | growth MiB | ratio | seconds | answers |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...measurements.map(row),
  '',
  failures.length === 0
    ? `All runs of the new server under ${LIMIT_MIB} MiB growth, all answered 200 or 429, bodies identical${BASELINE ? " to the baseline's" : ''}.`
    : `FAILED: ${failures.join('; ')}`,
].join('\n');
await writeResults(
  'list-memory',
  {
    mb: MB,
    limitMiB: LIMIT_MIB,
    baseline: BASELINE ? { dir: BASELINE, commit: baselineCommit } : undefined,
    scenarios,
    measurements,
    failures,
  },
  table,
);
if (failures.length > 0) process.exitCode = 1;
