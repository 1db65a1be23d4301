import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, SharedInformerFactory, silentLogger } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Labels } from '../packages/certificates/src/api/constants.ts';
import type { Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import { certificatesRef, issuersRef } from '../packages/certificates/src/controllers/refs.ts';
import { encodePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';
import { staleBuilds } from '../scripts/build.ts';
import {
  type Cluster,
  createNamespace,
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { median, throughput, writeResults } from './lib.ts';

/**
 * certkit at scale, as a user runs it: `certkit apiserver` and `certkit controller` as two processes started
 * through the CLI, one CA Issuer, N ECDSA P-256 Certificates created 16 at a time. Per N, from /proc (RSS
 * sampled every 200 ms, peaks the highest sample; steady = the mean RSS over 5 s once 15 s have passed
 * with nothing to do):
 *
 *   empty       the controller idle on the empty cluster (CRDs and the CA Issuer only)
 *   issuance    creating the N Certificates until every one is Ready: time, peak RSS of both processes
 *   steady      both processes after issuance; the controller's idle CPU over 30 s with all Ready
 *   restart     the controller stopped (SIGTERM) and started again over them: start-up peak, steady
 *   window      the API server's steady RSS once 80 s have passed since issuance ended: its watch caches
 *               keep 75 s of events (kube-apiserver's window), every version written in it
 *   renew       `certkit renew --all` of all N: the command's time, time until every one has its next
 *               revision, peak RSS of both processes
 *   list        the API server's LIST of all Secrets as PartialObjectMetadataList (median of 5)
 *
 * Growth per managed Certificate = (steady after restart − steady on the empty cluster) / N. cert-manager's
 * published controller peaks (v1.14.5, RSA, cert-manager issue #4191) are written beside ours.
 *
 * The controller runs as deploy/deployment.yaml starts it (SHIPPED_CONTROLLER_NODE_ARGS and _ENV), and both
 * processes run the compiled build as installed (the controller bundle, dist/), not the sources: the bench
 * refuses a stale build (`npm run build`).
 *
 * Usage: npm run bench:scale [-- --counts=1000,5000,10000 --controller-node-args=a,b --controller-env=K=V
 *        --controller-args=a,b --controller-stdout=FILE
 *        --apiserver-node-args=a,b --apiserver-env=K=V --apiserver-root=DIR --results=NAME --phases=issuance]
 * Default --counts=500 (a quick run). --phases=issuance stops each size once all are Ready (no steady, restart,
 * window, renew or list phases): a quick look at issuance speed and its CPU per process; --phases=steady adds
 * the steady RSS after issuance and stops there.
 *
 * During issuance the CPU of each process (utime + stime from /proc/PID/stat, and its main thread alone from
 * /proc/PID/task/PID/stat) is read every second with the count of Ready Certificates, so that CPU per
 * Certificate can be compared between sizes and between the tenths of one run (does it grow with n?). Results of earlier runs for other counts in bench/results/NAME.json are
 * kept, so the sizes may be run one at a time.
 */

const here = dirname(fileURLToPath(import.meta.url));
// The command as installed (`certkit`): packages/cli/bin/certkit.js, with its module compile cache.
const MAIN = join(here, '..', 'packages/cli/bin/certkit.js');
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const COUNTS = (flag('counts') ?? '500').split(',').map(Number);
const nodeArgs = (name: string) => (flag(name) ?? '').split(',').filter(Boolean);
// The controller as deploy/deployment.yaml runs it, unless these say otherwise (`--controller-node-args=`
// and `--controller-env=`, empty, for node's defaults).
const CONTROLLER_NODE_ARGS =
  flag('controller-node-args') === undefined
    ? SHIPPED_CONTROLLER_NODE_ARGS
    : nodeArgs('controller-node-args');
/** --controller-env=K=V,K=V: environment for the controller, e.g. MALLOC_ARENA_MAX=2. */
const CONTROLLER_ENV: Record<string, string> =
  flag('controller-env') === undefined
    ? SHIPPED_CONTROLLER_ENV
    : Object.fromEntries(nodeArgs('controller-env').map((kv) => kv.split('=', 2)));
const APISERVER_NODE_ARGS = nodeArgs('apiserver-node-args');
/** --apiserver-root=DIR: run the API server from another checkout, to compare two servers under one bench. */
const APISERVER_ROOT = flag('apiserver-root');
/** --apiserver-env=K=V,K=V: environment for the API server, e.g. MALLOC_ARENA_MAX=2 (none by default). */
const APISERVER_ENV: Record<string, string> = Object.fromEntries(
  nodeArgs('apiserver-env').map((kv) => kv.split('=', 2)),
);
const RESULTS = flag('results') ?? 'scale';
/** --phases=issuance: only the issuance phase (the speed question); default all phases. */
const ISSUANCE_ONLY = flag('phases') === 'issuance' || flag('phases') === 'steady';
/** --phases=steady: issuance, then both processes' steady RSS after it, and stop there. */
const STEADY_TOO = flag('phases') === 'steady';
const CPU_SAMPLE_MS = 1_000;
// npm scripts set the `source` export condition in NODE_OPTIONS (.npmrc); cleared, bin/certkit.js runs what
// ships: the controller bundle and the packages' dist/ (docs/adr/1130-idle-controller-bundle.md).
const AS_INSTALLED = { NODE_OPTIONS: '' };
const NS = 'bench';
const CONTROLLER_FLAGS = [
  '--kube-api-qps=-1',
  '--leader-elect=false',
  // More `certkit controller` flags, e.g. --log-level=info to see when memory is released after a burst.
  ...(flag('controller-args')?.split(',').filter(Boolean) ?? []),
];
/**
 * --controller-stdout=FILE: the controller's stdout appended to FILE (each start of the run), e.g. with
 * `--controller-node-args=<shipped flags>,--trace-gc` to count its collections; by default it is dropped.
 */
const CONTROLLER_STDOUT = flag('controller-stdout');
const SAMPLE_MS = 200;
const SETTLE_MS = 15_000;
const WINDOW_MS = 5_000;
const IDLE_CPU_MS = 30_000;
/** The API server's watch cache history window (kube-apiserver's 75 s), and a margin past its idle trim. */
const HISTORY_WINDOW_MS = 75_000 + 5_000;
const MB = 1e6;
/** cert-manager v1.14.5's controller, peak RSS in MB, RSA Certificates (cert-manager issue #4191). */
const CERT_MANAGER_PEAK_MB: Record<number, number> = { 1000: 95, 5000: 314, 10000: 528 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`[bench:scale] ${msg}\n`);

async function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024;
}

/** CPU seconds (user + system, every thread) a process has used, from /proc/PID/stat (fields 14 and 15). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of a process's main thread alone (its thread id is its pid): /proc/PID/task/PID/stat. */
async function mainThreadCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One reading during issuance: seconds since the first Certificate was created, Ready count, CPU seconds. */
interface CpuSample {
  t: number;
  ready: number;
  controller: number;
  controllerMain: number;
  apiserver: number;
  apiserverMain: number;
  /** This bench process (it creates the Certificates and watches them), from process.cpuUsage(). */
  bench: number;
  /** The whole machine, every process (other engineers' too): busy CPU seconds from /proc/stat. */
  machine: number;
}

/** Busy CPU seconds of the whole machine (every core, every process): /proc/stat's first line less idle and iowait. */
async function machineBusySeconds(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

async function cpuSample(
  t: number,
  ready: number,
  controllerPid: number,
  apiPid: number,
): Promise<CpuSample> {
  const [controller, controllerMain, apiserver, apiserverMain, machine] = await Promise.all([
    cpuSeconds(controllerPid),
    mainThreadCpuSeconds(controllerPid),
    cpuSeconds(apiPid),
    mainThreadCpuSeconds(apiPid),
    machineBusySeconds(),
  ]);
  const own = process.cpuUsage();
  const bench = (own.user + own.system) / 1e6;
  return { t: round(t, 2), ready, controller, controllerMain, apiserver, apiserverMain, bench, machine };
}

/** CPU during issuance: seconds per process, ms per Certificate, and the same per tenth of the Certificates. */
interface IssuanceCpu {
  seconds: Omit<CpuSample, 't' | 'ready'>;
  msPerCertificate: Omit<CpuSample, 't' | 'ready'>;
  /** Share of one core each main thread was busy over the whole issuance (100 = saturated). */
  mainThreadBusyPercent: { controller: number; apiserver: number };
  /** Cores busy on average over the issuance: these three processes, and the whole machine (others' work too). */
  coresBusy: { ours: number; machine: number; of: number };
  /** Per tenth of the Certificates by the time they became Ready: wall s and CPU ms per Certificate (fewer
   *  rows when a tenth ends within one second's sample). */
  tenths: { upTo: number; seconds: number; msPerCertificate: Omit<CpuSample, 't' | 'ready'> }[];
  /** Seconds until the bench had created every Certificate (16 at a time). */
  createdAfterSeconds: number;
  /** Per controller: reconciles per Certificate, mean workers busy, mean reconcile and queue wait (ms). */
  controllers?: ReturnType<typeof workersBusy>;
}

const CPU_KEYS = ['controller', 'controllerMain', 'apiserver', 'apiserverMain', 'bench', 'machine'] as const;

function cpuBetween(a: CpuSample, b: CpuSample, certificates: number, scale = 1000) {
  return Object.fromEntries(
    CPU_KEYS.map((k) => [k, round(((b[k] - a[k]) * scale) / Math.max(1, certificates), 2)]),
  ) as Omit<CpuSample, 't' | 'ready'>;
}

function issuanceCpu(samples: CpuSample[], count: number, createdAfterSeconds: number): IssuanceCpu {
  const first = samples[0];
  const last = samples.at(-1)!;
  const tenths: IssuanceCpu['tenths'] = [];
  let from = first;
  for (let tenth = 1; tenth <= 10; tenth++) {
    const upTo = Math.round((count * tenth) / 10);
    // The last sample is the moment all were Ready; the others come once a second, so a row ends at the
    // first sample past its tenth, is labelled with the Ready count there, and a tenth no sample ends is
    // merged into the next (small runs).
    const to = tenth === 10 ? last : (samples.find((s) => s.ready >= upTo) ?? last);
    if (to === from) continue;
    tenths.push({
      upTo: to.ready,
      seconds: round(to.t - from.t, 1),
      msPerCertificate: cpuBetween(from, to, to.ready - from.ready),
    });
    from = to;
  }
  const wall = last.t - first.t;
  return {
    seconds: cpuBetween(first, last, 1, 1),
    msPerCertificate: cpuBetween(first, last, count),
    mainThreadBusyPercent: {
      controller: round(((last.controllerMain - first.controllerMain) / wall) * 100, 1),
      apiserver: round(((last.apiserverMain - first.apiserverMain) / wall) * 100, 1),
    },
    coresBusy: {
      ours: round(
        CPU_KEYS.slice(0, 5).reduce((sum, k) => sum + (k.endsWith('Main') ? 0 : last[k] - first[k]), 0) /
          wall,
        2,
      ),
      machine: round((last.machine - first.machine) / wall, 2),
      of: availableParallelism(),
    },
    tenths,
    createdAfterSeconds: round(createdAfterSeconds, 1),
  };
}

/** Per controller, from its /metrics: reconciles (work-queue items processed) and the seconds they took. */
type QueueTotals = Record<
  string,
  { adds: number; workSeconds: number; queueSeconds: number; processed: number }
>;

async function queueTotals(port: number): Promise<QueueTotals> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const totals: QueueTotals = {};
  const of = (name: string) => (totals[name] ??= { adds: 0, workSeconds: 0, queueSeconds: 0, processed: 0 });
  for (const m of text.matchAll(/^(workqueue_[a-z_]+)\{name="([^"]+)"[^}]*\} (\S+)$/gm)) {
    const [, metric, name, value] = m;
    if (metric === 'workqueue_adds_total') of(name).adds = Number(value);
    else if (metric === 'workqueue_work_duration_seconds_sum') of(name).workSeconds = Number(value);
    else if (metric === 'workqueue_work_duration_seconds_count') of(name).processed = Number(value);
    else if (metric === 'workqueue_queue_duration_seconds_sum') of(name).queueSeconds = Number(value);
  }
  return totals;
}

/** What each controller's workers did over the issuance: how busy its workers were (of --concurrent-workers). */
function workersBusy(before: QueueTotals, after: QueueTotals, wallSeconds: number, count: number) {
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, a]) => {
        const b = before[name] ?? { adds: 0, workSeconds: 0, queueSeconds: 0, processed: 0 };
        const processed = a.processed - b.processed;
        return [
          name,
          {
            reconcilesPerCertificate: round(processed / count, 2),
            /** Mean reconciles in flight over the issuance (worker-seconds / wall seconds). */
            workersBusy: round((a.workSeconds - b.workSeconds) / wallSeconds, 2),
            meanReconcileMs: round(((a.workSeconds - b.workSeconds) * 1000) / Math.max(1, processed), 1),
            meanQueueWaitMs: round(((a.queueSeconds - b.queueSeconds) * 1000) / Math.max(1, processed), 1),
          },
        ] as const;
      })
      .filter(([, v]) => v.reconcilesPerCertificate > 0),
  );
}

/** Samples a process's RSS every SAMPLE_MS; `mark()` starts a phase, whose peak and mean it then gives. */
class RssSampler {
  pid: number;
  #timer: NodeJS.Timeout;
  #samples: number[] = [];
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
  /** Highest sample since mark(), or the kernel's VmHWM when asked (the whole life of the process). */
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

interface ControllerProcess {
  child: ChildProcess;
  pid: number;
  /** Port of its metrics and probes. */
  port: number;
  sampler: RssSampler;
  /** Milliseconds from spawn to /readyz 200 (every cache synced). */
  readyMs: number;
  stop(): Promise<void>;
}

/** `certkit controller` through the CLI, with its probes on a free port; resolves once /readyz says 200. */
async function startController(kubeconfig: string): Promise<ControllerProcess> {
  const port = await freePort();
  const started = performance.now();
  const stdout = CONTROLLER_STDOUT === undefined ? 'ignore' : openSync(CONTROLLER_STDOUT, 'a');
  const child = spawn(
    process.execPath,
    [
      ...CONTROLLER_NODE_ARGS,
      MAIN,
      'controller',
      '--kubeconfig',
      kubeconfig,
      `--metrics-bind-address=127.0.0.1:${port}`,
      ...CONTROLLER_FLAGS,
    ],
    { stdio: ['ignore', stdout, 'inherit'], env: { ...process.env, ...AS_INSTALLED, ...CONTROLLER_ENV } },
  );
  if (typeof stdout === 'number') closeSync(stdout);
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
  return {
    child,
    pid: child.pid!,
    port,
    sampler,
    readyMs: Math.round(performance.now() - started),
    async stop() {
      sampler.stop();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Waits SETTLE_MS, then gives the mean RSS over WINDOW_MS of each sampler. */
async function steady(...samplers: RssSampler[]): Promise<number[]> {
  await sleep(SETTLE_MS);
  for (const s of samplers) s.mark();
  await sleep(WINDOW_MS);
  return samplers.map((s) => s.meanMB());
}

/** Counts Certificates that satisfy `done`, through the bench's own watch; resolves when all N do. */
function watchCertificates(cluster: Cluster, count: number, signal: AbortSignal) {
  const factory = new SharedInformerFactory({ client: cluster.admin, log: silentLogger });
  const informer = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
  let predicate: (c: Certificate) => boolean = () => false;
  let satisfied = new Set<string>();
  let resolve: () => void = () => {};
  const check = (c: Certificate) => {
    if (!predicate(c) || satisfied.has(c.metadata.name!)) return;
    satisfied.add(c.metadata.name!);
    if (satisfied.size === count) resolve();
  };
  informer.addEventHandler({ onAdd: check, onUpdate: (_old, c) => check(c) });
  factory.start(signal);
  return {
    synced: informer.waitForSync(signal),
    /** Resolves once every Certificate satisfies `p` (those already satisfying it count). */
    until(p: (c: Certificate) => boolean, timeoutMs: number): Promise<void> {
      predicate = p;
      satisfied = new Set();
      const done = new Promise<void>((r) => (resolve = r));
      for (const c of informer.getStore().list()) check(c);
      if (satisfied.size === count) resolve();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`only ${satisfied.size}/${count} after ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
      });
      return Promise.race([done, timeout]).finally(() => clearTimeout(timer));
    },
    /** How many Certificates satisfy the predicate `until` was last given. */
    satisfied: () => satisfied.size,
  };
}

const isReadyAt = (revision: number) => (c: Certificate) => {
  const ready = c.status?.conditions?.find((x) => x.type === 'Ready');
  const issuing = c.status?.conditions?.find((x) => x.type === 'Issuing');
  return (
    ready?.status === 'True' &&
    ready.observedGeneration === c.metadata.generation &&
    issuing?.status !== 'True' &&
    (c.status?.revision ?? 0) >= revision
  );
};

async function runCli(args: string[]): Promise<{ code: number | null; seconds: number; stderr: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...AS_INSTALLED },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  return { code, seconds: (performance.now() - started) / 1000, stderr };
}

/** LIST of every Secret as PartialObjectMetadataList: milliseconds to the whole body, and the items. */
async function listSecretsAsMetadata(
  cluster: Cluster,
): Promise<{ ms: number; items: number; bytes: number }> {
  const started = performance.now();
  const res = await cluster.http.call(
    'GET',
    '/api/v1/secrets',
    undefined,
    'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  );
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`LIST secrets answered ${res.status}: ${res.text.slice(0, 200)}`);
  const body = JSON.parse(res.text) as { kind: string; items: unknown[] };
  if (body.kind !== 'PartialObjectMetadataList') throw new Error(`LIST secrets gave a ${body.kind}`);
  return { ms, items: body.items.length, bytes: res.text.length };
}

interface SizeResult {
  certificates: number;
  /** Every phase was run (not --phases=issuance); the fields after issuance are absent otherwise. */
  phases?: 'all' | 'issuance';
  issuanceCpu?: IssuanceCpu;
  controller: {
    emptySteadyMB: number;
    emptyStartupPeakMB: number;
    issuancePeakMB: number;
    steadyMB: number;
    idleCpuPercent: number;
    restartReadyMs: number;
    restartPeakMB: number;
    restartSteadyMB: number;
    renewPeakMB: number;
    steadyGrowthPerCertKB: number;
  };
  apiserver: {
    issuancePeakMB: number;
    steadyMB: number;
    /** Steady once the watch cache's history window (75 s) has passed the issuance's events. */
    afterHistoryWindowMB?: number;
    renewPeakMB: number;
    hwmMB: number;
  };
  issuanceSeconds: number;
  certsPerSecond: number;
  renew: { commandSeconds: number; allReissuedSeconds: number };
  listSecretsMetadata: { medianMs: number; items: number; bytes: number };
  certManagerPeakMB?: number;
}

async function runSize(count: number): Promise<SizeResult> {
  const cluster = await startCluster({
    nodeArgs: APISERVER_NODE_ARGS,
    env: { ...AS_INSTALLED, ...APISERVER_ENV },
    root: APISERVER_ROOT,
    entry: 'packages/cli/bin/certkit.js',
  });
  const api = new RssSampler(cluster.server.pid);
  const abort = new AbortController();
  let controller: ControllerProcess | undefined;
  try {
    await createNamespace(cluster, NS);
    const ca = await rootCa({ algorithm: 'ECDSA' } as never);
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
    const watch = watchCertificates(cluster, count, abort.signal);
    await watch.synced;

    // A first start and stop fills the module compile cache for these node flags (it is keyed by some of
    // them), as any start of an installed certkit but the very first finds it.
    await (await startController(cluster.kubeconfigPath)).stop();
    log(`${count}: controller on the empty cluster`);
    controller = await startController(cluster.kubeconfigPath);
    const emptyStartupPeakMB = await controller.sampler.hwmMB();
    const [emptySteadyMB] = await steady(controller.sampler);

    log(`${count}: creating ${count} Certificates, 16 at a time`);
    controller.sampler.mark();
    api.mark();
    const started = performance.now();
    const certificates = cluster.admin.resource<Certificate>(certificatesRef);
    const allReady = watch.until(isReadyAt(1), 1_800_000);
    const queuesBefore = await queueTotals(controller.port);
    const cpuSamples = [await cpuSample(0, 0, controller.pid, cluster.server.pid)];
    const controllerPid = controller.pid;
    const cpuTimer = setInterval(() => {
      const t = (performance.now() - started) / 1000;
      void cpuSample(t, watch.satisfied(), controllerPid, cluster.server.pid).then((s) => cpuSamples.push(s));
    }, CPU_SAMPLE_MS);
    let createdAfterSeconds = 0;
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
    createdAfterSeconds = (performance.now() - started) / 1000;
    await allReady;
    const readyAt = performance.now();
    clearInterval(cpuTimer);
    const issuanceSeconds = (readyAt - started) / 1000;
    cpuSamples.push(await cpuSample(issuanceSeconds, count, controller.pid, cluster.server.pid));
    cpuSamples.sort((a, b) => a.t - b.t);
    const cpu = issuanceCpu(cpuSamples, count, createdAfterSeconds);
    cpu.controllers = workersBusy(queuesBefore, await queueTotals(controller.port), issuanceSeconds, count);
    for (const [name, c] of Object.entries(cpu.controllers)) {
      log(
        `  ${name}: ${c.reconcilesPerCertificate} reconciles per Certificate, ${c.workersBusy} workers busy on average,` +
          ` ${c.meanReconcileMs} ms per reconcile, ${c.meanQueueWaitMs} ms queued`,
      );
    }
    const issuancePeak = { controller: controller.sampler.peakMB(), apiserver: api.peakMB() };
    log(
      `${count}: all Ready after ${issuanceSeconds.toFixed(1)} s (all created after ${cpu.createdAfterSeconds} s);` +
        ` CPU s controller ${cpu.seconds.controller} (main ${cpu.seconds.controllerMain}),` +
        ` API server ${cpu.seconds.apiserver} (main ${cpu.seconds.apiserverMain}), bench ${cpu.seconds.bench};` +
        ` main threads busy ${cpu.mainThreadBusyPercent.controller}% / ${cpu.mainThreadBusyPercent.apiserver}%;` +
        ` cores busy: ours ${cpu.coresBusy.ours}, machine ${cpu.coresBusy.machine} of ${cpu.coresBusy.of}`,
    );
    for (const tenth of cpu.tenths) {
      const m = tenth.msPerCertificate;
      log(
        `  up to ${tenth.upTo}: ${tenth.seconds} s; CPU ms per Certificate controller ${m.controller}` +
          ` (main ${m.controllerMain}), API server ${m.apiserver} (main ${m.apiserverMain}), bench ${m.bench}`,
      );
    }
    if (ISSUANCE_ONLY) {
      const [steadyMB, apiSteadyMB] = STEADY_TOO ? await steady(controller.sampler, api) : [];
      if (STEADY_TOO)
        log(`${count}: steady after issuance: controller ${steadyMB} MB, API server ${apiSteadyMB} MB`);
      return {
        certificates: count,
        phases: 'issuance',
        issuanceCpu: cpu,
        controller: { emptySteadyMB, emptyStartupPeakMB, issuancePeakMB: issuancePeak.controller, steadyMB },
        apiserver: { issuancePeakMB: issuancePeak.apiserver, steadyMB: apiSteadyMB },
        issuanceSeconds: round(issuanceSeconds, 1),
        certsPerSecond: round(count / issuanceSeconds, 1),
      } as SizeResult;
    }
    log(`${count}: settling`);

    const [steadyMB, apiSteadyMB] = await steady(controller.sampler, api);
    const cpuBefore = await cpuSeconds(controller.pid);
    await sleep(IDLE_CPU_MS);
    const idleCpuPercent = round(
      (((await cpuSeconds(controller.pid)) - cpuBefore) / (IDLE_CPU_MS / 1000)) * 100,
      2,
    );

    const lists: { ms: number; items: number; bytes: number }[] = [];
    for (let i = 0; i < 5; i++) lists.push(await listSecretsAsMetadata(cluster));

    log(`${count}: restarting the controller over them`);
    await controller.stop();
    controller = await startController(cluster.kubeconfigPath);
    const restartReadyMs = controller.readyMs;
    const [restartSteadyMB] = await steady(controller.sampler);
    const restartPeakMB = await controller.sampler.hwmMB();
    // What the API server holds once the issuance's events have left its watch caches' history.
    await sleep(Math.max(0, HISTORY_WINDOW_MS - (performance.now() - readyAt)));
    const [apiAfterHistoryWindowMB] = await steady(api);

    log(`${count}: certkit renew --all`);
    controller.sampler.mark();
    api.mark();
    const reissued = watch.until(isReadyAt(2), 1_800_000);
    const renewStarted = performance.now();
    const renew = await runCli([
      'renew',
      '--all',
      '-n',
      NS,
      '--kubeconfig',
      cluster.kubeconfigPath,
      '--kube-api-qps=-1',
    ]);
    if (renew.code !== 0) throw new Error(`certkit renew --all exited ${renew.code}: ${renew.stderr}`);
    await reissued;
    const allReissuedSeconds = (performance.now() - renewStarted) / 1000;
    const renewPeak = { controller: controller.sampler.peakMB(), apiserver: api.peakMB() };
    log(`${count}: renewed in ${allReissuedSeconds.toFixed(1)} s`);

    return {
      certificates: count,
      phases: 'all',
      issuanceCpu: cpu,
      controller: {
        emptySteadyMB,
        emptyStartupPeakMB,
        issuancePeakMB: issuancePeak.controller,
        steadyMB,
        idleCpuPercent,
        restartReadyMs,
        restartPeakMB,
        restartSteadyMB,
        renewPeakMB: renewPeak.controller,
        steadyGrowthPerCertKB: round(((restartSteadyMB - emptySteadyMB) * MB) / count / 1000, 1),
      },
      apiserver: {
        issuancePeakMB: issuancePeak.apiserver,
        steadyMB: apiSteadyMB,
        afterHistoryWindowMB: apiAfterHistoryWindowMB,
        renewPeakMB: renewPeak.apiserver,
        hwmMB: await api.hwmMB(),
      },
      issuanceSeconds: round(issuanceSeconds, 1),
      certsPerSecond: round(count / issuanceSeconds, 1),
      renew: { commandSeconds: round(renew.seconds, 1), allReissuedSeconds: round(allReissuedSeconds, 1) },
      listSecretsMetadata: {
        medianMs: round(median(lists.map((l) => l.ms))),
        items: lists[0].items,
        bytes: lists[0].bytes,
      },
      certManagerPeakMB: CERT_MANAGER_PEAK_MB[count],
    };
  } finally {
    abort.abort();
    api.stop();
    await controller?.stop();
    await cluster.stop();
  }
}

const resultsFile = join(here, 'results', `${RESULTS}.json`);
const previous = (await readFile(resultsFile, 'utf8')
  .then((t) => JSON.parse(t) as { sizes?: SizeResult[] })
  .catch(() => ({}))) as { sizes?: SizeResult[] };
const bySize = new Map((previous.sizes ?? []).map((s) => [s.certificates, s]));
for (const checkout of new Set([join(here, '..'), APISERVER_ROOT ?? join(here, '..')])) {
  const stale = staleBuilds(checkout);
  if (stale.length > 0) {
    log(`stale or missing build in ${checkout}: ${stale.join(', ')}; run \`npm run build\` first`);
    process.exit(1);
  }
}
for (const count of COUNTS) {
  const result = await runSize(count);
  bySize.set(count, { ...result, date: new Date().toISOString() } as SizeResult);
  // Written after every size, so that a long run keeps what it measured.
  await writeFile(resultsFile, `${JSON.stringify({ sizes: [...bySize.values()] }, null, 2)}\n`);
}

const sizes = [...bySize.values()].sort((a, b) => a.certificates - b.certificates);
const col = (f: (s: SizeResult) => string | number) => sizes.map((s) => ` ${f(s)} |`).join('');
const pass = (ok: boolean) => (ok ? '✓' : '✗');
// Sizes run with --phases=issuance have no figures after issuance: their rows are left out then.
const allPhases = sizes.every((s) => s.phases !== 'issuance');
const cpuCol = (f: (c: IssuanceCpu) => string | number) =>
  col((s) => (s.issuanceCpu ? f(s.issuanceCpu) : '—'));
const cpuRows = [
  `| all Certificates created after (the bench, 16 at a time) |${cpuCol((c) => `${c.createdAfterSeconds} s`)}`,
  `| CPU s during issuance: controller (main thread) / API server (main thread) / bench |${cpuCol((c) => `${c.seconds.controller} (${c.seconds.controllerMain}) / ${c.seconds.apiserver} (${c.seconds.apiserverMain}) / ${c.seconds.bench}`)}`,
  `| CPU ms per Certificate: controller (main) / API server (main) / bench |${cpuCol((c) => `${c.msPerCertificate.controller} (${c.msPerCertificate.controllerMain}) / ${c.msPerCertificate.apiserver} (${c.msPerCertificate.apiserverMain}) / ${c.msPerCertificate.bench}`)}`,
  `| main thread busy over issuance: controller / API server |${cpuCol((c) => `${c.mainThreadBusyPercent.controller}% / ${c.mainThreadBusyPercent.apiserver}%`)}`,
  `| cores busy over issuance: these processes / whole machine (of ${availableParallelism()}) |${cpuCol((c) => (c.coresBusy ? `${c.coresBusy.ours} / ${c.coresBusy.machine}` : '—'))}`,
  `| CPU ms per Certificate, first tenth → last tenth: controller / API server |${cpuCol((c) => `${c.tenths[0].msPerCertificate.controller} → ${c.tenths.at(-1)!.msPerCertificate.controller} / ${c.tenths[0].msPerCertificate.apiserver} → ${c.tenths.at(-1)!.msPerCertificate.apiserver}`)}`,
];
const table = [
  `| ECDSA P-256 Certificates, one CA Issuer (RSS from /proc, MB = 10⁶ bytes) |${col((s) => s.certificates.toLocaleString('en'))}`,
  `|---|${sizes.map(() => '---|').join('')}`,
  `| all Ready after (created 16 at a time) |${col((s) => `${s.issuanceSeconds} s (${s.certsPerSecond}/s)`)}`,
  ...cpuRows,
  `| controller: empty cluster, steady / start-up peak |${col((s) => `${s.controller.emptySteadyMB} / ${s.controller.emptyStartupPeakMB}`)}`,
  `| controller: peak during issuance (target < 200) |${col((s) => `${s.controller.issuancePeakMB} ${pass(s.controller.issuancePeakMB < 200)}`)}`,
  ...(allPhases
    ? []
    : [
        `| API server: peak during issuance |${col((s) => s.apiserver.issuancePeakMB)}`,
        `| steady after issuance (--phases=steady): controller (target < 150) / API server |${col((s) => `${s.controller.steadyMB ?? '—'} / ${s.apiserver.steadyMB ?? '—'}`)}`,
      ]),
]
  .concat(
    allPhases
      ? [
          `| controller: steady after issuance (target < 150) |${col((s) => `${s.controller.steadyMB} ${pass(s.controller.steadyMB < 150)}`)}`,
          `| controller: restarted over them, start-up peak (target < 200) |${col((s) => `${s.controller.restartPeakMB} ${pass(s.controller.restartPeakMB < 200)}`)}`,
          `| controller: restarted over them, steady (target < 150) |${col((s) => `${s.controller.restartSteadyMB} ${pass(s.controller.restartSteadyMB < 150)}`)}`,
          `| controller: restarted, caches synced after |${col((s) => `${s.controller.restartReadyMs} ms`)}`,
          `| controller: steady growth per Certificate (target < 8 KB) |${col((s) => `${s.controller.steadyGrowthPerCertKB} KB ${pass(s.controller.steadyGrowthPerCertKB < 8)}`)}`,
          `| controller: idle CPU over 30 s, all Ready (target < 1%) |${col((s) => `${s.controller.idleCpuPercent}% ${pass(s.controller.idleCpuPercent < 1)}`)}`,
          `| \`certkit renew --all\`: command / all re-issued |${col((s) => `${s.renew.commandSeconds} s / ${s.renew.allReissuedSeconds} s`)}`,
          `| controller: peak during renew-all |${col((s) => s.controller.renewPeakMB)}`,
          `| API server: peak during issuance / steady / peak during renew-all |${col((s) => `${s.apiserver.issuancePeakMB} / ${s.apiserver.steadyMB} / ${s.apiserver.renewPeakMB}`)}`,
          `| API server: steady once the history window (75 s) has passed the issuance |${col((s) => s.apiserver.afterHistoryWindowMB ?? '—')}`,
          `| API server: LIST all Secrets as metadata, median of 5 (target < 100 ms) |${col((s) => `${s.listSecretsMetadata.medianMs} ms (${s.listSecretsMetadata.items} items) ${pass(s.listSecretsMetadata.medianMs < 100)}`)}`,
          `| cert-manager v1.14.5 controller peak, RSA (published) |${col((s) => s.certManagerPeakMB ?? '—')}`,
        ]
      : [],
    [
      '',
      `\`certkit apiserver\` and \`certkit controller ${CONTROLLER_FLAGS.join(' ')}\` as processes of their own` +
        ` (node ${CONTROLLER_NODE_ARGS.join(' ') || 'defaults'}; env ${
          Object.entries(CONTROLLER_ENV)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ') || 'none'
        })${
          APISERVER_NODE_ARGS.length || Object.keys(APISERVER_ENV).length
            ? `; API server node ${APISERVER_NODE_ARGS.join(' ') || 'defaults'}, env ${
                Object.entries(APISERVER_ENV)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(' ') || 'none'
              }`
            : ''
        }, ${availableParallelism()} CPUs shared with the bench.`,
      'Peaks: the highest of RSS samples every 200 ms (the restart peak: VmHWM of the new process). Steady: mean',
      'RSS over 5 s after 15 s idle. The CA Secret is labelled for the controller. cert-manager: v1.14.5 controller',
      'peaks with 1,000 / 5,000 / 10,000 RSA Certificates, the benchmark quoted in cert-manager issue #4191.',
    ],
  )
  .join('\n');
await writeResults(
  RESULTS,
  {
    sizes,
    controllerFlags: CONTROLLER_FLAGS,
    controllerNodeArgs: CONTROLLER_NODE_ARGS,
    controllerEnv: CONTROLLER_ENV,
    apiserverNodeArgs: APISERVER_NODE_ARGS,
    apiserverEnv: APISERVER_ENV,
    cpus: availableParallelism(),
    published: { source: 'cert-manager issue #4191 (v1.14.5, RSA)', controllerPeakMB: CERT_MANAGER_PEAK_MB },
  },
  table,
);
