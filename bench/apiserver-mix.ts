import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { formatTime, type KubeObject } from '@certkit/apimachinery';
import { builtins, type KubeClient, type WatchEvent } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Labels } from '../packages/certificates/src/api/constants.ts';
import type {
  Certificate,
  CertificateRequest,
  ConditionStatus,
} from '../packages/certificates/src/api/types.ts';
import { certificateRequestsRef, certificatesRef } from '../packages/certificates/src/controllers/refs.ts';
import { encodePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { issue, rootCa } from '../packages/testenv/src/pki/ca.ts';
import { LABELLED_SELECTOR, UNLABELLED_SELECTOR } from '../packages/certificates/src/secrets/selectors.ts';
import { type Cluster, createNamespace, round, startCluster } from './controller-lib.ts';
import { flag, listFlag, median, throughput, writeResults } from './lib.ts';

/**
 * The API server's CPU per request under the request mix of one issuance (bench/issuance.ts), replayed
 * without the controller so that only the server's work is measured: per Certificate its create, 6 Event
 * creates, 3 Certificate status updates, a CertificateRequest create (with a real RSA CSR, verified at
 * admission) and 2 status updates, 2 Secret creates, a Secret delete and a GET for every fifth, with the 5
 * watches an issuance keeps open (the controller's informers for Certificates, CertificateRequests, labelled
 * Secrets in full and unlabelled Secrets as metadata, plus the bench's own Certificate watch), 10
 * Certificates at a time. CPU is the server process's utime + stime from /proc, over the measured
 * Certificates and the watch events they cause.
 *
 * With --baseline=DIR (another checkout, e.g. a copy of this one before a change; its node_modules/@certkit
 * must point into its own packages) the two servers are run interleaved, baseline then new, for --rounds
 * rounds, and the medians and per-round ratios are reported. --candidate=DIR runs "new" from another
 * checkout as well (a snapshot, so that edits to this tree during a long run do not leak into it).
 *
 * Usage: npm run bench:apiserver-mix [-- --certs=500 --warmup=50 --rounds=5 --concurrency=10 --baseline=DIR
 *        --candidate=DIR --cpu-prof=DIR --perf=FILE-PREFIX --apiserver-node-args=a,b --baseline-node-args=a,b
 *        --results=NAME]
 * (--baseline-node-args: the baseline's Node flags instead of --apiserver-node-args', so that two sets of flags
 * can be compared on one checkout: --baseline=. --baseline-node-args= --apiserver-node-args=--some-flag)
 */

const CERTS = Number(flag('certs') ?? 500);
const ROUNDS = Number(flag('rounds') ?? 5);
const CONCURRENCY = Number(flag('concurrency') ?? 10);
/** Certificates issued before measuring (JIT, connections, SQLite's page cache); not measured. */
const WARMUP_CERTS = Number(flag('warmup') ?? 50);
const BASELINE = flag('baseline');
const CANDIDATE = flag('candidate');
const CPU_PROF_DIR = flag('cpu-prof');
const NODE_ARGS = listFlag('apiserver-node-args');
const BASELINE_NODE_ARGS =
  flag('baseline-node-args') === undefined ? NODE_ARGS : listFlag('baseline-node-args');
/** perf record of the server over the measured part alone (kernel time included), one file per run. */
const PERF_PREFIX = flag('perf');
/** --results=NAME: write bench/results/NAME.{json,md}, so that an A/B of one change keeps the shared figure. */
const RESULTS_NAME = flag('results') ?? 'apiserver-mix';
const NS = 'bench';

function log(msg: string) {
  process.stderr.write(`[bench:apiserver-mix] ${msg}\n`);
}

/** CPU seconds (user + system) of a process, or of its main thread alone, from /proc. */
async function cpuSeconds(pid: number, mainThreadOnly = false): Promise<number> {
  const stat = await readFile(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Real PEM material, so that the CertificateRequest's admission verifies a real CSR as in an issuance. */
interface Material {
  csrBase64: string;
  certBase64: string;
  caBase64: string;
  keyBase64: string;
}

async function material(): Promise<Material> {
  const ca = await rootCa();
  const leaf = await issue({
    spec: { commonName: 'cert-0.bench.example', dnsNames: ['cert-0.bench.example'] },
    keySpec: { algorithm: 'RSA', size: 2048 },
    issuer: { certPem: ca.certPem, key: ca.key },
  });
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return {
    csrBase64: b64(leaf.csrPem),
    certBase64: b64(leaf.certPem + ca.certPem),
    caBase64: b64(ca.certPem),
    keyBase64: b64(encodePrivateKey(leaf.key)),
  };
}

const now = () => formatTime(new Date());

/** A condition as the controller writes it; CertificateRequest conditions have no observedGeneration. */
function condition(type: string, status: ConditionStatus, reason: string, message: string) {
  return { type, status, reason, message, lastTransitionTime: now() };
}

function certificateCondition(type: string, status: ConditionStatus, reason: string, message: string) {
  return { ...condition(type, status, reason, message), observedGeneration: 1 };
}

/** One Certificate's writes, in the order the controller makes them. Returns the number of requests made. */
async function issueOne(admin: KubeClient, m: Material, i: number, prefix: string): Promise<number> {
  const certificates = admin.resource<Certificate>(certificatesRef);
  const requests = admin.resource<CertificateRequest>(certificateRequestsRef);
  const secrets = admin.resource<Secret & KubeObject>(builtins.secrets);
  const events = admin.resource(builtins.events);
  const name = `${prefix}-${i}`;
  let made = 0;
  const event = async (
    kind: string,
    apiVersion: string,
    obj: KubeObject,
    reason: string,
    message: string,
  ) => {
    made++;
    await events.create(NS, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${obj.metadata!.name}.${(made * 7919 + i).toString(16)}`, namespace: NS },
      involvedObject: {
        kind,
        namespace: NS,
        name: obj.metadata!.name,
        uid: obj.metadata!.uid,
        apiVersion,
        resourceVersion: obj.metadata!.resourceVersion,
      },
      reason,
      message,
      source: { component: 'cert-manager-certificates-issuing' },
      firstTimestamp: now(),
      lastTimestamp: now(),
      count: 1,
      type: 'Normal',
      eventTime: null,
      reportingComponent: 'cert-manager-certificates-issuing',
      reportingInstance: '',
    } as KubeObject);
  };

  let cert = await certificates.create(NS, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: NS },
    spec: {
      secretName: `${name}-tls`,
      commonName: `${name}.${NS}.example`,
      dnsNames: [`${name}.${NS}.example`],
      privateKey: { algorithm: 'RSA', size: 2048 },
      issuerRef: { name: `ca-${i % 10}` },
    },
  } as Certificate);
  made++;
  await event(
    'Certificate',
    'cert-manager.io/v1',
    cert,
    'Issuing',
    'Issuing certificate as Secret does not exist',
  );

  // The next private key, in a temporary Secret.
  const keySecret = await secrets.create(NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      generateName: `${name}-`,
      namespace: NS,
      labels: { [Labels.partOfCertManagerController]: 'true', 'cert-manager.io/next-private-key': 'true' },
      ownerReferences: [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          name,
          uid: cert.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { 'tls.key': m.keyBase64, 'tls.crt': m.certBase64 },
  });
  made++;
  cert.status = {
    conditions: [
      certificateCondition('Issuing', 'True', 'DoesNotExist', 'Issuing certificate as Secret does not exist'),
    ],
    nextPrivateKeySecretName: keySecret.metadata!.name,
  };
  cert = await certificates.update(cert, { subresource: 'status' });
  made++;
  await event(
    'Certificate',
    'cert-manager.io/v1',
    cert,
    'Generated',
    'Stored new private key in temporary Secret resource',
  );

  let request = await requests.create(NS, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name: `${name}-1`,
      namespace: NS,
      annotations: {
        'cert-manager.io/certificate-name': name,
        'cert-manager.io/certificate-revision': '1',
        'cert-manager.io/private-key-secret-name': keySecret.metadata!.name!,
      },
      ownerReferences: [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          name,
          uid: cert.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      request: m.csrBase64,
      issuerRef: { name: `ca-${i % 10}` },
      usages: ['digital signature', 'key encipherment'],
      duration: '2160h0m0s',
    },
  } as CertificateRequest);
  made++;
  await event(
    'Certificate',
    'cert-manager.io/v1',
    cert,
    'Requested',
    `Created new CertificateRequest resource "${name}-1"`,
  );

  request.status = {
    conditions: [
      condition(
        'Approved',
        'True',
        'cert-manager.io',
        'Certificate request has been approved by cert-manager.io',
      ),
    ],
  };
  request = await requests.update(request, { subresource: 'status' });
  made++;
  await event(
    'CertificateRequest',
    'cert-manager.io/v1',
    request,
    'cert-manager.io',
    'Certificate request has been approved by cert-manager.io',
  );
  request.status = {
    ...request.status,
    conditions: [
      ...request.status!.conditions!,
      condition('Ready', 'True', 'Issued', 'Certificate fetched from issuer successfully'),
    ],
    certificate: m.certBase64,
    ca: m.caBase64,
  };
  request = await requests.update(request, { subresource: 'status' });
  made++;
  await event(
    'CertificateRequest',
    'cert-manager.io/v1',
    request,
    'CertificateIssued',
    'Certificate fetched from issuer successfully',
  );

  await secrets.create(NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: `${name}-tls`,
      namespace: NS,
      labels: { [Labels.partOfCertManagerController]: 'true' },
      annotations: {
        'cert-manager.io/alt-names': `${name}.${NS}.example`,
        'cert-manager.io/certificate-name': name,
        'cert-manager.io/common-name': `${name}.${NS}.example`,
        'cert-manager.io/issuer-group': '',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-name': `ca-${i % 10}`,
      },
    },
    data: { 'tls.crt': m.certBase64, 'tls.key': m.keyBase64, 'ca.crt': m.caBase64 },
  });
  made++;
  cert.status = {
    conditions: [
      certificateCondition('Ready', 'True', 'Ready', 'Certificate is up to date and has not expired'),
    ],
    notBefore: now(),
    notAfter: formatTime(new Date(Date.now() + 90 * 86_400_000)),
    renewalTime: formatTime(new Date(Date.now() + 60 * 86_400_000)),
    revision: 1,
    nextPrivateKeySecretName: keySecret.metadata!.name,
  };
  cert = await certificates.update(cert, { subresource: 'status' });
  made++;
  await event(
    'Certificate',
    'cert-manager.io/v1',
    cert,
    'Issuing',
    'The certificate has been successfully issued',
  );

  await secrets.delete(NS, keySecret.metadata!.name!);
  made++;
  delete cert.status!.nextPrivateKeySecretName;
  cert = await certificates.update(cert, { subresource: 'status' });
  made++;
  if (i % 5 === 0) {
    await certificates.get(NS, name);
    made++;
  }
  return made;
}

/** The watches an issuance keeps open; returns the number of events each has seen so far. */
async function openWatches(cluster: Cluster, signal: AbortSignal): Promise<() => number> {
  const { admin } = cluster;
  const streams = await Promise.all([
    admin.resource(certificatesRef).watch(NS, { signal }),
    admin.resource(certificatesRef).watch(NS, { signal }),
    admin.resource(certificateRequestsRef).watch(NS, { signal }),
    admin.resource(builtins.secrets).watch(NS, { labelSelector: LABELLED_SELECTOR, signal }),
    admin.resource(builtins.secrets, 'metadata').watch(NS, { labelSelector: UNLABELLED_SELECTOR, signal }),
  ]);
  let seen = 0;
  for (const stream of streams) {
    void (async () => {
      try {
        for await (const _ of stream as AsyncIterable<WatchEvent>) seen++;
      } catch (err) {
        if (!signal.aborted) log(`watch failed: ${(err as Error).message}`);
      }
    })();
  }
  return () => seen;
}

/** Waits until the watchers have had nothing new for a while: the server's fan-out is done. */
async function settle(seen: () => number): Promise<void> {
  let last = -1;
  while (seen() !== last) {
    last = seen();
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Sample {
  variant: string;
  round: number;
  requests: number;
  watchEvents: number;
  seconds: number;
  cpuSeconds: number;
  mainThreadCpuSeconds: number;
  cpuMsPerRequest: number;
}

async function runOnce(
  variant: string,
  root: string | undefined,
  roundNo: number,
  m: Material,
): Promise<Sample> {
  const cluster = await startCluster({
    root,
    nodeArgs: [
      ...(variant === 'baseline' ? BASELINE_NODE_ARGS : NODE_ARGS),
      ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}/${variant}-${roundNo}`] : []),
      ...(PERF_PREFIX ? ['--perf-basic-prof', '--interpreted-frames-native-stack'] : []),
    ],
  });
  const abort = new AbortController();
  try {
    await createNamespace(cluster, NS);
    const seen = await openWatches(cluster, abort.signal);
    await throughput(WARMUP_CERTS, CONCURRENCY, (i) => issueOne(cluster.admin, m, i, 'warm').then(() => {}));
    await settle(seen);
    const pid = cluster.server.pid;
    const before = { all: await cpuSeconds(pid), main: await cpuSeconds(pid, true), events: seen() };
    const perf = PERF_PREFIX
      ? spawn(
          'perf',
          [
            'record',
            '-q',
            '-F',
            '1999',
            '-g',
            '-p',
            String(pid),
            '-o',
            `${PERF_PREFIX}.${variant}-${roundNo}`,
          ],
          {
            stdio: 'ignore',
          },
        )
      : undefined;
    let requests = 0;
    const started = performance.now();
    await throughput(CERTS, CONCURRENCY, async (i) => {
      const made = await issueOne(cluster.admin, m, i, 'cert');
      requests += made;
    });
    const seconds = (performance.now() - started) / 1000;
    await settle(seen);
    const cpu = (await cpuSeconds(pid)) - before.all;
    const main = (await cpuSeconds(pid, true)) - before.main;
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((r) => perf.once('exit', r));
    }
    return {
      variant,
      round: roundNo,
      requests,
      watchEvents: seen() - before.events,
      seconds: round(seconds, 2),
      cpuSeconds: round(cpu, 2),
      mainThreadCpuSeconds: round(main, 2),
      cpuMsPerRequest: round((cpu * 1000) / requests, 3),
    };
  } finally {
    abort.abort();
    await cluster.stop();
  }
}

const variants: { name: string; root: string | undefined }[] = [
  ...(BASELINE ? [{ name: 'baseline', root: BASELINE }] : []),
  { name: 'new', root: CANDIDATE },
];
log(
  `${CERTS} Certificates per run, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${variants.map((v) => v.name).join(', ')}`,
);
const m = await material();
const samples: Sample[] = [];
for (let r = 1; r <= ROUNDS; r++) {
  for (const v of variants) {
    const s = await runOnce(v.name, v.root, r, m);
    log(
      `round ${r} ${v.name}: ${s.requests} requests, ${s.watchEvents} watch events in ${s.seconds} s; server CPU ${s.cpuSeconds} s (main thread ${s.mainThreadCpuSeconds} s), ${s.cpuMsPerRequest} ms/request`,
    );
    samples.push(s);
  }
}

const summary = variants.map((v) => {
  const mine = samples.filter((s) => s.variant === v.name);
  return {
    variant: v.name,
    root: v.root ?? '.',
    cpuMsPerRequest: median(mine.map((s) => s.cpuMsPerRequest)),
    cpuSeconds: median(mine.map((s) => s.cpuSeconds)),
    mainThreadCpuSeconds: median(mine.map((s) => s.mainThreadCpuSeconds)),
    seconds: median(mine.map((s) => s.seconds)),
    requests: median(mine.map((s) => s.requests)),
    watchEvents: median(mine.map((s) => s.watchEvents)),
  };
});
// Each round's pair ran back to back, so its ratio is less exposed to the machine's drift than the medians.
const ratios = BASELINE
  ? Array.from({ length: ROUNDS }, (_, r) => {
      const a = samples.find((s) => s.variant === 'baseline' && s.round === r + 1)!;
      const b = samples.find((s) => s.variant === 'new' && s.round === r + 1)!;
      return round(b.cpuMsPerRequest / a.cpuMsPerRequest, 3);
    })
  : [];
const results = {
  date: new Date().toISOString(),
  certificates: CERTS,
  concurrency: CONCURRENCY,
  rounds: ROUNDS,
  summary,
  ratioNewToBaseline: BASELINE ? { perRound: ratios, median: median(ratios) } : undefined,
  samples,
};
const table = [
  `| ${CERTS} Certificates' requests, concurrency ${CONCURRENCY}, 5 watches (median of ${ROUNDS}) | server CPU ms / request | server CPU s (main thread) | requests | watch events | wall s |`,
  '|---|---|---|---|---|---|',
  ...summary.map(
    (s) =>
      `| ${s.variant} | ${s.cpuMsPerRequest} | ${s.cpuSeconds} (${s.mainThreadCpuSeconds}) | ${s.requests} | ${s.watchEvents} | ${s.seconds} |`,
  ),
  '',
  BASELINE
    ? `new / baseline CPU per request, per round: ${ratios.join(', ')}; median ${median(ratios)}`
    : 'No --baseline given: this checkout only.',
].join('\n');
await writeResults(RESULTS_NAME, results, table);
