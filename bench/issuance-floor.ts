import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig, SharedInformerFactory, silentLogger } from '@certkit/runtime';
import { installCrds } from '../packages/certificates/src/controller.ts';
import { Labels } from '../packages/certificates/src/api/constants.ts';
import type { Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  clusterIssuersRef,
  issuersRef,
} from '../packages/certificates/src/controllers/refs.ts';
import { encodePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';
import {
  type Cluster,
  diffMetrics,
  probeMetrics,
  round,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
  startProbe,
} from './controller-lib.ts';
import { type Client, flag, median, type ServerProcess, throughput, writeResults } from './lib.ts';

/**
 * The floor an issuance's API traffic sets (issue 19, docs/adr/1205): what the API writes and watch events of
 * an ECDSA issuance cost the API server and a client when the client does nothing else. bench:issuance's
 * cluster (the same `certkit apiserver`, CRDs, namespace, 10 labelled CA Secrets and CA Issuers, Certificates
 * created 16 at a time) is given, in place of the certificate controller, bench/issuance-floor-client.ts: the
 * controller's watches and client, replaying the controller's writes for each Certificate (same requests,
 * real-sized bodies, each step when the watch event it reacts to arrives, 5 workers per replayed controller),
 * with no controller logic and no cryptography. Both run with the controller's shipped node flags
 * (SHIPPED_CONTROLLER_NODE_ARGS), both with optimizing compilers turned on at first work.
 *
 * Cases, each on a fresh API server, in rounds (--repeat) so the machine's drift falls on all alike:
 *   real             the certificate controller (bench/controller-probe.ts, bench:issuance's flags)
 *   floor            the replay: the controller's informers (createControllerContext), 6 Events, no 409
 *   floor-no-events  without the 6 Events
 *   floor-409        with one 409 per Certificate (a status update from a replaced version, sent first)
 *   floor-plain-informers  the same watches without the controller's cache transforms and indices
 *   floor-http       the replay over plain HTTP (bench/plain-http-apiserver.ts; a measurement only)
 *   real-http        the controller over plain HTTP
 *   floor-warm, real-warm  the same as floor and real, measured on a second batch of Certificates (a process
 *                    whose code is warm, as one that has issued before)
 *   floor-bare-http  without Events, transforms and TLS together: what is left of the floor
 *   floor-3-updates  the Certificate's status written 3 times instead of 5 (a what-if: fewer visible writes);
 *                    floor-3-updates-no-events: and without the Events
 * After the `floor` case's issuances, the cost of each kind of request alone (--kinds=false to skip).
 *
 * Usage: npm run bench:issuance-floor [-- --certs=500 --repeat=3 --cases=real,floor,... --kinds=false
 *        --kind-count=1000 --results=NAME --perf=PREFIX --client-node-args=none]
 * CPU is read from /proc/PID/stat (user + system, all threads) of the API server and the client process, from
 * the first Certificate created to the last one Ready.
 */

const CERTS = Number(flag('certs') ?? 500);
const REPEAT = Number(flag('repeat') ?? 3);
const ISSUERS = 10;
const WORKERS = 5;
const NS = 'bench';
const KINDS = flag('kinds') !== 'false';
/** Requests of each kind in the per-kind measurement (enough for the 10 ms ticks of /proc's CPU times). */
const KIND_COUNT = Number(flag('kind-count') ?? 1000);
const RESULTS_NAME = flag('results') ?? 'issuance-floor';
/**
 * --perf=PREFIX: `perf record` of the API server and the client during each measured batch, into
 * PREFIX-<case>-<round>.data, with both processes started with --perf-basic-prof so JavaScript frames have names
 * (the plain-HTTP server is started without it).
 */
const PERF_PREFIX = flag('perf');
/**
 * --client-node-args=none: the controller and the floor without the shipped node flags, as bench:issuance runs
 * its controller by default (its figures are comparable with these then).
 */
const CLIENT_NODE_ARGS = flag('client-node-args') === 'none' ? [] : SHIPPED_CONTROLLER_NODE_ARGS;
const PERF_NODE_ARGS = PERF_PREFIX ? ['--perf-basic-prof', '--interpreted-frames-native-stack'] : [];
const ALL_CASES = [
  'real',
  'floor',
  'floor-no-events',
  'floor-409',
  'floor-plain-informers',
  'floor-http',
  'real-http',
  'floor-warm',
  'real-warm',
  'floor-bare-http',
  'floor-3-updates',
  'floor-3-updates-no-events',
] as const;
type CaseName = (typeof ALL_CASES)[number];
const CASES = (flag('cases')?.split(',') ?? ALL_CASES) as CaseName[];
for (const c of CASES) if (!ALL_CASES.includes(c)) throw new Error(`--cases: unknown case ${c}`);
const CONTROLLER_FLAGS = [
  '--secrets-filtered-caching=true',
  '--kube-api-qps=-1',
  `--concurrent-workers=${WORKERS}`,
];
const here = import.meta.dirname;

function log(msg: string) {
  process.stderr.write(`[bench:issuance-floor] ${msg}\n`);
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/PID/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of the whole line, in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * bench/plain-http-apiserver.ts in a fresh data dir, with the CRDs installed: startCluster's cluster over
 * http://. A measurement only.
 */
async function startPlainHttpCluster(): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-floor-http-'));
  const child = spawn(
    process.execPath,
    [join(here, 'plain-http-apiserver.ts'), '--data-dir', dir, '--port', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`plain HTTP server exited with ${code}: ${out}`)));
  });
  const server: ServerProcess = {
    url,
    token: (await readFile(join(dir, 'token'), 'utf8')).trim(),
    ca: '',
    pid: child.pid!,
    child,
    dataDir: dir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
  const kubeconfigPath = join(dir, 'kubeconfig');
  const admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfigPath })), qps: -1 });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await admin.resource(builtins.namespaces).list(undefined, { limit: 1 });
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await installCrds(admin);
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef]) {
    const until = Date.now() + 15_000;
    for (;;) {
      try {
        await admin.resource(ref).list(undefined, { limit: 1 });
        break;
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  // /metrics is not read for these cases; Client is for HTTPS only.
  return {
    server,
    http: undefined as unknown as Client,
    admin,
    kubeconfigPath,
    async stop() {
      admin.close();
      await server.stop();
    },
  };
}

/** The floor client (bench/issuance-floor-client.ts), forked with the controller's shipped node flags. */
interface FloorClient {
  child: ChildProcess;
  pid: number;
  synced: Promise<void>;
  request<T>(cmd: string, extra?: Record<string, unknown>): Promise<T>;
  exit(): Promise<void>;
}

function startFloorClient(kubeconfigPath: string, flags: string[]): FloorClient {
  const child = fork(join(here, 'issuance-floor-client.ts'), [`--kubeconfig=${kubeconfigPath}`, ...flags], {
    execArgv: [...CLIENT_NODE_ARGS, ...PERF_NODE_ARGS],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Not left behind when the bench fails.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  child.once('exit', () => process.off('exit', orphanGuard));
  let next = 0;
  const pending = new Map<number, (body: Record<string, unknown>) => void>();
  let onSynced!: () => void;
  const synced = new Promise<void>((resolve, reject) => {
    onSynced = resolve;
    child.once('exit', (code, signal) => reject(new Error(`floor client exited (${code ?? signal})`)));
  });
  synced.catch(() => {});
  child.on('message', (raw) => {
    const msg = raw as { id?: number; type?: string };
    if (msg.type === 'synced') onSynced();
    else if (msg.id !== undefined) {
      pending.get(msg.id)?.(msg as Record<string, unknown>);
      pending.delete(msg.id);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid!,
    synced,
    request: <T>(cmd: string, extra: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        pending.set(id, (body) => (body.error ? reject(new Error(String(body.error))) : resolve(body as T)));
        child.send({ id, cmd, ...extra });
      }),
    async exit() {
      if (child.exitCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.send({ id: next++, cmd: 'exit' });
      await exited;
      clearTimeout(timer);
    },
  };
}

type CaPair = { certPem: string; keyPem: string };

/** bench:issuance's cluster contents: the namespace, 10 labelled CA Secrets and their CA Issuers. */
async function seed(cluster: Cluster, cas: CaPair[]): Promise<void> {
  await cluster.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  await cluster.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: 'floor-kinds' } });
  for (let i = 0; i < ISSUERS; i++) {
    await cluster.admin.resource(builtins.secrets).create(NS, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: `ca-${i}`, labels: { [Labels.partOfCertManagerController]: 'true' } },
      data: {
        'tls.crt': Buffer.from(cas[i].certPem).toString('base64'),
        'tls.key': Buffer.from(cas[i].keyPem).toString('base64'),
      },
    } as KubeObject);
    await cluster.admin.resource<Issuer>(issuersRef).create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: `ca-${i}`, namespace: NS },
      spec: { ca: { secretName: `ca-${i}` } },
    } as Issuer);
  }
}

async function issuersReady(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = (await cluster.admin.resource<Issuer>(issuersRef).list(NS)).items.filter((i) =>
      i.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready === ISSUERS) return;
    if (Date.now() > deadline) throw new Error(`${ready}/${ISSUERS} issuers Ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface KindCost {
  kind: string;
  count: number;
  /** CPU ms per request of that kind (with its watch event, where one reaches the client). */
  apiserverMs: number;
  clientMs: number;
}

interface Run {
  case: CaseName;
  round: number;
  seconds: number;
  cpuSeconds: { client: number; apiserver: number; bench: number };
  /** CPU ms per Certificate: the client (controller or replay), the API server, both. */
  msPerCert: { client: number; apiserver: number; both: number };
  /** The client's requests per Certificate during the issuances, by `verb resource code`. */
  requestsPerCert: Record<string, number>;
  kinds?: KindCost[];
}

const isReady = (cert: Certificate) => {
  const ready = cert.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === cert.metadata.generation;
};

async function run(name: CaseName, roundIndex: number, cas: CaPair[]): Promise<Run> {
  const http = name.endsWith('-http');
  const cluster = http ? await startPlainHttpCluster() : await startCluster({ nodeArgs: PERF_NODE_ARGS });
  const abort = new AbortController();
  try {
    await seed(cluster, cas);
    const real = name.startsWith('real');
    const floorFlags = [
      `--workers=${WORKERS}`,
      ...(['floor-no-events', 'floor-bare-http', 'floor-3-updates-no-events'].includes(name)
        ? ['--events=false']
        : []),
      ...(name.startsWith('floor-3-updates') ? ['--status-updates=3'] : []),
      ...(name === 'floor-409' ? ['--conflicts=1'] : []),
      ...(name === 'floor-plain-informers' || name === 'floor-bare-http' ? ['--informers=plain'] : []),
    ];
    const probe = real
      ? startProbe(cluster.kubeconfigPath, CONTROLLER_FLAGS, [...CLIENT_NODE_ARGS, ...PERF_NODE_ARGS])
      : undefined;
    const floor = real ? undefined : startFloorClient(cluster.kubeconfigPath, floorFlags);
    const pid = probe?.pid ?? floor!.pid;
    await (probe ? probe.synced : floor!.synced);
    if (probe) await issuersReady(cluster);

    const factory = new SharedInformerFactory({ client: cluster.admin, log: silentLogger });
    const watched = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
    // The batch being issued: its name prefix, the names seen Ready, and what to call when all are.
    let batch: { prefix: string; ready: Set<string>; done: () => void } | undefined;
    const seen = (cert: Certificate) => {
      const name = cert.metadata.name!;
      if (!batch || !name.startsWith(batch.prefix) || !isReady(cert) || batch.ready.has(name)) return;
      batch.ready.add(name);
      if (batch.ready.size === CERTS) batch.done();
    };
    watched.addEventHandler({ onAdd: seen, onUpdate: (_old, cert) => seen(cert) });
    factory.start(abort.signal);
    await watched.waitForSync(abort.signal);
    const certificates = cluster.admin.resource<Certificate>(certificatesRef);
    /** CERTS Certificates created 16 at a time, as bench:issuance creates them; resolves when all are Ready. */
    const issueBatch = async (prefix: string) => {
      const ready = new Set<string>();
      const done = new Promise<void>((resolve) => (batch = { prefix, ready, done: resolve }));
      await throughput(CERTS, 16, async (i) => {
        await certificates.create(NS, {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name: `${prefix}${i}`, namespace: NS },
          spec: {
            secretName: `${prefix}${i}-tls`,
            commonName: `${prefix}${i}.${NS}.example`,
            dnsNames: [`${prefix}${i}.${NS}.example`],
            privateKey: { algorithm: 'ECDSA', size: 256 },
            issuerRef: { name: `ca-${i % ISSUERS}` },
          },
        } as Certificate);
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`only ${ready.size}/${CERTS} Ready after 600 s`)), 600_000);
      });
      await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
    };
    if (name.endsWith('-warm')) {
      // A batch first, unmeasured: what follows is what a process that has issued before spends.
      await issueBatch('warm-');
      await new Promise((r) => setTimeout(r, 1_000));
    }

    const requestsBefore = probe
      ? await probeMetrics(probe)
      : new Map(
          Object.entries((await floor!.request<{ requests: Record<string, number> }>('requests')).requests),
        );
    const before = { client: await cpuSeconds(pid), apiserver: await cpuSeconds(cluster.server.pid) };
    const benchBefore = process.cpuUsage();
    // perf of both processes (all their threads) during the measured batch: CPU time, by library and function.
    const perf = PERF_PREFIX
      ? spawn(
          'perf',
          [
            'record',
            '-q',
            '-F',
            '499',
            '-g',
            '-p',
            `${cluster.server.pid},${pid}`,
            '-o',
            `${PERF_PREFIX}-${name}-${roundIndex + 1}.data`,
          ],
          { stdio: 'ignore' },
        )
      : undefined;
    const started = performance.now();
    await issueBatch('cert-');
    const seconds = (performance.now() - started) / 1000;
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((r) => perf.once('exit', r));
    }
    const bench = process.cpuUsage(benchBefore);
    const cpu = {
      client: round((await cpuSeconds(pid)) - before.client, 2),
      apiserver: round((await cpuSeconds(cluster.server.pid)) - before.apiserver, 2),
      bench: round((bench.user + bench.system) / 1e6, 2),
    };
    // Trailing writes (the key Secret's deletion, Events) finish before the requests are counted.
    await new Promise((r) => setTimeout(r, 1_000));
    const requestsPerCert: Record<string, number> = {};
    if (probe) {
      for (const [series, value] of diffMetrics(requestsBefore, await probeMetrics(probe))) {
        if (!series.startsWith('certkit_client_requests_total{') || !value) continue;
        const verb = /verb="([^"]+)"/.exec(series)?.[1] ?? '';
        const resource = (/resource="([^"]*)"/.exec(series)?.[1] ?? '').replace('.cert-manager.io', '');
        const code = /code="([^"]*)"/.exec(series)?.[1] ?? '';
        const key = `${verb} ${resource} ${code}`;
        requestsPerCert[key] = round((requestsPerCert[key] ?? 0) + value / CERTS, 2);
      }
    } else {
      const after = (await floor!.request<{ requests: Record<string, number> }>('requests')).requests;
      for (const [key, value] of Object.entries(after)) {
        const diff = value - (requestsBefore.get(key) ?? 0);
        if (diff) requestsPerCert[key] = round(diff / CERTS, 2);
      }
    }
    let kinds: KindCost[] | undefined;
    if (floor && name === 'floor' && KINDS) {
      kinds = [];
      for (const kind of [
        'event',
        'status-update',
        'conflict',
        'secret-create-delete',
        'certificate-secret-create',
        'request-create-update',
      ]) {
        const c0 = await cpuSeconds(pid);
        const a0 = await cpuSeconds(cluster.server.pid);
        await floor.request('kind', { kind, count: KIND_COUNT, certs: CERTS });
        kinds.push({
          kind,
          count: KIND_COUNT,
          clientMs: round((((await cpuSeconds(pid)) - c0) * 1000) / KIND_COUNT, 3),
          apiserverMs: round((((await cpuSeconds(cluster.server.pid)) - a0) * 1000) / KIND_COUNT, 3),
        });
      }
    }
    await (probe ? probe.exit() : floor!.exit());
    return {
      case: name,
      round: roundIndex,
      seconds: round(seconds, 2),
      cpuSeconds: cpu,
      msPerCert: {
        client: round((cpu.client * 1000) / CERTS, 2),
        apiserver: round((cpu.apiserver * 1000) / CERTS, 2),
        both: round(((cpu.client + cpu.apiserver) * 1000) / CERTS, 2),
      },
      requestsPerCert,
      kinds,
    };
  } finally {
    abort.abort();
    await cluster.stop();
  }
}

const cas: CaPair[] = await Promise.all(
  Array.from({ length: ISSUERS }, async () => {
    const ca = await rootCa({ algorithm: 'ECDSA' } as never);
    return { certPem: ca.certPem, keyPem: encodePrivateKey(ca.key) };
  }),
);
/** The summary of the runs so far, written after every round (a failure later keeps what was measured). */
async function report(): Promise<void> {
  /** Per case, the median of each figure over its rounds. */
  const summary = CASES.map((name) => {
    const rs = runs.filter((r) => r.case === name);
    const requests: Record<string, number> = {};
    for (const key of new Set(rs.flatMap((r) => Object.keys(r.requestsPerCert)))) {
      requests[key] = median(rs.map((r) => r.requestsPerCert[key] ?? 0));
    }
    return {
      case: name,
      rounds: rs.length,
      seconds: median(rs.map((r) => r.seconds)),
      client: median(rs.map((r) => r.msPerCert.client)),
      apiserver: median(rs.map((r) => r.msPerCert.apiserver)),
      both: median(rs.map((r) => r.msPerCert.both)),
      requestsPerCert: requests,
    };
  });
  const byCase = new Map(summary.map((s) => [s.case, s]));
  /** real over floor for the same transport, per process, from the medians. */
  const ratios = (['', '-http'] as const).flatMap((suffix) => {
    const real = byCase.get(`real${suffix}` as CaseName);
    const floor = byCase.get(`floor${suffix}` as CaseName);
    if (!real || !floor) return [];
    return [
      {
        transport: suffix ? 'http' : 'https',
        client: round(real.client / floor.client, 2),
        apiserver: round(real.apiserver / floor.apiserver, 2),
        both: round(real.both / floor.both, 2),
      },
    ];
  });
  const kindRuns = runs.filter((r) => r.kinds);
  const kinds = kindRuns.length
    ? kindRuns[0].kinds!.map((k) => ({
        kind: k.kind,
        apiserverMs: median(kindRuns.map((r) => r.kinds!.find((x) => x.kind === k.kind)!.apiserverMs)),
        clientMs: median(kindRuns.map((r) => r.kinds!.find((x) => x.kind === k.kind)!.clientMs)),
      }))
    : [];

  const results = {
    date: new Date().toISOString(),
    certificates: CERTS,
    repeat: REPEAT,
    cpus: availableParallelism(),
    clientNodeArgs: CLIENT_NODE_ARGS,
    controllerFlags: CONTROLLER_FLAGS,
    summary,
    ratios,
    kinds,
    runs,
  };
  const requestList = (r: Record<string, number>) =>
    Object.entries(r)
      .filter(([, v]) => v >= 0.01)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const table = [
    `| ${CERTS} ECDSA Certificates, medians of ${summary[0]?.rounds ?? 0} round(s) | all Ready after | CPU ms / cert: client | API server | both |`,
    '|---|---|---|---|---|',
    ...summary.map((s) => `| ${s.case} | ${s.seconds} s | ${s.client} | ${s.apiserver} | ${s.both} |`),
    '',
    ...ratios.map(
      (r) => `real / floor (${r.transport}): client ${r.client}, API server ${r.apiserver}, both ${r.both}.`,
    ),
    '',
    ...(kinds.length
      ? [
          `| One kind of write alone (${KIND_COUNT} of each, ${WORKERS} at a time, after the floor's issuances; with its watch event where one reaches the client) | API server CPU ms | client CPU ms |`,
          '|---|---|---|',
          ...kinds.map((k) => `| ${k.kind} | ${k.apiserverMs} | ${k.clientMs} |`),
          '',
        ]
      : []),
    'Requests per Certificate (medians):',
    ...summary.map((s) => `- ${s.case}: ${requestList(s.requestsPerCert)}`),
    '',
    `Runs: ${runs.map((r) => `${r.case} ${r.seconds} s ${r.msPerCert.client}+${r.msPerCert.apiserver} ms`).join('; ')}.`,
    `Client and controller: node ${CLIENT_NODE_ARGS.join(' ') || '(no flags)'}; controller ${CONTROLLER_FLAGS.join(' ')}; ${availableParallelism()} CPUs shared with the bench and other work.`,
  ].join('\n');
  await writeResults(RESULTS_NAME, results, table);
}

const runs: Run[] = [];
for (let r = 0; r < REPEAT; r++) {
  // Alternate the order of the cases from round to round, so that no case always runs first or last.
  const order = r % 2 === 0 ? CASES : [...CASES].reverse();
  for (const name of order) {
    log(`round ${r + 1}/${REPEAT}: ${name}, ${CERTS} Certificates`);
    const result = await run(name, r, cas);
    log(
      `… ${result.seconds} s; CPU ms / cert: client ${result.msPerCert.client}, API server ${result.msPerCert.apiserver}, both ${result.msPerCert.both}`,
    );
    runs.push(result);
  }
  await report();
}
