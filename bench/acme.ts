import { mkdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, SharedInformerFactory, silentLogger } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { ACMEChallengeSolver, Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import { certificatesRef, issuersRef } from '../packages/certificates/src/controllers/refs.ts';
import { encodePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { startBind } from '../packages/testenv/src/bind/bind.ts';
import { freePort } from '../packages/testenv/src/net/free-ports.ts';
import { startPebble } from '../packages/testenv/src/pebble/pebble.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';
import {
  type Cluster,
  createNamespace,
  diffMetrics,
  probeMetrics,
  round,
  startCluster,
  startProbe,
  sumMetric,
} from './controller-lib.ts';
import { flag, throughput, writeResults } from './lib.ts';

/**
 * ACME issuance end to end: N Certificates (ECDSA P-256, one DNS name each) from an ACME Issuer, through a real
 * Pebble (PEBBLE_VA_NOSLEEP=1, its 5 % badNonce rejections left on, every order with fresh authorizations)
 * that resolves the names through a real BIND, by HTTP-01 (Pebble dials the controller's embedded listener) and
 * by DNS-01 (rfc2136 updates to BIND, TSIG-signed, checked against BIND). Then, for the controller's CPU ratio,
 * the same N Certificates from a CA Issuer. Each run gets a fresh `certkit apiserver` process and a fresh
 * `certkit controller` (bench/controller-probe.ts) process; BIND and Pebble live through the whole bench, and
 * each process's CPU over a run is read from /proc/PID/stat.
 *
 * DNS-01 waits: after the self-check sees the TXT record, cert-manager waits a fixed 60 s for resolvers it did
 * not ask to catch up. Here the only resolver is BIND, which the check asks, so the wait defaults to 0
 * (--dns01-propagation-wait-ms, passed as the controller's --dns01-propagation-wait), and a
 * failed self-check is retried after 1 s (--dns01-check-retry-period, cert-manager's default 10 s).
 *
 * Usage: npm run bench:acme [-- --certs=500 --solvers=http01,dns01 --results=NAME --no-ca
 *        --max-concurrent-challenges=N --dns01-check-retry-period=1s --dns01-propagation-wait-ms=0 --cpu-prof]
 * (--cpu-prof: the controller's profiles under bench/results/profiles/acme-<run>/; --no-ca: skip the CA run)
 */

const CERTS = Number(flag('certs') ?? 500);
const SOLVERS = (flag('solvers') ?? 'http01,dns01').split(',').filter(Boolean);
const RESULTS_NAME = flag('results') ?? 'acme';
const CPU_PROF = process.argv.includes('--cpu-prof');
const NO_CA = process.argv.includes('--no-ca');
const MAX_CHALLENGES = flag('max-concurrent-challenges') ?? '60';
const CHECK_RETRY = flag('dns01-check-retry-period') ?? '1s';
const PROPAGATION_WAIT_MS = Number(flag('dns01-propagation-wait-ms') ?? 0);
const TIMEOUT_MS = 900_000;
const NS = 'bench';
const ZONE = 'acme.test';

for (const solver of SOLVERS) {
  if (solver !== 'http01' && solver !== 'dns01') throw new Error(`--solvers: unknown solver "${solver}"`);
}

function log(msg: string) {
  process.stderr.write(`[bench:acme] ${msg}\n`);
}

/** CPU seconds (user + system) a process has used so far, from /proc/PID/stat (utime, stime in 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function isReady(cert: Certificate): boolean {
  const ready = cert.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === cert.metadata.generation;
}

type Kind = 'http01' | 'dns01' | 'ca';

interface Run {
  issuer: Kind;
  seconds: number;
  certsPerSec: number;
  cpuSeconds: { controller: number; pebble?: number; bind?: number; apiserver: number; bench: number };
  cpuMsPerIssuance: { controller: number; pebble?: number; bind?: number; apiserver: number };
  /** Reconciles by controller, per Certificate. */
  reconcilesPerCert: Record<string, number>;
  /** Reconciles that ended in a requeue or an error, by controller, per Certificate. */
  retriesPerCert: Record<string, number>;
  controllerRequestsPerCert: number;
  /** API requests by resource and verb, per Certificate (the largest first). */
  apiRequestsPerCert: Record<string, number>;
  /** Requests to the ACME server (badNonce retries included), by cert-manager's action name, per Certificate. */
  acmeRequestsPerCert: Record<string, number>;
  profile?: string;
}

const bind = await startBind({
  zones: [{ name: ZONE, records: Array.from({ length: CERTS }, (_, i) => `cert-${i} IN A 127.0.0.1`) }],
});
const http01Port = await freePort();
const pebble = await startPebble({ dnsServer: bind.address, httpPort: http01Port, authzReusePercent: 0 });
const tsig = bind.keys.HMACSHA256;

const CONTROLLER_FLAGS = [
  '--kube-api-qps=-1',
  `--acme-http01-listen-address=127.0.0.1:${http01Port}`,
  `--acme-http01-self-check-port=${http01Port}`,
  `--acme-http01-solver-nameservers=${bind.address}`,
  `--max-concurrent-challenges=${MAX_CHALLENGES}`,
  `--dns01-recursive-nameservers=${bind.address}`,
  '--dns01-recursive-nameservers-only=true',
  `--dns01-check-retry-period=${CHECK_RETRY}`,
  `--dns01-propagation-wait=${PROPAGATION_WAIT_MS}ms`,
];

async function createIssuer(cluster: Cluster, kind: Kind): Promise<void> {
  const issuers = cluster.admin.resource<Issuer>(issuersRef);
  const secrets = cluster.admin.resource<Secret & KubeObject>(builtins.secrets);
  if (kind === 'ca') {
    const ca = await rootCa({ algorithm: 'ECDSA' } as never);
    await secrets.create(NS, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'ca' },
      data: {
        'tls.crt': Buffer.from(ca.certPem).toString('base64'),
        'tls.key': Buffer.from(encodePrivateKey(ca.key)).toString('base64'),
      },
    });
    await issuers.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'issuer', namespace: NS },
      spec: { ca: { secretName: 'ca' } },
    } as Issuer);
    return;
  }
  await secrets.create(NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'tsig' },
    data: { secret: Buffer.from(tsig.secret).toString('base64') },
  });
  const solver: ACMEChallengeSolver =
    kind === 'http01'
      ? { http01: { ingress: {} } }
      : {
          dns01: {
            rfc2136: {
              nameserver: bind.address,
              tsigKeyName: tsig.name,
              tsigAlgorithm: tsig.algorithm,
              tsigSecretSecretRef: { name: 'tsig', key: 'secret' },
            },
          },
        };
  await issuers.create(NS, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'issuer', namespace: NS },
    spec: {
      acme: {
        server: pebble.directoryUrl,
        caBundle: Buffer.from(pebble.caBundle).toString('base64'),
        privateKeySecretRef: { name: `account-key-${kind}` },
        solvers: [solver],
      },
    },
  } as Issuer);
}

async function issuerReady(cluster: Cluster): Promise<void> {
  const issuers = cluster.admin.resource<Issuer>(issuersRef);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const issuer = await issuers.get(NS, 'issuer');
    const ready = issuer.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True') return;
    if (Date.now() > deadline) throw new Error(`Issuer not Ready: ${JSON.stringify(issuer.status)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function run(kind: Kind): Promise<Run> {
  log(`${CERTS} Certificates from ${kind === 'ca' ? 'a CA Issuer' : `an ACME Issuer (${kind})`}`);
  const cluster = await startCluster();
  const abort = new AbortController();
  const profileDir = join(import.meta.dirname, 'results', 'profiles', `acme-${kind}`);
  try {
    await createNamespace(cluster, NS);
    await createIssuer(cluster, kind);
    if (CPU_PROF) await mkdir(profileDir, { recursive: true });
    const probe = startProbe(
      cluster.kubeconfigPath,
      CONTROLLER_FLAGS,
      CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    );
    await probe.synced;
    await issuerReady(cluster);

    // The bench's own view of the Certificates: a watch, so that waiting costs the API server little.
    const factory = new SharedInformerFactory({ client: cluster.admin, log: silentLogger });
    const watched = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
    const ready = new Set<string>();
    let allReady: () => void;
    const done = new Promise<void>((resolve) => (allReady = resolve));
    const seen = (cert: Certificate) => {
      if (!isReady(cert) || ready.has(cert.metadata.name!)) return;
      ready.add(cert.metadata.name!);
      if (ready.size === CERTS) allReady();
    };
    watched.addEventHandler({ onAdd: seen, onUpdate: (_old, cert) => seen(cert) });
    factory.start(abort.signal);
    await watched.waitForSync(abort.signal);

    const ctlBefore = await probeMetrics(probe);
    const before = {
      controller: await cpuSeconds(probe.pid),
      pebble: await cpuSeconds(pebble.pid),
      bind: await cpuSeconds(bind.pid),
      apiserver: await cpuSeconds(cluster.server.pid),
      bench: process.cpuUsage(),
    };
    const started = performance.now();
    const progress = setInterval(
      () =>
        log(`… ${ready.size}/${CERTS} Ready after ${((performance.now() - started) / 1000).toFixed(0)} s`),
      10_000,
    );
    const certificates = cluster.admin.resource<Certificate>(certificatesRef);
    await throughput(CERTS, 16, async (i) => {
      await certificates.create(NS, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `cert-${i}`, namespace: NS },
        spec: {
          secretName: `cert-${i}-tls`,
          dnsNames: [`cert-${i}.${ZONE}`],
          privateKey: { algorithm: 'ECDSA', size: 256 },
          issuerRef: { name: 'issuer' },
        },
      } as Certificate);
    });
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`only ${ready.size}/${CERTS} Ready after ${TIMEOUT_MS / 1000} s`)),
        TIMEOUT_MS,
      ).unref(),
    );
    try {
      await Promise.race([done, timeout]);
    } finally {
      clearInterval(progress);
    }
    const seconds = (performance.now() - started) / 1000;
    const benchCpu = process.cpuUsage(before.bench);
    const used = {
      controller: round((await cpuSeconds(probe.pid)) - before.controller, 2),
      pebble: round((await cpuSeconds(pebble.pid)) - before.pebble, 2),
      bind: round((await cpuSeconds(bind.pid)) - before.bind, 2),
      apiserver: round((await cpuSeconds(cluster.server.pid)) - before.apiserver, 2),
      bench: round((benchCpu.user + benchCpu.system) / 1e6, 2),
    };
    const ctl = diffMetrics(ctlBefore, await probeMetrics(probe));
    await probe.exit();

    const acmeRequests: Record<string, number> = {};
    for (const [series, value] of ctl) {
      if (!series.startsWith('certmanager_http_acme_client_request_count{') || !value) continue;
      const action = /action="([^"]+)"/.exec(series)?.[1] ?? '';
      acmeRequests[action] = round((acmeRequests[action] ?? 0) + value / CERTS, 2);
    }
    const apiRequests: Record<string, number> = {};
    for (const [series, value] of ctl) {
      if (!series.startsWith('certkit_client_requests_total{') || !value) continue;
      const resource = /resource="([^"]*)"/.exec(series)?.[1] ?? '';
      const subresource = /subresource="([^"]*)"/.exec(series)?.[1];
      const verb = /verb="([^"]*)"/.exec(series)?.[1] ?? '';
      const key = `${verb} ${resource}${subresource ? `/${subresource}` : ''}`;
      apiRequests[key] = round((apiRequests[key] ?? 0) + value / CERTS, 2);
    }
    const reconciles: Record<string, number> = {};
    const retries: Record<string, number> = {};
    for (const [series, value] of ctl) {
      if (!series.startsWith('controller_runtime_reconcile_total{') || !value) continue;
      const result = /result="([^"]+)"/.exec(series)?.[1] ?? '';
      const controller = /controller="([^"]+)"/.exec(series)?.[1] ?? '';
      reconciles[controller] = round((reconciles[controller] ?? 0) + value / CERTS, 2);
      if (result === 'requeue' || result === 'requeue_after' || result === 'error')
        retries[`${controller} ${result}`] = round(value / CERTS, 2);
    }
    const perIssuance = (cpu: number) => round((cpu * 1000) / CERTS, 1);
    const acme = kind !== 'ca';
    const r: Run = {
      issuer: kind,
      seconds: round(seconds, 2),
      certsPerSec: round(CERTS / seconds, 1),
      cpuSeconds: {
        controller: used.controller,
        ...(acme ? { pebble: used.pebble } : {}),
        ...(kind === 'dns01' ? { bind: used.bind } : {}),
        apiserver: used.apiserver,
        bench: used.bench,
      },
      cpuMsPerIssuance: {
        controller: perIssuance(used.controller),
        ...(acme ? { pebble: perIssuance(used.pebble) } : {}),
        ...(kind === 'dns01' ? { bind: perIssuance(used.bind) } : {}),
        apiserver: perIssuance(used.apiserver),
      },
      reconcilesPerCert: reconciles,
      retriesPerCert: retries,
      controllerRequestsPerCert: round(sumMetric(ctl, 'certkit_client_requests_total') / CERTS, 2),
      apiRequestsPerCert: Object.fromEntries(Object.entries(apiRequests).sort((x, y) => y[1] - x[1])),
      acmeRequestsPerCert: acmeRequests,
      profile: CPU_PROF ? profileDir : undefined,
    };
    log(`… ${r.seconds} s, controller ${r.cpuMsPerIssuance.controller} CPU ms per issuance`);
    return r;
  } finally {
    abort.abort();
    await cluster.stop();
  }
}

const runs: Run[] = [];
try {
  for (const solver of SOLVERS) runs.push(await run(solver as Kind));
  if (!NO_CA) runs.push(await run('ca'));
} finally {
  await pebble.stop();
  await bind.stop();
}

const ca = runs.find((r) => r.issuer === 'ca');
const ratio = (r: Run) =>
  ca && r.issuer !== 'ca'
    ? round(r.cpuMsPerIssuance.controller / ca.cpuMsPerIssuance.controller, 2)
    : undefined;
const results = {
  date: new Date().toISOString(),
  certificates: CERTS,
  cpus: availableParallelism(),
  controllerFlags: CONTROLLER_FLAGS,
  dns01PropagationWaitMs: PROPAGATION_WAIT_MS,
  pebble: { env: { PEBBLE_VA_NOSLEEP: '1', PEBBLE_AUTHZREUSE: '0' }, nonceReject: 'default (5 %)' },
  runs: runs.map((r) => ({ ...r, controllerCpuRatioToCa: ratio(r) })),
};
const name: Record<Kind, string> = { http01: 'ACME HTTP-01', dns01: 'ACME DNS-01', ca: 'CA' };
const table = [
  `| ${CERTS} ECDSA Certificates | all Ready after | goal < 60 s | CPU ms / issuance: controller | Pebble | BIND | API server | controller CPU vs CA (goal ≤ 2×) |`,
  '|---|---|---|---|---|---|---|---|',
  ...runs.map(
    (r) =>
      `| ${name[r.issuer]} | ${r.seconds} s | ${r.issuer === 'ca' ? '' : r.seconds < 60 ? '✓' : '✗'} | ${r.cpuMsPerIssuance.controller} | ${r.cpuMsPerIssuance.pebble ?? ''} | ${r.cpuMsPerIssuance.bind ?? ''} | ${r.cpuMsPerIssuance.apiserver} | ${ratio(r) === undefined ? '' : `${ratio(r)}× ${ratio(r)! <= 2 ? '✓' : '✗'}`} |`,
  ),
  '',
  `${availableParallelism()} CPUs shared by BIND, Pebble, the API server, the controller and the bench. One Issuer per run, one DNS name per Certificate; a fresh API server and controller per run.`,
  `Pebble: PEBBLE_VA_NOSLEEP=1, PEBBLE_AUTHZREUSE=0 (every order solves its challenge), badNonce rejection at its default 5 %; its VA resolves through BIND and dials the controller's embedded HTTP-01 listener.`,
  `Controller: certkit controller ${CONTROLLER_FLAGS.filter((f) => !f.includes('127.0.0.1')).join(' ')} (plus the HTTP-01 listener, self-check port and nameservers on loopback).`,
  `DNS-01 waits: a failed self-check is retried after ${CHECK_RETRY} (cert-manager's default 10 s), and after a passing check the Challenge is accepted after ${PROPAGATION_WAIT_MS} ms instead of cert-manager's fixed 60 s. That wait lets resolvers the check did not ask catch up; here BIND is the only resolver and the check asks it, so the wait has nothing to wait for — and with it no run of ${CERTS} names could end in 60 s (${MAX_CHALLENGES} Challenges at once, each held 60 s, take at least ${Math.ceil(CERTS / Number(MAX_CHALLENGES))} × 60 s).`,
  `HTTP-01 self-check: cert-manager's five GETs per Challenge, each compared with the key; since the controller's own listener answers them, they follow one another at once instead of 2 s apart (ADR 1011). At the upstream pace a Challenge would hold one of the ${MAX_CHALLENGES} processing slots (--max-concurrent-challenges) for 8 s, a floor of ${Math.ceil(CERTS / Number(MAX_CHALLENGES))} × 8 s = ${Math.ceil(CERTS / Number(MAX_CHALLENGES)) * 8} s for ${CERTS} names.`,
  `ACME requests per Certificate: ${runs
    .filter((r) => r.issuer !== 'ca')
    .map(
      (r) =>
        `${name[r.issuer]}: ${round(
          Object.values(r.acmeRequestsPerCert).reduce((a, b) => a + b, 0),
          2,
        )} (${Object.entries(r.acmeRequestsPerCert)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`,
    )
    .join(
      '; ',
    )}; API requests per Certificate: ${runs.map((r) => `${name[r.issuer]} ${r.controllerRequestsPerCert}`).join(', ')}.`,
  `Retries per Certificate: ${runs
    .map(
      (r) =>
        `${name[r.issuer]}: ${
          Object.entries(r.retriesPerCert)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || 'none'
        }`,
    )
    .join('; ')}.`,
].join('\n');
await writeResults(RESULTS_NAME, results, table);
