import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, loadKubeconfig, RateLimiter } from '@certkit/runtime';
import { RestResourceClient } from '../packages/runtime/src/client/resource-client.ts';
import { type HttpRequestSpec, Transport } from '../packages/runtime/src/client/transport.ts';
import { BaselineTransport } from './client-baseline.ts';
import { UndiciTransport } from './client-undici.ts';
import { Client, flag, median, startServerProcess, waitReadyz, writeResults } from './lib.ts';

/**
 * The REST client's CPU per request against `certkit apiserver` (its own process), three transports under the
 * same RestResourceClient in one run: ours (the own HTTP/1.1 pool for unary requests, node:http for streams),
 * undici (the library behind Node's fetch, through its Pool/request API: bench/client-undici.ts), and plain
 * node:http (the transport before the pool: bench/client-baseline.ts). Four workloads, each interleaved
 * variant by variant, round by round (ABBA, as the machine is shared and noisy):
 * - get: GET of one small ConfigMap, `--concurrency` workers;
 * - list: LIST of `--items` ConfigMaps (~1 KB each) read whole, one at a time;
 * - watch: a watch with sendInitialEvents over the same ConfigMaps, read event by event to its bookmark
 *   (per event);
 * - mix: the controller's kind of writes: create an Event (~600 B), update a ConfigMap (~3 KB), create a
 *   Secret (~4 KB), get a Secret, delete the Secret, `--concurrency` workers.
 * CPU is the bench process's (process.cpuUsage), so it also counts what all variants share (JSON decoding,
 * RestResourceClient, the bench): a fourth variant answers the same unary calls without HTTP, and that
 * floor taken off leaves the transports' own CPU (not for watch, which has no unary answer to record).
 * Usage: npm run bench:client [-- --rounds=12 --ops=200 --concurrency=8 --items=2000 --lists=10]
 */

const REQUESTS_PER_OP = 5;
const ROUNDS = Number(flag('rounds') ?? 12);
/** Operations (of five requests each) per round and variant. */
const OPS = Number(flag('ops') ?? 200);
const CONCURRENCY = Number(flag('concurrency') ?? 8);
/** ConfigMaps in the listed and watched namespace. */
const ITEMS = Number(flag('items') ?? 2000);
/** GETs per round and variant. */
const GETS = OPS * REQUESTS_PER_OP;
/** LISTs per round and variant. */
const LISTS = Number(flag('lists') ?? 10);
const undiciVersion = (createRequire(import.meta.url)('undici/package.json') as { version: string }).version;
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
 * Everything a unary request costs the bench but HTTP: the same RestResourceClient and JSON encoding and
 * decoding, answered at once with an answer recorded from a real exchange (one per verb and resource, taken
 * through `recordFrom` in a first round). Subtracted from the others, it leaves the transport's own CPU.
 */
class NoHttpTransport {
  readonly #answers = new Map<string, string>();
  recordFrom: Transport | undefined;

  async json<T>(spec: HttpRequestSpec): Promise<T> {
    const key = `${spec.verb ?? spec.method} ${spec.target?.resource}`;
    if (this.recordFrom) {
      const answer = await this.recordFrom.json<T>(spec);
      this.#answers.set(key, JSON.stringify(answer));
      return answer;
    }
    if (spec.body !== undefined) JSON.stringify(spec.body);
    return JSON.parse(this.#answers.get(key)!) as T;
  }

  stream(): never {
    throw new Error('the floor has no streams');
  }

  close(): void {}
}

/** µs per unit (request, or watch event), one entry per measured round: process CPU and wall clock. */
interface Measures {
  cpuUs: number[];
  wallUs: number[];
}

interface Variant {
  name: string;
  transport: Transport;
  events: RestResourceClient;
  configMaps: RestResourceClient;
  secrets: RestResourceClient;
  /** Each worker's ConfigMap as last written. */
  owned: KubeObject[];
  measures: Map<string, Measures>;
}

interface Workload {
  name: string;
  /** What one unit is, and how many a round has. */
  unit: string;
  units: number;
  /** False for the watch: the floor cannot answer it. */
  floor: boolean;
  run(v: Variant): Promise<void>;
}

const LIST_NS = 'bench-list';
const ITEM_DATA = { value: 'x'.repeat(800), note: 'one of many ConfigMaps a controller lists and watches' };

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
    measures: new Map(),
  });
  // The other transports have the same interface; RestResourceClient only calls json() and stream().
  const ours = variant('ours (HTTP/1.1 pool)', new Transport(config, { limiter: limiter() }));
  const undici = variant('undici Pool', new UndiciTransport(config) as unknown as Transport);
  const nodeHttp = variant(
    'node:http',
    new BaselineTransport(config, { limiter: limiter() }) as unknown as Transport,
  );
  const noHttp = new NoHttpTransport();
  noHttp.recordFrom = new Transport(config, { limiter: limiter() });
  const floor = variant('no HTTP (floor)', noHttp as unknown as Transport);
  const variants = [ours, undici, nodeHttp];

  for (const ns of [NS, LIST_NS]) {
    await new RestResourceClient(ours.transport, builtins.namespaces).create(undefined, {
      metadata: { name: ns },
    });
  }
  await ours.secrets.create(NS, secret('fixed'));
  await ours.configMaps.create(NS, { metadata: { name: 'fixed', namespace: NS }, data: { small: 'value' } });
  let made = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (made < ITEMS) {
        const i = made++;
        await ours.configMaps.create(LIST_NS, {
          metadata: { name: `item-${i}`, namespace: LIST_NS, labels: { app: 'bench', index: String(i) } },
          data: ITEM_DATA,
        });
      }
    }),
  );
  for (const [index, v] of [...variants, floor].entries()) {
    for (let w = 0; w < CONCURRENCY; w++) {
      v.owned.push(
        await v.configMaps.create(NS, {
          metadata: { name: `cm-${index}-${w}`, namespace: NS },
          data: configMapData(0),
        }),
      );
    }
  }

  /** `ops` calls of `op` from CONCURRENCY workers. */
  const workers = async (ops: number, op: (worker: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        while (next++ < ops) await op(worker);
      }),
    );
  };

  const workloads: Workload[] = [
    {
      name: 'get',
      unit: 'request',
      units: GETS,
      floor: true,
      run: (v) => workers(GETS, () => v.configMaps.get(NS, 'fixed').then(() => undefined)),
    },
    {
      name: 'list',
      unit: 'request',
      units: LISTS,
      floor: true,
      async run(v) {
        for (let i = 0; i < LISTS; i++) {
          const list = await v.configMaps.list(LIST_NS);
          if (list.items.length !== ITEMS) throw new Error(`${v.name}: listed ${list.items.length} items`);
        }
      },
    },
    {
      name: 'watch',
      unit: 'event',
      units: ITEMS,
      floor: false,
      async run(v) {
        const controller = new AbortController();
        const watch = await v.configMaps.watch(LIST_NS, {
          sendInitialEvents: true,
          resourceVersionMatch: 'NotOlderThan',
          allowWatchBookmarks: true,
          signal: controller.signal,
        });
        let added = 0;
        for await (const event of watch) {
          if (event.type === 'ADDED') added++;
          const annotations = (event.object.metadata as { annotations?: Record<string, string> } | undefined)
            ?.annotations;
          if (annotations?.['k8s.io/initial-events-end'] === 'true') break;
        }
        controller.abort();
        if (added !== ITEMS) throw new Error(`${v.name}: watched ${added} initial events`);
      },
    },
    {
      name: 'mix',
      unit: 'request',
      units: OPS * REQUESTS_PER_OP,
      floor: true,
      run: (v) =>
        workers(OPS, async (worker) => {
          const n = serial++;
          await v.events.create(NS, event(`e-${n}`));
          v.owned[worker] = await v.configMaps.update({ ...v.owned[worker], data: configMapData(n) });
          await v.secrets.create(NS, secret(`s-${n}`));
          await v.secrets.get(NS, 'fixed');
          await v.secrets.delete(NS, `s-${n}`);
        }),
    },
  ];

  const measure = async (v: Variant, workload: Workload) => {
    gc();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await workload.run(v);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { cpuUs: (used.user + used.system) / workload.units, wallUs: (wall * 1000) / workload.units };
  };

  // The floor's answers, recorded from real exchanges; then warm-up: JIT, connections, the server's caches.
  for (const workload of workloads) if (workload.floor) await measure(floor, workload);
  noHttp.recordFrom.close();
  noHttp.recordFrom = undefined;
  for (let i = 0; i < 2; i++) {
    for (const workload of workloads) {
      for (const v of [...variants, floor]) if (v !== floor || workload.floor) await measure(v, workload);
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const workload of workloads) {
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const v of [...order, ...(workload.floor ? [floor] : [])]) {
        const result = await measure(v, workload);
        const m = v.measures.get(workload.name) ?? { cpuUs: [], wallUs: [] };
        v.measures.set(workload.name, m);
        m.cpuUs.push(result.cpuUs);
        m.wallUs.push(result.wallUs);
        process.stderr.write(
          `round ${r + 1} ${workload.name} ${v.name}: ${round(result.cpuUs)} µs CPU/${workload.unit}\n`,
        );
      }
    }
  }
  for (const v of variants) v.transport.close();

  /**
   * `of` over `to`, round by round (they ran back to back), and their median; `transport` takes the no-HTTP
   * floor of the same round off both first, which leaves what the transports themselves cost.
   */
  const ratio = (workload: Workload, of: Variant, to: Variant) => {
    const a = of.measures.get(workload.name)!.cpuUs;
    const b = to.measures.get(workload.name)!.cpuUs;
    const f = floor.measures.get(workload.name)?.cpuUs;
    return {
      median: round(median(a.map((x, i) => x / b[i])), 3),
      ...(f ? { transportMedian: round(median(a.map((x, i) => (x - f[i]) / (b[i] - f[i]))), 3) } : {}),
      rounds: a.map((x, i) => round(x / b[i], 3)),
    };
  };
  const stats = (values: number[]) => ({
    median: round(median(values)),
    min: round(Math.min(...values)),
    rounds: values.map((x) => round(x)),
  });
  const workloadResults = workloads.map((workload) => ({
    name: workload.name,
    unit: workload.unit,
    unitsPerRound: workload.units,
    variants: Object.fromEntries(
      [...variants, floor]
        .filter((v) => v.measures.has(workload.name))
        .map((v) => {
          const m = v.measures.get(workload.name)!;
          return [
            v.name,
            {
              processCpuUs: stats(m.cpuUs),
              wallUs: stats(m.wallUs),
              perSecond: round(1e6 / median(m.wallUs)),
            },
          ];
        }),
    ),
    undiciOverOurs: ratio(workload, undici, ours),
    nodeHttpOverOurs: ratio(workload, nodeHttp, ours),
  }));
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    undici: undiciVersion,
    cpus: availableParallelism(),
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    items: ITEMS,
    mix: 'create Event ~0.6 KB, update ConfigMap ~3 KB, create Secret ~4 KB, get Secret, delete Secret',
    workloads: workloadResults,
  };
  const describe: Record<string, string> = {
    get: `GET one small ConfigMap, ${CONCURRENCY} workers, ${GETS} per round`,
    list: `LIST of ${ITEMS} ConfigMaps (~1 KB each), ${LISTS} per round`,
    watch: `watch with sendInitialEvents, ${ITEMS} events per round`,
    mix: `write mix, ${CONCURRENCY} workers, ${OPS * REQUESTS_PER_OP} requests per round`,
  };
  const rows = workloadResults.flatMap((w) => {
    const cell = (name: string) => {
      const v = w.variants[name];
      return v ? `${v.processCpuUs.median} µs, ${v.perSecond}/s` : '–';
    };
    const transportRatio = (r: { median: number; transportMedian?: number }) =>
      r.transportMedian === undefined ? `${r.median}` : `${r.median} (${r.transportMedian} floor off)`;
    return [
      `| ${describe[w.name]}, per ${w.unit} | ${cell(ours.name)} | ${cell(undici.name)} | ${cell(nodeHttp.name)} | ${cell(floor.name)} | ${transportRatio(w.undiciOverOurs)} | ${transportRatio(w.nodeHttpOverOurs)} |`,
    ];
  });
  const table = [
    `| ${ROUNDS} rounds, ABBA | ours (HTTP/1.1 pool; node:http for streams) | undici ${undiciVersion} Pool | node:http | no HTTP (floor) | undici / ours CPU | node:http / ours CPU |`,
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Cells: median process CPU µs per request (or watch event), and requests (or events) per second of wall clock. Ratios are medians of per-round ratios; "floor off" takes the no-HTTP floor (the same RestResourceClient calls and JSON work answered without HTTP) off both sides first, which leaves the transports alone.',
    `Mix: ${results.mix}. HTTPS keep-alive to \`certkit apiserver\` in its own process; ${results.cpus} CPUs shared with it (and with whatever else runs); Node ${process.version}.`,
  ].join('\n');
  await writeResults('client', results, table);
} finally {
  http.close();
  await server.stop();
}
