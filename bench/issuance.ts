import { spawn } from 'node:child_process';
import { generateKeyPair } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, SharedInformerFactory, silentLogger } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { writeKubeconfig } from '@certkit/apiserver';
import { Labels } from '../packages/certificates/src/api/constants.ts';
import type { Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import { certificatesRef, issuersRef } from '../packages/certificates/src/controllers/refs.ts';
import {
  applyRbacManifest,
  manifestServiceAccount,
  parseRbacManifest,
} from '../packages/certificates/src/identity/controller-identity.ts';
import { CONTROLLER_RBAC_YAML } from '../packages/certificates/src/identity/rbac-manifest.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  parsePrivateKey,
  signCertificate,
} from '../packages/certificates/src/pki/index.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';
import {
  apiserverMetrics,
  type Cluster,
  createNamespace,
  diffMetrics,
  probeMetrics,
  round,
  startCluster,
  startProbe,
  sumMetric,
} from './controller-lib.ts';
import { flag, listFlag, rssMiB, throughput, writeResults } from './lib.ts';

/**
 * Issuance at scale, cert-manager's benchmark of the split Secret cache (design/20221205-memory-management.md):
 * 500 Certificates from 10 CA Issuers, end to end from creating them to all Ready, with the CA Secrets
 * unlabelled (one live GET per signing under the split cache) and then labelled, in both cache modes, for
 * ECDSA P-256 and RSA 2048 keys. Each run gets a fresh API server and a fresh controller
 * (bench/controller-probe.ts: `certkit controller` with its client requests counted).
 *
 * Also measured, right before and right after each RSA run: 500 RSA 2048 keys generated alone with node:crypto,
 * 5 at a time (enough to keep every core and libuv's 4 threads busy, as the controller does); their mean is the
 * floor for that run (target: issuance within 1.15× of it, issue 19). Before and after each ECDSA run, the
 * same for the whole of a Certificate's cryptography (key, PEM, CSR, signature with the CSR's check), with
 * the controller's own pki functions: the machine is shared, so the 1.5 s target for 500 ECDSA Certificates
 * is shown beside that floor measured on either side of the run, and the CPU both processes spent per
 * Certificate beside the floor's. The controller's own CPU per Certificate and its peak RSS (VmHWM) are
 * reported too, for comparing controller changes or its node flags (docs/adr/1151).
 *
 * Usage: npm run bench:issuance [-- --certs=500 --workers=N --only=ecdsa|rsa --mode=filtered|unfiltered
 *        --ca=labelled|unlabelled --cpu-prof --apiserver-cpu-prof --apiserver-node-args=a,b
 *        --controller-node-args=a,b --apiserver-root=DIR --perf=FILE [--perf-all] --create-interval=MS
 *        --repeat=N --results=NAME --identity=admin|rbac|both]
 * (--perf: `perf record` of the controller's main thread during the issuances, into FILE; --cpu-prof: the
 * controller's profiles under bench/results/profiles/<run>/; --apiserver-cpu-prof: the API server's under
 * $TMPDIR/certkit-issuance-profiles/apiserver-<run>/, written when each run's server stops;
 * --apiserver-node-args / --controller-node-args: more flags for the server's or the controller's node, e.g.
 * --perf-basic-prof for `perf record -p`, or V8 heap flags to compare;
 * --apiserver-root: run the API server from another checkout, to compare two servers under one controller;
 * --repeat: run every case N times, in N rounds of all cases, for the spread of the RSA ratio on this noisy
 * machine (the summary gives each case's median); --results: write bench/results/NAME.{json,md} instead of
 * issuance.*, so that a partial or repeated run keeps the full one; --identity: the controller as the admin
 * (system:masters, which skips authorisation: the default) or as deploy/rbac.yaml's ServiceAccount with a
 * TokenRequest token, so every request is authorised by RBAC, as `certkit up` runs it; `both` runs each case
 * under both, the admin first in odd rounds and second in even ones (`npm run bench:issuance-rbac`))
 */

const CERTS = Number(flag('certs') ?? 500);
const ISSUERS = 10;
const WORKERS = Number(flag('workers') ?? 5);
const ONLY = flag('only');
const ONLY_MODE = flag('mode');
const ONLY_CA = flag('ca');
const CPU_PROF = process.argv.includes('--cpu-prof');
const PERF_FILE = flag('perf');
/** --perf-all: record every CPU (both processes, the kernel, the bench) instead of the controller's main thread. */
const PERF_ALL = process.argv.includes('--perf-all');
const APISERVER_CPU_PROF = process.argv.includes('--apiserver-cpu-prof');
const APISERVER_ROOT = flag('apiserver-root');
/**
 * --create-interval=MS: create the Certificates one at a time, MS apart, instead of 16 at a time. An ECDSA run
 * at the pace an RSA run's key generation sets (about 25 ms) shows what the same work costs when it trickles
 * in (see bench/wakeup.ts).
 */
const CREATE_INTERVAL_MS = Number(flag('create-interval') ?? 0);
const REPEAT = Number(flag('repeat') ?? 1);
const RESULTS_NAME = flag('results') ?? 'issuance';
const IDENTITY = flag('identity') ?? 'admin';
if (!['admin', 'rbac', 'both'].includes(IDENTITY))
  throw new Error(`--identity=${IDENTITY}: admin, rbac or both`);
type Identity = 'admin' | 'rbac';
const APISERVER_NODE_ARGS = listFlag('apiserver-node-args');
const CONTROLLER_NODE_ARGS = listFlag('controller-node-args');
const NS = 'bench';
/** Issue 19's targets: RSA issuance within this many times key generation alone; 500 ECDSA in this many seconds. */
const RSA_RATIO_TARGET = 1.15;
const ECDSA_SECONDS_TARGET = (1.5 * CERTS) / 500;
const CONTROLLER_FLAGS = ['--kube-api-qps=-1', `--concurrent-workers=${WORKERS}`];

const ALGORITHMS = [
  { id: 'ecdsa', name: 'ECDSA P-256', privateKey: { algorithm: 'ECDSA', size: 256 } },
  { id: 'rsa', name: 'RSA 2048', privateKey: { algorithm: 'RSA', size: 2048 } },
] as const;
const MODES = [
  { id: 'filtered', flag: '--secrets-filtered-caching=true' },
  { id: 'unfiltered', flag: '--secrets-filtered-caching=false' },
] as const;

/** CPU seconds (user + system) used so far, from a /proc stat line. */
function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds a process has used so far; `main` counts its main thread only (not libuv's pool, where RSA keys are generated). */
async function cpuSeconds(pid: number, mainThreadOnly = false): Promise<number> {
  return statCpuSeconds(
    await readFile(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8'),
  );
}

/** CPU seconds of a process's V8 worker threads: optimizing compilers and the GC's helpers. */
async function v8WorkerCpuSeconds(pid: number): Promise<number> {
  let total = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (stat.includes('V8Worker')) total += statCpuSeconds(stat);
  }
  return total;
}

function log(msg: string) {
  process.stderr.write(`[bench:issuance] ${msg}\n`);
}

/** `count` RSA 2048 keys with node:crypto, `concurrency` at a time, on libuv's thread pool as in the controller. */
async function rsaKeygen(
  count: number,
  concurrency: number,
): Promise<{ seconds: number; cpuSeconds: number }> {
  const generate = promisify(generateKeyPair);
  const cpu = process.cpuUsage();
  const { seconds } = await throughput(count, concurrency, async () => {
    await generate('rsa', { modulusLength: 2048, publicExponent: 65537 });
  });
  const used = process.cpuUsage(cpu);
  return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

type CaPair = { certPem: string; keyPem: string };

async function caPairs(algorithm: 'ECDSA' | 'RSA'): Promise<CaPair[]> {
  const keySpec = algorithm === 'RSA' ? { algorithm, size: 2048 } : { algorithm };
  return Promise.all(
    Array.from({ length: ISSUERS }, async () => {
      const ca = await rootCa(keySpec as never);
      return { certPem: ca.certPem, keyPem: encodePrivateKey(ca.key) };
    }),
  );
}

async function issuersReady(cluster: Cluster): Promise<void> {
  const issuers = cluster.admin.resource<Issuer>(issuersRef);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = (await issuers.list(NS)).items.filter((i) =>
      i.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready === ISSUERS) return;
    if (Date.now() > deadline) throw new Error(`${ready}/${ISSUERS} issuers Ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function isReady(cert: Certificate): boolean {
  const ready = cert.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === cert.metadata.generation;
}

interface Run {
  /** Who the controller was: the admin (no authorisation) or deploy/rbac.yaml's ServiceAccount. */
  identity: Identity;
  algorithm: string;
  mode: string;
  caSecrets: 'unlabelled' | 'labelled';
  seconds: number;
  certsPerSec: number;
  controllerWritesPerCert: number;
  controllerWritesByResource: Record<string, number>;
  controllerRequestsPerCert: number;
  liveSecretGetsPerIssuance: number;
  secretGetterHitsPerIssuance: Record<string, number>;
  apiserverSecretGetsPerIssuance: number;
  apiserverWritesPerCert: number;
  syncMs: number;
  cpuSeconds: {
    controller: number;
    controllerMainThread: number;
    /** JIT compilers and GC helpers. */
    controllerV8Workers: number;
    apiserver: number;
    apiserverV8Workers: number;
    bench: number;
  };
  /** Reconciles that ended in a rate-limited requeue or an error, by controller, per Certificate. */
  retriesPerCert: Record<string, number>;
  /** Reconciles of any result, by controller, per Certificate. */
  reconcilesPerCert: Record<string, number>;
  profile?: string;
  apiserverProfile?: string;
  /**
   * RSA: the floor, the mean of key generation measured alone right before and right after this run (each
   * also given), and this run's time over it.
   */
  keygenAlone?: { seconds: number; cpuSeconds: number; before: number; after: number };
  ratioToKeygen?: number;
  /** ECDSA: the same, for all of a Certificate's cryptography (ecdsaCrypto). */
  cryptoAlone?: { seconds: number; cpuSeconds: number; before: number; after: number };
  ratioToCrypto?: number;
  /** CPU milliseconds the controller and the API server spent per Certificate, together. */
  cpuMsPerCert?: number;
  /** CPU milliseconds the controller alone spent per Certificate (all its threads). */
  controllerCpuMsPerCert?: number;
  /** The controller's peak RSS (VmHWM, MiB) over its life: start-up, the initial lists and the issuances. */
  controllerPeakRssMiB?: number;
  /** CPU milliseconds the API server alone spent per Certificate (all its threads). */
  apiserverCpuMsPerCert?: number;
  /**
   * The SQLite store's group commits during the issuances (certkit_storage_commit_*; absent from a server
   * without those metrics, e.g. an older --apiserver-root): per Certificate, writes in each, and the mean time
   * from handing a group to the writer to its answer.
   */
  commitGroups?: { perCert: number; writesPerGroup: number; msPerGroup: number };
}

const WRITE_VERBS = ['create', 'update', 'patch', 'delete'];

async function run(
  algorithm: (typeof ALGORITHMS)[number],
  mode: (typeof MODES)[number],
  labelled: boolean,
  cas: CaPair[],
  identity: Identity,
): Promise<Run> {
  // The server's whole life is profiled (CRD install and setup too); it is small next to the 500 issuances.
  const apiserverProfileDir = join(
    tmpdir(),
    'certkit-issuance-profiles',
    `apiserver-${algorithm.id}-${mode.id}-${labelled ? 'labelled' : 'unlabelled'}`,
  );
  if (APISERVER_CPU_PROF) await mkdir(apiserverProfileDir, { recursive: true });
  const cluster = await startCluster({
    nodeArgs: [
      ...APISERVER_NODE_ARGS,
      ...(APISERVER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${apiserverProfileDir}`] : []),
    ],
    root: APISERVER_ROOT,
  });
  const abort = new AbortController();
  const profileDir = join(
    import.meta.dirname,
    'results',
    'profiles',
    `${algorithm.id}-${mode.id}-${labelled}`,
  );
  try {
    await createNamespace(cluster, NS);
    const secrets = cluster.admin.resource<Secret & KubeObject>(builtins.secrets);
    for (let i = 0; i < ISSUERS; i++) {
      await secrets.create(NS, {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: {
          name: `ca-${i}`,
          labels: labelled ? { [Labels.partOfCertManagerController]: 'true' } : undefined,
        },
        data: {
          'tls.crt': Buffer.from(cas[i].certPem).toString('base64'),
          'tls.key': Buffer.from(cas[i].keyPem).toString('base64'),
        },
      });
      await cluster.admin.resource<Issuer>(issuersRef).create(NS, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: `ca-${i}`, namespace: NS },
        spec: { ca: { secretName: `ca-${i}` } },
      } as Issuer);
    }

    if (CPU_PROF) await mkdir(profileDir, { recursive: true });
    const probe = startProbe(
      identity === 'rbac' ? await serviceAccountKubeconfig(cluster) : cluster.kubeconfigPath,
      [mode.flag, ...CONTROLLER_FLAGS],
      [
        ...CONTROLLER_NODE_ARGS,
        ...(CPU_PROF
          ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]
          : PERF_FILE
            ? ['--perf-basic-prof', '--interpreted-frames-native-stack']
            : []),
      ],
    );
    const syncMs = await probe.synced;
    await issuersReady(cluster);

    // The bench's own view of the Certificates: a watch, so that waiting costs the API server nothing.
    const factory = new SharedInformerFactory({ client: cluster.admin, log: silentLogger });
    const watched = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
    let readyCount = 0;
    const ready = new Set<string>();
    let allReady: () => void;
    const done = new Promise<void>((resolve) => (allReady = resolve));
    const seen = (cert: Certificate) => {
      if (!isReady(cert) || ready.has(cert.metadata.name!)) return;
      ready.add(cert.metadata.name!);
      if (++readyCount === CERTS) allReady();
    };
    watched.addEventHandler({ onAdd: seen, onUpdate: (_old, cert) => seen(cert) });
    factory.start(abort.signal);
    await watched.waitForSync(abort.signal);

    const apiBefore = await apiserverMetrics(cluster);
    const ctlBefore = await probeMetrics(probe);
    const cpuBefore = {
      controller: await cpuSeconds(probe.pid),
      controllerMainThread: await cpuSeconds(probe.pid, true),
      controllerV8Workers: await v8WorkerCpuSeconds(probe.pid),
      apiserver: await cpuSeconds(cluster.server.pid),
      apiserverV8Workers: await v8WorkerCpuSeconds(cluster.server.pid),
      bench: process.cpuUsage(),
    };
    // CPU samples of the controller's main thread (perf counts CPU time; --cpu-prof samples wall time).
    const perfScope = PERF_ALL ? ['-a'] : ['-t', String(probe.pid)];
    const perf = PERF_FILE
      ? spawn('perf', ['record', '-q', '-F', '997', '-g', ...perfScope, '-o', PERF_FILE], { stdio: 'ignore' })
      : undefined;
    const started = performance.now();
    const certificates = cluster.admin.resource<Certificate>(certificatesRef);
    await throughput(CERTS, CREATE_INTERVAL_MS ? 1 : 16, async (i) => {
      if (CREATE_INTERVAL_MS) await new Promise((r) => setTimeout(r, CREATE_INTERVAL_MS));
      await certificates.create(NS, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `cert-${i}`, namespace: NS },
        spec: {
          secretName: `cert-${i}-tls`,
          commonName: `cert-${i}.${NS}.example`,
          dnsNames: [`cert-${i}.${NS}.example`],
          privateKey: algorithm.privateKey,
          issuerRef: { name: `ca-${i % ISSUERS}` },
        },
      } as Certificate);
    });
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`only ${readyCount}/${CERTS} Ready after 600 s`)), 600_000).unref(),
    );
    await Promise.race([done, timeout]);
    const seconds = (performance.now() - started) / 1000;
    const benchCpu = process.cpuUsage(cpuBefore.bench);
    const cpu = {
      controller: round((await cpuSeconds(probe.pid)) - cpuBefore.controller, 2),
      controllerMainThread: round((await cpuSeconds(probe.pid, true)) - cpuBefore.controllerMainThread, 2),
      controllerV8Workers: round((await v8WorkerCpuSeconds(probe.pid)) - cpuBefore.controllerV8Workers, 2),
      apiserver: round((await cpuSeconds(cluster.server.pid)) - cpuBefore.apiserver, 2),
      apiserverV8Workers: round(
        (await v8WorkerCpuSeconds(cluster.server.pid)) - cpuBefore.apiserverV8Workers,
        2,
      ),
      bench: round((benchCpu.user + benchCpu.system) / 1e6, 2),
    };
    const cpuMsPerCert = round(((cpu.controller + cpu.apiserver) * 1000) / CERTS, 1);
    const controllerPeakRssMiB = round(await rssMiB(probe.pid, 'VmHWM'));
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((r) => perf.once('exit', r));
    }
    // Let trailing work (request clean-up, events) finish, so that per-Certificate counts are complete.
    await new Promise((r) => setTimeout(r, 1_000));
    const api = diffMetrics(apiBefore, await apiserverMetrics(cluster));
    const ctl = diffMetrics(ctlBefore, await probeMetrics(probe));
    await probe.exit();

    const writesByResource: Record<string, number> = {};
    for (const [series, value] of ctl) {
      if (!series.startsWith('certkit_client_requests_total{') || !value) continue;
      const verb = /verb="([^"]+)"/.exec(series)?.[1] ?? '';
      const resource = (/resource="([^"]*)"/.exec(series)?.[1] ?? '').replace('.cert-manager.io', '');
      const code = Number(/code="([^"]*)"/.exec(series)?.[1] ?? 0);
      if (!WRITE_VERBS.includes(verb)) continue;
      const key = `${verb} ${resource}${code >= 200 && code < 300 ? '' : ` (${code})`}`;
      writesByResource[key] = round((writesByResource[key] ?? 0) + value / CERTS, 2);
    }
    const controllerWrites = WRITE_VERBS.reduce(
      (sum, verb) => sum + sumMetric(ctl, 'certkit_client_requests_total', { verb }),
      0,
    );
    const apiserverWrites =
      WRITE_VERBS.reduce((sum, verb) => sum + sumMetric(api, 'apiserver_request_total', { verb }), 0) - CERTS;
    const retries: Record<string, number> = {};
    const reconciles: Record<string, number> = {};
    for (const [series, value] of ctl) {
      if (!series.startsWith('controller_runtime_reconcile_total{') || !value) continue;
      const result = /result="([^"]+)"/.exec(series)?.[1] ?? '';
      const controller = /controller="([^"]+)"/.exec(series)?.[1] ?? '';
      reconciles[controller] = round((reconciles[controller] ?? 0) + value / CERTS, 2);
      if (result !== 'requeue' && result !== 'error') continue;
      retries[`${controller} ${result}`] = round(value / CERTS, 2);
    }
    const groups = sumMetric(api, 'certkit_storage_commit_groups_total');
    const commitGroups = groups
      ? {
          perCert: round(groups / CERTS, 2),
          writesPerGroup: round(sumMetric(api, 'certkit_storage_commit_writes_total') / groups, 2),
          msPerGroup: round((sumMetric(api, 'certkit_storage_commit_seconds_total') * 1000) / groups, 3),
        }
      : undefined;
    const hits: Record<string, number> = {};
    for (const source of ['cache', 'live', 'notfound']) {
      hits[source] = round(sumMetric(ctl, 'certkit_secret_getter_requests_total', { source }) / CERTS, 2);
    }
    return {
      identity,
      algorithm: algorithm.name,
      mode: mode.id,
      caSecrets: labelled ? 'labelled' : 'unlabelled',
      seconds: round(seconds, 2),
      certsPerSec: round(CERTS / seconds, 1),
      controllerWritesPerCert: round(controllerWrites / CERTS, 2),
      controllerWritesByResource: writesByResource,
      controllerRequestsPerCert: round(sumMetric(ctl, 'certkit_client_requests_total') / CERTS, 2),
      liveSecretGetsPerIssuance: hits.live,
      secretGetterHitsPerIssuance: hits,
      apiserverSecretGetsPerIssuance: round(
        sumMetric(api, 'apiserver_request_total', { verb: 'get', resource: 'secrets' }) / CERTS,
        2,
      ),
      apiserverWritesPerCert: round(apiserverWrites / CERTS, 2),
      syncMs,
      cpuSeconds: cpu,
      retriesPerCert: retries,
      reconcilesPerCert: reconciles,
      cpuMsPerCert,
      controllerCpuMsPerCert: round((cpu.controller * 1000) / CERTS, 2),
      controllerPeakRssMiB,
      apiserverCpuMsPerCert: round((cpu.apiserver * 1000) / CERTS, 2),
      commitGroups,
      profile: CPU_PROF ? profileDir : undefined,
      apiserverProfile: APISERVER_CPU_PROF ? apiserverProfileDir : undefined,
    };
  } finally {
    abort.abort();
    await cluster.stop();
  }
}

/**
 * deploy/rbac.yaml applied, and a kubeconfig next to the admin's with a TokenRequest token of its
 * ServiceAccount (three hours, longer than any run; `certkit up` refreshes its tokens, which costs one request
 * an hour and nothing per request).
 */
async function serviceAccountKubeconfig(cluster: Cluster): Promise<string> {
  const objects = parseRbacManifest(CONTROLLER_RBAC_YAML);
  await applyRbacManifest(cluster.admin, objects);
  const account = manifestServiceAccount(objects);
  const request = (await cluster.admin.resource(builtins.serviceAccounts).create(
    account.namespace,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { name: account.name },
      spec: { expirationSeconds: 3 * 3600 },
    } as KubeObject,
    { subresource: 'token' },
  )) as KubeObject & { status: { token: string } };
  const path = join(cluster.server.dataDir, 'kubeconfig-controller');
  await writeKubeconfig(path, {
    server: cluster.admin.config.server,
    caCertPem: cluster.admin.config.ca!,
    token: request.status.token,
  });
  return path;
}

// The floor for RSA: node:crypto's generateKeyPair, --workers (5) at a time (the controller keeps up to 8 in
// flight; either way every core is busy), measured alone right before and right after each RSA run. This
// machine is shared and its speed drifts from minute to minute (by ±10% between two floors a minute apart),
// so each run is judged against the mean of the floors on either side of it.
async function floorForRsa(): Promise<{ seconds: number; cpuSeconds: number }> {
  log(`generating ${CERTS} RSA 2048 keys alone, ${WORKERS} at a time`);
  const floor = await rsaKeygen(CERTS, WORKERS);
  log(`… ${floor.seconds.toFixed(2)} s (${floor.cpuSeconds.toFixed(1)} CPU s)`);
  return floor;
}

// Cases in the order they are reported; with --repeat, whole rounds of them, so that the machine's drifting
// load falls on every case alike instead of on whichever ran last.
type Case = {
  identity: Identity;
  algorithm: (typeof ALGORITHMS)[number];
  mode: (typeof MODES)[number];
  labelled: boolean;
  cas: CaPair[];
};
const cases: Case[] = [];
for (const algorithm of ALGORITHMS) {
  if (ONLY && ONLY !== algorithm.id) continue;
  const cas = await caPairs(algorithm.privateKey.algorithm);
  for (const mode of MODES) {
    if (ONLY_MODE && ONLY_MODE !== mode.id) continue;
    for (const labelled of [false, true]) {
      if (ONLY_CA && ONLY_CA !== (labelled ? 'labelled' : 'unlabelled')) continue;
      for (const identity of IDENTITY === 'both' ? (['admin', 'rbac'] as const) : [IDENTITY as Identity])
        cases.push({ identity, algorithm, mode, labelled, cas });
    }
  }
}
const runsByCase = cases.map(() => [] as Run[]);
for (let round = 0; round < REPEAT; round++) {
  // With both identities, A B then B A: the machine's drift falls on both alike.
  const order = [...cases.entries()];
  if (IDENTITY === 'both' && round % 2 === 1) order.reverse();
  for (const [i, c] of order) {
    runsByCase[i].push(await measuredRun(c.algorithm, c.mode, c.labelled, c.cas, c.identity));
  }
}
const runs = runsByCase.flat();

/**
 * What the controller's cryptography costs for `count` ECDSA P-256 Certificates, `concurrency` at a time, as
 * it does it: the key (libuv's pool), its PEM for the Secret, the CSR, and the CA's signature over it
 * (signCertificate checks the CSR's signature first, as the CA signer does).
 */
async function ecdsaCrypto(
  count: number,
  concurrency: number,
  ca: CaPair,
): Promise<{ seconds: number; cpuSeconds: number }> {
  const issuer = { certPem: ca.certPem, key: parsePrivateKey(ca.keyPem) };
  const cpu = process.cpuUsage();
  const { seconds } = await throughput(count, concurrency, async (i) => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    encodePrivateKey(key);
    const name = `cert-${i}.${NS}.example`;
    const csrPem = await buildCertificateRequest({ commonName: name, dnsNames: [name] }, key);
    await signCertificate({ csrPem, duration: 90 * 24 * 3600_000, isCA: false, issuer });
  });
  const used = process.cpuUsage(cpu);
  return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

async function floorForEcdsa(ca: CaPair): Promise<{ seconds: number; cpuSeconds: number }> {
  log(`the cryptography of ${CERTS} ECDSA Certificates alone, ${WORKERS} at a time`);
  const floor = await ecdsaCrypto(CERTS, WORKERS, ca);
  log(`… ${floor.seconds.toFixed(2)} s (${floor.cpuSeconds.toFixed(2)} CPU s)`);
  return floor;
}

/** One run, with its floor (RSA: key generation; ECDSA: all its cryptography) measured on either side of it. */
async function measuredRun(
  algorithm: (typeof ALGORITHMS)[number],
  mode: (typeof MODES)[number],
  labelled: boolean,
  cas: Awaited<ReturnType<typeof caPairs>>,
  identity: Identity,
): Promise<Run> {
  const floorBefore = algorithm.id === 'rsa' ? await floorForRsa() : undefined;
  const cryptoBefore = algorithm.id === 'ecdsa' ? await floorForEcdsa(cas[0]) : undefined;
  log(
    `${algorithm.name}, ${mode.id}, CA Secrets ${labelled ? 'labelled' : 'unlabelled'}, controller as ${identity}`,
  );
  const r = await run(algorithm, mode, labelled, cas, identity);
  if (cryptoBefore) {
    const cryptoAfter = await floorForEcdsa(cas[0]);
    const seconds = (cryptoBefore.seconds + cryptoAfter.seconds) / 2;
    r.cryptoAlone = {
      seconds: round(seconds, 2),
      cpuSeconds: round((cryptoBefore.cpuSeconds + cryptoAfter.cpuSeconds) / 2, 2),
      before: round(cryptoBefore.seconds, 2),
      after: round(cryptoAfter.seconds, 2),
    };
    r.ratioToCrypto = round(r.seconds / seconds, 2);
  }
  if (floorBefore) {
    const floorAfter = await floorForRsa();
    const seconds = (floorBefore.seconds + floorAfter.seconds) / 2;
    r.keygenAlone = {
      seconds: round(seconds, 2),
      cpuSeconds: round((floorBefore.cpuSeconds + floorAfter.cpuSeconds) / 2, 1),
      before: round(floorBefore.seconds, 2),
      after: round(floorAfter.seconds, 2),
    };
    r.ratioToKeygen = round(r.seconds / seconds, 2);
  }
  log(
    `… ${r.seconds} s${r.ratioToKeygen ? ` (${r.ratioToKeygen} × keygen alone)` : ''}, ${r.liveSecretGetsPerIssuance} live Secret GETs per issuance`,
  );
  return r;
}

/** "median M, range A–B, K of N under 1.15" for a set of RSA runs. */
function ratioSummary(rs: Run[]): string {
  const ratios = rs.flatMap((r) => (r.ratioToKeygen ? [r.ratioToKeygen] : [])).sort((a, b) => a - b);
  const middle = (ratios.length - 1) / 2;
  const median = round((ratios[Math.floor(middle)] + ratios[Math.ceil(middle)]) / 2, 3);
  const under = ratios.filter((x) => x < RSA_RATIO_TARGET).length;
  return `median ${median}, range ${ratios[0]}–${ratios.at(-1)}, ${under} of ${ratios.length} under ${RSA_RATIO_TARGET}`;
}
const rsaRuns = runs.filter((r) => r.ratioToKeygen);
const rsaCases = runsByCase.filter((rs) => rs[0]?.ratioToKeygen);
const rsaSummary = rsaRuns.length
  ? `RSA 2048 ratio to keygen alone over ${rsaRuns.length} run(s): ${ratioSummary(rsaRuns)}.` +
    (REPEAT > 1
      ? ` By case: ${rsaCases.map((rs) => `${rs[0].mode}/${rs[0].caSecrets} ${ratioSummary(rs)}`).join('; ')}.`
      : '')
  : undefined;

/**
 * With --identity=both: per case, the medians under RBAC over those as the admin (time to all Ready, and the
 * API server's and the controller's CPU seconds). The goal: RBAC costs under 5%.
 */
function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return (sorted[Math.floor(middle)] + sorted[Math.ceil(middle)]) / 2;
}
const identityComparison =
  IDENTITY === 'both'
    ? cases.flatMap((c, i) => {
        if (c.identity !== 'rbac') return [];
        const adminIndex = cases.findIndex(
          (a) =>
            a.identity === 'admin' &&
            a.algorithm === c.algorithm &&
            a.mode === c.mode &&
            a.labelled === c.labelled,
        );
        const rbacRuns = runsByCase[i];
        const adminRuns = runsByCase[adminIndex];
        const ratio = (f: (r: Run) => number) => round(median(rbacRuns.map(f)) / median(adminRuns.map(f)), 3);
        return [
          {
            case: `${c.algorithm.name}, ${c.mode.id}, CA Secrets ${c.labelled ? 'labelled' : 'unlabelled'}`,
            rounds: rbacRuns.length,
            adminSeconds: adminRuns.map((r) => r.seconds),
            rbacSeconds: rbacRuns.map((r) => r.seconds),
            rbacOverAdmin: {
              seconds: ratio((r) => r.seconds),
              apiserverCpu: ratio((r) => r.cpuSeconds.apiserver),
              controllerCpu: ratio((r) => r.cpuSeconds.controller),
              totalCpu: ratio((r) => r.cpuSeconds.apiserver + r.cpuSeconds.controller),
            },
          },
        ];
      })
    : undefined;

const target = (r: Run) =>
  r.keygenAlone
    ? `< ${round(RSA_RATIO_TARGET * r.keygenAlone.seconds, 1)} s (${RSA_RATIO_TARGET} × keygen ${r.keygenAlone.seconds} s): ${r.ratioToKeygen} × ${r.ratioToKeygen! < RSA_RATIO_TARGET ? '✓' : '✗'}`
    : r.cryptoAlone
      ? `< ${ECDSA_SECONDS_TARGET} s ${r.seconds < ECDSA_SECONDS_TARGET ? '✓' : '✗'} (crypto alone ${r.cryptoAlone.seconds} s: ${r.ratioToCrypto} ×)`
      : `< ${ECDSA_SECONDS_TARGET} s ${r.seconds < ECDSA_SECONDS_TARGET ? '✓' : '✗'}`;
const results = {
  date: new Date().toISOString(),
  certificates: CERTS,
  issuers: ISSUERS,
  controllerFlags: CONTROLLER_FLAGS,
  cpus: availableParallelism(),
  rsaKeygenConcurrency: WORKERS,
  createIntervalMs: CREATE_INTERVAL_MS || undefined,
  rsaSummary,
  identityComparison,
  runs,
  published: {
    source: 'cert-manager design/20221205-memory-management.md (kind cluster)',
    masterSeconds: 417,
    splitCacheUnlabelledSeconds: 596,
    splitCacheLabelledSeconds: 499,
    partialMetadataOnlySeconds: 1085,
  },
};
const table = [
  `| ${CERTS} Certificates, ${ISSUERS} CA Issuers | controller as | cache mode | CA Secrets | all Ready after | target | controller writes / cert | live Secret GETs / issuance | API server Secret GETs / issuance | CPU s: controller (main thread, V8 workers) / API server (V8 workers) / bench | CPU ms / cert: both processes (crypto alone) |`,
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...runs.map(
    (r) =>
      `| ${r.algorithm} | ${r.identity} | ${r.mode} | ${r.caSecrets} | ${r.seconds} s | ${target(r)} | ${r.controllerWritesPerCert} | ${r.liveSecretGetsPerIssuance} | ${r.apiserverSecretGetsPerIssuance} | ${r.cpuSeconds.controller} (${r.cpuSeconds.controllerMainThread}, ${r.cpuSeconds.controllerV8Workers}) / ${r.cpuSeconds.apiserver} (${r.cpuSeconds.apiserverV8Workers}) / ${r.cpuSeconds.bench} | ${r.cpuMsPerCert}${r.cryptoAlone ? ` (${round((r.cryptoAlone.cpuSeconds * 1000) / CERTS, 2)})` : r.keygenAlone ? ` (keygen ${round((r.keygenAlone.cpuSeconds * 1000) / CERTS, 1)})` : ''} |`,
  ),
  '',
  `Controller: ${CONTROLLER_FLAGS.join(' ')}; ${availableParallelism()} CPUs shared by the API server, the controller and the bench.` +
    (CREATE_INTERVAL_MS ? ` Certificates created one at a time, ${CREATE_INTERVAL_MS} ms apart.` : ''),
  `RSA 2048 keygen alone: node:crypto generateKeyPair, ${WORKERS} at a time, ${CERTS} keys, the mean of the times measured right before and right after each RSA run: ${runs
    .filter((r) => r.keygenAlone)
    .map(
      (r) =>
        `${r.keygenAlone!.seconds} s (${r.keygenAlone!.before} and ${r.keygenAlone!.after} s; ${r.keygenAlone!.cpuSeconds} CPU s)`,
    )
    .join(', ')}.`,
  ...(rsaSummary ? [rsaSummary] : []),
  ...(identityComparison ?? []).map(
    (c) =>
      `${c.case}, RBAC (deploy/rbac.yaml's ServiceAccount) over admin (system:masters), medians of ${c.rounds} round(s): ` +
      `time to all Ready ${c.rbacOverAdmin.seconds} (${c.adminSeconds.join(', ')} s as admin; ${c.rbacSeconds.join(', ')} s under RBAC), ` +
      `API server CPU ${c.rbacOverAdmin.apiserverCpu}, controller CPU ${c.rbacOverAdmin.controllerCpu}, both ${c.rbacOverAdmin.totalCpu}.`,
  ),
  `ECDSA P-256 cryptography alone (key, PEM, CSR, CA signature with the CSR check; ${WORKERS} at a time, ${CERTS} Certificates), the mean of the times measured right before and right after each ECDSA run: ${runs
    .filter((r) => r.cryptoAlone)
    .map(
      (r) =>
        `${r.cryptoAlone!.seconds} s (${r.cryptoAlone!.before} and ${r.cryptoAlone!.after} s; ${r.cryptoAlone!.cpuSeconds} CPU s)`,
    )
    .join(', ')}.`,
  `The controller alone, run by run: CPU ms per Certificate ${runs.map((r) => r.controllerCpuMsPerCert).join(', ')}; peak RSS (VmHWM) ${runs.map((r) => `${r.controllerPeakRssMiB} MiB`).join(', ')}.`,
  `The API server alone, run by run: CPU ms per Certificate ${runs.map((r) => r.apiserverCpuMsPerCert).join(', ')}; SQLite group commits per Certificate (writes per group, ms per commit) ${runs.map((r) => (r.commitGroups ? `${r.commitGroups.perCert} (${r.commitGroups.writesPerGroup}, ${r.commitGroups.msPerGroup})` : 'n/a')).join(', ')}.`,
  `Writes per Certificate (first run): ${Object.entries(runs[0]?.controllerWritesByResource ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}.`,
  'cert-manager, published (kind, 500 Certificates, 10 CA issuers): master 417 s; split-cache prototype 596 s',
  '(CA Secrets unlabelled), 499 s (labelled); PartialMetadata only 1085 s.',
].join('\n');
await writeResults(RESULTS_NAME, results, table);
