import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, SharedInformerFactory, silentLogger } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Labels } from '../packages/certificates/src/api/constants.ts';
import type { Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import { certificatesRef, issuersRef } from '../packages/certificates/src/controllers/refs.ts';
import { encodePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';
import { type Cluster, createNamespace, round, startCluster } from './controller-lib.ts';
import { throughput, writeResults } from './lib.ts';

/**
 * The certificate controller's memory per managed Certificate. `certkit apiserver` and `certkit controller`
 * run as processes of their own, started through the CLI; one CA Issuer issues N ECDSA P-256 Certificates,
 * created 16 at a time. For each N and each checkout (this one, and with --baseline=DIR another, e.g. main,
 * whose controller runs against the same API server code), from /proc (RSS sampled every 200 ms):
 *
 *   empty      the controller idle on the empty cluster (the CA Issuer only): steady RSS, live heap
 *   issuance   until every Certificate is Ready: time, the controller's peak RSS
 *   steady     after issuance: steady RSS, live heap
 *   restart    the controller stopped (SIGTERM) and started again over them: start-up peak (VmHWM), steady
 *              RSS, live heap
 *
 * Steady = mean RSS over 3 s after 10 s with nothing to do. Live heap = heapUsed after forced GCs, asked of
 * the controller through bench/heap-reporter.ts (preloaded, --expose-gc); RSS is read before it, so the forced
 * GCs do not flatter it. Growth per Certificate = (restart − empty) / N, of RSS and of heap.
 *
 * Usage: npm run bench:cert-memory [-- --counts=1000,3000 --baseline=DIR --results=NAME --heap-snapshots=DIR
 *        --controller-node-args=a,b --controller-env=K=V,K=V]
 */

const here = dirname(fileURLToPath(import.meta.url));
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const COUNTS = (flag('counts') ?? '1000').split(',').map(Number);
const BASELINE = flag('baseline');
const RESULTS = flag('results') ?? 'cert-memory';
/** A directory to write heap snapshots of each controller to (`<variant>-<N>-<empty|after-issuance|restarted>.heapsnapshot`). */
const SNAPSHOTS = flag('heap-snapshots');
const list = (name: string) => (flag(name) ?? '').split(',').filter(Boolean);
/** --controller-node-args=a,b: node flags for the controller, e.g. --max-semi-space-size=1 (default none). */
const CONTROLLER_NODE_ARGS = list('controller-node-args');
/** --controller-env=K=V,K=V: environment for the controller, e.g. MALLOC_ARENA_MAX=2. */
const CONTROLLER_ENV: Record<string, string> = Object.fromEntries(
  list('controller-env').map((kv) => kv.split('=', 2)),
);
const NS = 'bench';
const CONTROLLER_FLAGS = ['--kube-api-qps=-1', '--leader-elect=false'];
const SAMPLE_MS = 200;
const SETTLE_MS = 10_000;
const WINDOW_MS = 3_000;
const MB = 1e6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`[bench:cert-memory] ${msg}\n`);

interface Variant {
  name: string;
  root: string;
}
const variants: Variant[] = [
  ...(BASELINE ? [{ name: 'baseline', root: resolve(BASELINE) }] : []),
  { name: 'this branch', root: join(here, '..') },
];

async function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024;
}

/** Samples a process's RSS every SAMPLE_MS; mark() starts a phase, whose peak and mean it then gives. */
class RssSampler {
  #timer: NodeJS.Timeout;
  #samples: number[] = [];
  readonly pid: number;
  constructor(pid: number) {
    this.pid = pid;
    this.#timer = setInterval(() => void this.#sample(), SAMPLE_MS);
  }
  async #sample() {
    const rss = await procStatus(this.pid, 'VmRSS');
    if (rss > 0) this.#samples.push(rss);
  }
  mark(): void {
    this.#samples = [];
  }
  peakMB(): number {
    return round(Math.max(0, ...this.#samples) / MB);
  }
  meanMB(): number {
    return round(this.#samples.reduce((a, b) => a + b, 0) / Math.max(1, this.#samples.length) / MB);
  }
  async hwmMB(): Promise<number> {
    return round((await procStatus(this.pid, 'VmHWM')) / MB);
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

interface Heap {
  usedMB: number;
  totalMB: number;
  externalMB: number;
  /** RSS once the forced GCs are done. */
  rssAfterGcMB: number;
  /** Before the forced GCs: heapTotal, and committed MB per V8 space. */
  totalBeforeGcMB: number;
  spacesBeforeGcMB: Record<string, number>;
}

interface HeapReport {
  before: NodeJS.MemoryUsage;
  spaces: Record<string, number>;
  after: NodeJS.MemoryUsage;
}

interface ControllerProcess {
  child: ChildProcess;
  sampler: RssSampler;
  readyMs: number;
  /** Live heap after forced GCs, and what V8 has committed for it, and memory outside it (MB). */
  heap(): Promise<Heap>;
  /** Writes a heap snapshot of the controller to `file`. */
  snapshot(file: string): Promise<void>;
  stop(): Promise<void>;
}

/** `certkit controller` of a checkout, through its CLI, with heap-reporter preloaded; resolves once ready. */
async function startController(root: string, kubeconfig: string): Promise<ControllerProcess> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...CONTROLLER_NODE_ARGS,
      '--expose-gc',
      '--import',
      join(here, 'heap-reporter.ts'),
      join(root, 'packages/cli/src/main.ts'),
      'controller',
      '--kubeconfig',
      kubeconfig,
      `--metrics-bind-address=127.0.0.1:${port}`,
      ...CONTROLLER_FLAGS,
    ],
    { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, ...CONTROLLER_ENV } },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const sampler = new RssSampler(child.pid!);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`certkit controller exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (performance.now() - started > 300_000) throw new Error('certkit controller not ready within 300 s');
    await sleep(50);
  }
  let next = 0;
  return {
    child,
    sampler,
    readyMs: Math.round(performance.now() - started),
    heap: () =>
      new Promise((resolveHeap, reject) => {
        const id = next++;
        const onMessage = (raw: unknown) => {
          const msg = raw as { id?: number; heap?: HeapReport; error?: string };
          if (msg.id !== id) return;
          child.off('message', onMessage);
          if (msg.error) reject(new Error(msg.error));
          else
            resolveHeap({
              usedMB: round(msg.heap!.after.heapUsed / MB),
              totalMB: round(msg.heap!.after.heapTotal / MB),
              externalMB: round(msg.heap!.after.external / MB),
              rssAfterGcMB: round(msg.heap!.after.rss / MB),
              totalBeforeGcMB: round(msg.heap!.before.heapTotal / MB),
              spacesBeforeGcMB: Object.fromEntries(
                Object.entries(msg.heap!.spaces).map(([k, v]) => [k, round(v / MB)]),
              ),
            });
        };
        child.on('message', onMessage);
        child.send({ id, cmd: 'heap' });
      }),
    snapshot: (file) =>
      new Promise((resolveSnapshot) => {
        const id = next++;
        const onMessage = (raw: unknown) => {
          if ((raw as { id?: number }).id !== id) return;
          child.off('message', onMessage);
          resolveSnapshot();
        };
        child.on('message', onMessage);
        child.send({ id, cmd: 'snapshot', file });
      }),
    async stop() {
      sampler.stop();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function steadyMB(sampler: RssSampler): Promise<number> {
  await sleep(SETTLE_MS);
  sampler.mark();
  await sleep(WINDOW_MS);
  return sampler.meanMB();
}

/** Resolves once the bench's own watch has seen all N Certificates Ready at revision 1. */
function whenAllReady(cluster: Cluster, count: number, signal: AbortSignal) {
  const factory = new SharedInformerFactory({ client: cluster.admin, log: silentLogger });
  const informer = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
  const ready = new Set<string>();
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  const check = (c: Certificate) => {
    const cond = c.status?.conditions?.find((x) => x.type === 'Ready');
    if (cond?.status !== 'True' || (c.status?.revision ?? 0) < 1) return;
    ready.add(c.metadata.name!);
    if (ready.size === count) done();
  };
  informer.addEventHandler({ onAdd: check, onUpdate: (_old, c) => check(c) });
  factory.start(signal);
  return { synced: informer.waitForSync(signal), all, seen: () => ready.size };
}

async function createCaIssuer(cluster: Cluster): Promise<void> {
  const ca = await rootCa();
  // Labelled for the controller's cache, as `certkit secrets audit` advises: no live GET per signing.
  await cluster.admin.resource<Secret & KubeObject>(builtins.secrets).create(NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'ca', labels: { [Labels.partOfCertManagerController]: 'true' } },
    data: {
      'tls.crt': Buffer.from(ca.certPem).toString('base64'),
      'tls.key': Buffer.from(encodePrivateKey(ca.key)).toString('base64'),
    },
  });
  await cluster.admin.resource<Issuer>(issuersRef).create(NS, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'ca', namespace: NS },
    spec: { ca: { secretName: 'ca' } },
  } as Issuer);
}

/** With --heap-snapshots=DIR, a snapshot of the controller at `phase` (`<variant>-<N>-<phase>.heapsnapshot`). */
async function snapshotTo(controller: ControllerProcess, variant: Variant, count: number, phase: string) {
  if (!SNAPSHOTS) return;
  await controller.snapshot(
    join(SNAPSHOTS, `${variant.name.replace(/\W+/g, '-')}-${count}-${phase}.heapsnapshot`),
  );
}

interface Run {
  variant: string;
  certificates: number;
  issuanceSeconds: number;
  controller: {
    emptySteadyMB: number;
    emptyHeap: Heap;
    issuancePeakMB: number;
    steadyMB: number;
    steadyHeap: Heap;
    restartReadyMs: number;
    restartPeakMB: number;
    restartSteadyMB: number;
    restartHeap: Heap;
    growthPerCertKB: number;
    heapGrowthPerCertKB: number;
  };
}

async function run(variant: Variant, count: number): Promise<Run> {
  const cluster = await startCluster();
  const abort = new AbortController();
  let controller: ControllerProcess | undefined;
  try {
    await createNamespace(cluster, NS);
    await createCaIssuer(cluster);
    const watch = whenAllReady(cluster, count, abort.signal);
    await watch.synced;

    log(`${variant.name}, ${count}: controller on the empty cluster`);
    controller = await startController(variant.root, cluster.kubeconfigPath);
    const emptySteadyMB = await steadyMB(controller.sampler);
    const emptyHeap = await controller.heap();
    await snapshotTo(controller, variant, count, 'empty');

    log(`${variant.name}, ${count}: creating ${count} Certificates, 16 at a time`);
    controller.sampler.mark();
    const started = performance.now();
    const certificates = cluster.admin.resource<Certificate>(certificatesRef);
    await throughput(count, 16, async (i) => {
      await certificates.create(NS, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `cert-${i}`, namespace: NS },
        spec: {
          secretName: `cert-${i}-tls`,
          commonName: `cert-${i}.${NS}.example`,
          dnsNames: [`cert-${i}.${NS}.example`],
          privateKey: { algorithm: 'ECDSA', size: 256 },
          issuerRef: { name: 'ca' },
        },
      } as Certificate);
    });
    await Promise.race([
      watch.all,
      sleep(1_800_000).then(() => {
        throw new Error(`only ${watch.seen()}/${count} Ready after 30 min`);
      }),
    ]);
    const issuanceSeconds = round((performance.now() - started) / 1000, 1);
    const issuancePeakMB = controller.sampler.peakMB();
    log(`${variant.name}, ${count}: all Ready after ${issuanceSeconds} s; settling`);
    const steady = await steadyMB(controller.sampler);
    const steadyHeap = await controller.heap();
    await snapshotTo(controller, variant, count, 'after-issuance');

    log(`${variant.name}, ${count}: restarting the controller over them`);
    await controller.stop();
    controller = await startController(variant.root, cluster.kubeconfigPath);
    const restartReadyMs = controller.readyMs;
    const restartSteadyMB = await steadyMB(controller.sampler);
    const restartPeakMB = await controller.sampler.hwmMB();
    const restartHeap = await controller.heap();
    await snapshotTo(controller, variant, count, 'restarted');
    const perCert = (mb: number) => round((mb * MB) / count / 1000, 1);
    return {
      variant: variant.name,
      certificates: count,
      issuanceSeconds,
      controller: {
        emptySteadyMB,
        emptyHeap,
        issuancePeakMB,
        steadyMB: steady,
        steadyHeap,
        restartReadyMs,
        restartPeakMB,
        restartSteadyMB,
        restartHeap,
        growthPerCertKB: perCert(restartSteadyMB - emptySteadyMB),
        heapGrowthPerCertKB: perCert(restartHeap.usedMB - emptyHeap.usedMB),
      },
    };
  } finally {
    abort.abort();
    await controller?.stop();
    await cluster.stop();
  }
}

const runs: Run[] = [];
for (const count of COUNTS) {
  for (const variant of variants) runs.push(await run(variant, count));
}

const heap = (h: Heap) => `${h.usedMB} (of ${h.totalMB}; external ${h.externalMB})`;
const beforeGc = (h: Heap) =>
  `${h.totalBeforeGcMB} (new ${h.spacesBeforeGcMB.new_space}, old ${h.spacesBeforeGcMB.old_space}) / ${h.rssAfterGcMB}`;
const col = (f: (r: Run) => string | number) => runs.map((r) => ` ${f(r)} |`).join('');
const table = [
  `| controller, ECDSA P-256 from one CA Issuer (MB = 10⁶ bytes) |${col((r) => `${r.variant}, ${r.certificates.toLocaleString('en')}`)}`,
  `|---|${runs.map(() => '---|').join('')}`,
  `| all Ready after (created 16 at a time) |${col((r) => `${r.issuanceSeconds} s`)}`,
  `| empty cluster: steady RSS / live heap |${col((r) => `${r.controller.emptySteadyMB} / ${heap(r.controller.emptyHeap)}`)}`,
  `| peak RSS during issuance |${col((r) => r.controller.issuancePeakMB)}`,
  `| after issuance: steady RSS / live heap |${col((r) => `${r.controller.steadyMB} / ${heap(r.controller.steadyHeap)}`)}`,
  `| after issuance: heapTotal before forced GC (new space, old space) / RSS after it |${col((r) => beforeGc(r.controller.steadyHeap))}`,
  `| restarted over them: start-up peak RSS |${col((r) => r.controller.restartPeakMB)}`,
  `| restarted over them: steady RSS / live heap |${col((r) => `${r.controller.restartSteadyMB} / ${heap(r.controller.restartHeap)}`)}`,
  `| restarted: heapTotal before forced GC (new space, old space) / RSS after it |${col((r) => beforeGc(r.controller.restartHeap))}`,
  `| restarted: caches synced after |${col((r) => `${r.controller.restartReadyMs} ms`)}`,
  `| steady growth per Certificate, RSS (target < 8 KB) |${col((r) => `${r.controller.growthPerCertKB} KB`)}`,
  `| steady growth per Certificate, live heap |${col((r) => `${r.controller.heapGrowthPerCertKB} KB`)}`,
  '',
  `\`certkit apiserver\` (this checkout) and \`certkit controller ${CONTROLLER_FLAGS.join(' ')}\` (of each checkout; node ` +
    `${CONTROLLER_NODE_ARGS.join(' ') || 'defaults'}, env ${
      Object.entries(CONTROLLER_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || 'unchanged'
    }) as`,
  `processes of their own, ${availableParallelism()} CPUs shared with the bench. Peak during issuance: the highest RSS`,
  'sample (every 200 ms); start-up peak: VmHWM of the restarted process. Steady: mean RSS over 3 s after 10 s',
  'idle. Live heap: heapUsed after forced GCs (of heapTotal, what V8 holds for it; external: Buffers and other memory V8',
  'is told of). Growth per Certificate: (restarted − empty) / N.',
].join('\n');
await writeResults(
  RESULTS,
  {
    runs,
    controllerFlags: CONTROLLER_FLAGS,
    controllerNodeArgs: CONTROLLER_NODE_ARGS,
    controllerEnv: CONTROLLER_ENV,
    cpus: availableParallelism(),
    baseline: BASELINE ?? null,
  },
  table,
);
