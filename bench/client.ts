import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, loadKubeconfig, RateLimiter } from '@certkit/runtime';
import { RestResourceClient } from '../packages/runtime/src/client/resource-client.ts';
import { type HttpRequestSpec, Transport } from '../packages/runtime/src/client/transport.ts';
import { BaselineTransport } from './client-baseline.ts';
import { Client, flag, median, startServerProcess, waitReadyz, writeResults } from './lib.ts';

/**
 * The REST client's CPU per unary request against `certkit apiserver` (its own process), for the controller's
 * kind of traffic: create an Event (~600 B), update a ConfigMap (~3 KB), create a Secret (~4 KB), get a Secret,
 * delete the Secret, from `--concurrency` workers over HTTPS keep-alive. Compares the transport before the
 * HTTP/1.1 pool (bench/client-baseline.ts, all node:http) with the current one, interleaved round by round
 * (ABBA, as the machine is shared and noisy), through the same RestResourceClient. CPU is the bench process's
 * (process.cpuUsage; the main thread's alone too), so it also counts what both variants share (JSON,
 * RestResourceClient, the bench): a third variant answers the same calls without HTTP, and that floor taken
 * off both leaves the transports' own CPU.
 * Usage: npm run bench:client [-- --rounds=20 --ops=200 --concurrency=8]
 */

const ROUNDS = Number(flag('rounds') ?? 20);
/** Operations (of five requests each) per round and variant. */
const OPS = Number(flag('ops') ?? 200);
const CONCURRENCY = Number(flag('concurrency') ?? 8);
const REQUESTS_PER_OP = 5;
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

// Every round starts from a collected heap, so no round pays for the garbage of the one before (a major GC
// landing in one round and not the next is most of the noise otherwise). `npm run` cannot pass --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const NS = 'bench';

const event = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: NS },
  involvedObject: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    name: 'example-com',
    namespace: NS,
    uid: '3c5b2a66-1f0e-4a51-9a8e-2b7f0c1d4e5f',
    resourceVersion: '12345',
  },
  reason: 'Issuing',
  message:
    'Issuing certificate as Secret does not exist; the certificate request "example-com-1" was created',
  source: { component: 'cert-manager-certificates-issuing' },
  firstTimestamp: '2025-01-01T00:00:00Z',
  lastTimestamp: '2025-01-01T00:00:00Z',
  count: 1,
  type: 'Normal',
  reportingComponent: 'cert-manager-certificates-issuing',
  reportingInstance: 'certkit-0',
});

const pem = (label: string, bytes: number) =>
  `-----BEGIN ${label}-----\n${(
    Buffer.alloc(bytes, 7)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END ${label}-----\n`;

// Payloads are made once: building them per request would add the bench's own work to both variants.
const TLS_DATA = {
  'tls.crt': Buffer.from(pem('CERTIFICATE', 1300)).toString('base64'),
  'tls.key': Buffer.from(pem('PRIVATE KEY', 240)).toString('base64'),
  'ca.crt': Buffer.from(pem('CERTIFICATE', 500)).toString('base64'),
};
const CERTIFICATE_PEM = pem('CERTIFICATE', 2000);

const secret = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name,
    namespace: NS,
    labels: { 'controller.cert-manager.io/fao': 'true' },
    annotations: { 'cert-manager.io/certificate-name': 'example-com', 'cert-manager.io/issuer-name': 'ca' },
  },
  type: 'kubernetes.io/tls',
  data: TLS_DATA,
});

/** Stands in for a Certificate's status: conditions and a few KB of text. */
const configMapData = (i: number) => ({
  conditions: `[{"type":"Ready","status":"True","reason":"Ready","message":"Certificate is up to date (${i})"}]`,
  certificate: CERTIFICATE_PEM,
});

/**
 * Everything a request costs the bench but HTTP: the same RestResourceClient and JSON encoding and decoding,
 * answered at once with a recorded answer. Subtracted from both variants, it leaves the transport's own CPU.
 */
class NoHttpTransport {
  readonly #answers = new Map<string, string>();

  record(method: string, resource: string, answer: unknown): void {
    this.#answers.set(`${method} ${resource}`, JSON.stringify(answer));
  }

  async json<T>(spec: HttpRequestSpec): Promise<T> {
    if (spec.body !== undefined) JSON.stringify(spec.body);
    return JSON.parse(this.#answers.get(`${spec.method} ${spec.target?.resource}`)!) as T;
  }

  close(): void {}
}

interface Variant {
  name: string;
  transport: Transport;
  events: RestResourceClient;
  configMaps: RestResourceClient;
  secrets: RestResourceClient;
  /** Each worker's ConfigMap as last written. */
  owned: KubeObject[];
  /** µs per request, one entry per measured round: process CPU, main-thread CPU, wall clock. */
  cpuUs: number[];
  mainThreadUs: number[];
  wallUs: number[];
}

const server = await startServerProcess();
const http = new Client(server, 2);
let serial = 0;
try {
  await waitReadyz(http);
  const config = await loadKubeconfig({ path: join(server.dataDir, 'kubeconfig') });
  const limiter = () => new RateLimiter({ qps: -1 });

  const variant = (name: string, transport: Transport): Variant => ({
    name,
    transport,
    events: new RestResourceClient(transport, builtins.events),
    configMaps: new RestResourceClient(transport, builtins.configMaps),
    secrets: new RestResourceClient(transport, builtins.secrets),
    owned: [],
    cpuUs: [],
    mainThreadUs: [],
    wallUs: [],
  });
  // The baseline has the same interface; RestResourceClient only calls json() and stream().
  const before = variant(
    'node:http (before)',
    new BaselineTransport(config, { limiter: limiter() }) as unknown as Transport,
  );
  const after = variant('HTTP/1.1 pool (after)', new Transport(config, { limiter: limiter() }));
  const noHttp = new NoHttpTransport();
  const floor = variant('no HTTP (floor)', noHttp as unknown as Transport);
  const variants = [before, after];
  await new RestResourceClient(before.transport, builtins.namespaces).create(undefined, {
    metadata: { name: NS },
  });

  await before.secrets.create(NS, secret('fixed'));
  for (const v of variants) {
    for (let w = 0; w < CONCURRENCY; w++) {
      v.owned.push(
        await v.configMaps.create(NS, {
          metadata: { name: `cm-${variants.indexOf(v)}-${w}`, namespace: NS },
          data: configMapData(0),
        }),
      );
    }
  }

  floor.owned = [...after.owned];
  noHttp.record('POST', 'events', await after.events.create(NS, event('e-recorded')));
  noHttp.record('PUT', 'configmaps', after.owned[0]);
  noHttp.record('POST', 'secrets', await after.secrets.create(NS, secret('s-recorded')));
  noHttp.record('GET', 'secrets', await after.secrets.get(NS, 'fixed'));
  noHttp.record(
    'DELETE',
    'secrets',
    await after.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${NS}/secrets/s-recorded` }),
  );

  const op = async (v: Variant, worker: number) => {
    const n = serial++;
    await v.events.create(NS, event(`e-${n}`));
    v.owned[worker] = await v.configMaps.update({ ...v.owned[worker], data: configMapData(n) });
    await v.secrets.create(NS, secret(`s-${n}`));
    await v.secrets.get(NS, 'fixed');
    await v.secrets.delete(NS, `s-${n}`);
  };

  const runRound = async (v: Variant, ops: number) => {
    let next = 0;
    gc();
    const cpu = process.cpuUsage();
    const thread = process.threadCpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        while (next++ < ops) await op(v, worker);
      }),
    );
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const usedByThread = process.threadCpuUsage(thread);
    const requests = ops * REQUESTS_PER_OP;
    return {
      cpuUs: (used.user + used.system) / requests,
      mainThreadUs: (usedByThread.user + usedByThread.system) / requests,
      wallUs: (wall * 1000) / requests,
    };
  };

  // Warm-up: JIT, connections, the server's caches.
  for (let i = 0; i < 2; i++) for (const v of [...variants, floor]) await runRound(v, OPS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of [...(r % 2 === 0 ? variants : [...variants].reverse()), floor]) {
      const result = await runRound(v, OPS);
      v.cpuUs.push(result.cpuUs);
      v.mainThreadUs.push(result.mainThreadUs);
      v.wallUs.push(result.wallUs);
      process.stderr.write(`round ${r + 1} ${v.name}: ${round(result.cpuUs)} µs CPU/request\n`);
    }
  }

  for (const v of variants) v.transport.close();

  type Measure = 'cpuUs' | 'mainThreadUs' | 'wallUs';
  const stats = (v: Variant, m: Measure) => ({
    median: round(median(v[m])),
    min: round(Math.min(...v[m])),
    rounds: v[m].map((x) => round(x)),
  });
  /**
   * After / before, round by round (the two ran back to back), and their median; `transport` takes the
   * no-HTTP floor of the same round off both first, which leaves what the transports themselves cost.
   */
  const ratios = (m: Measure) => {
    const whole = before[m].map((b, i) => after[m][i] / b);
    const transport = before[m].map((b, i) => (after[m][i] - floor[m][i]) / (b - floor[m][i]));
    return {
      median: round(median(whole), 3),
      transportMedian: round(median(transport), 3),
      rounds: whole.map((x) => round(x, 3)),
    };
  };
  const cpu = ratios('cpuUs');
  const mainThread = ratios('mainThreadUs');
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: availableParallelism(),
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    requestsPerRound: OPS * REQUESTS_PER_OP,
    mix: 'create Event ~0.6 KB, update ConfigMap ~3 KB, create Secret ~4 KB, get Secret, delete Secret',
    usPerRequest: Object.fromEntries(
      [...variants, floor].map((v) => [
        v.name,
        { processCpu: stats(v, 'cpuUs'), mainThreadCpu: stats(v, 'mainThreadUs'), wall: stats(v, 'wallUs') },
      ]),
    ),
    afterOverBefore: { processCpu: cpu, mainThreadCpu: mainThread },
  };
  const percentLess = (ratio: number) => `${round((1 - ratio) * 100)}% less`;
  const table = [
    `| ${CONCURRENCY} workers, ${OPS * REQUESTS_PER_OP} requests per round, ${ROUNDS} rounds ABBA | process CPU µs / request | main thread CPU µs / request | wall µs / request |`,
    '|---|---|---|---|',
    ...[...variants, floor].map(
      (v) =>
        `| ${v.name} | ${round(median(v.cpuUs))} | ${round(median(v.mainThreadUs))} | ${round(median(v.wallUs))} |`,
    ),
    `| after / before | ${cpu.median} (${percentLess(cpu.median)}) | ${mainThread.median} (${percentLess(mainThread.median)}) | |`,
    `| after / before, floor taken off (the transports alone) | ${cpu.transportMedian} (${percentLess(cpu.transportMedian)}) | ${mainThread.transportMedian} (${percentLess(mainThread.transportMedian)}) | |`,
    '',
    `Medians over the rounds; ratios are medians of per-round ratios. Process CPU after / before per round: ${cpu.rounds.map((x) => round(x, 2)).join(', ')}.`,
    'The floor is the same RestResourceClient calls and JSON work answered without HTTP: what both variants spend besides their transport.',
    `Mix: ${results.mix}. HTTPS keep-alive to \`certkit apiserver\` in its own process; ${results.cpus} CPUs shared with it (and with whatever else runs); Node ${process.version}.`,
  ].join('\n');
  await writeResults('client', results, table);
} finally {
  http.close();
  await server.stop();
}
