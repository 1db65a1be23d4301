import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { benchAuthorization } from './apiserver-authorization.ts';
import { Client, flag, median, rssMiB, startServerProcess, throughput, writeResults } from './lib.ts';

/**
 * API server throughput over HTTPS on loopback with 16 concurrent clients: creates of 1 KiB Secrets, GETs,
 * and listing 10,000 Secrets as PartialObjectMetadata. The server runs in its own process, as in production.
 *
 * Creates are measured side by side against the default server (SQLite synchronous=FULL: every group commit is
 * fsynced before its writes are acknowledged) and one started with --sqlite-synchronous=normal, in interleaved
 * rounds, with 16 clients and with 64: with more clients waiting, group commit shares each fsync among more
 * writes. The figure is the median of the rounds' FULL/NORMAL ratios. The other figures are the default server's.
 * Usage: npm run bench:apiserver [-- --secrets=N --rounds=N]
 * `--authorization` runs the RBAC / AlwaysAllow comparison instead (apiserver-authorization.ts).
 */

const CONCURRENCY = 16;
const secrets = Number(flag('secrets') ?? 10_000);
const rounds = Number(flag('rounds') ?? 20);
const gets = 50_000;
const payload = Buffer.alloc(768, 'x').toString('base64'); // 1 KiB of base64 data

async function prepare(client: Client): Promise<void> {
  // Warm up connections and the JIT before measuring.
  await throughput(500, CONCURRENCY, async (i) => {
    await client.call('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: `warm-${i}` },
      data: { a: 'b' },
    });
  });
}

/** Creates Secrets `secret-${first}`.. in `namespace` with `concurrency` clients; returns creates per second. */
async function createSecrets(
  client: Client,
  concurrency: number,
  namespace: string,
  first: number,
  count: number,
): Promise<number> {
  const { opsPerSec } = await throughput(count, concurrency, async (i) => {
    const res = await client.call('POST', `/api/v1/namespaces/${namespace}/secrets`, {
      metadata: { name: `secret-${first + i}`, labels: { bench: 'true' } },
      data: { payload },
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  });
  return opsPerSec;
}

interface CreateComparison {
  /** Creates/s of each round, against the default (FULL) server and the NORMAL one. */
  full: number[];
  normal: number[];
}

/**
 * Creates `count` Secrets on each server with `concurrency` clients, in interleaved rounds that alternate which
 * server goes first, so that drifting load on the machine falls on both alike.
 */
async function compareCreates(
  concurrency: number,
  namespace: string,
  count: number,
): Promise<CreateComparison> {
  const clients = [new Client(server, concurrency), new Client(normalServer, concurrency)];
  for (const c of clients) await c.call('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
  const result: CreateComparison = { full: [], normal: [] };
  const perRound = Math.ceil(count / rounds);
  try {
    for (let r = 0; r < rounds; r++) {
      const first = r * perRound;
      const n = Math.min(perRound, count - first);
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const rate = await createSecrets(clients[which], concurrency, namespace, first, n);
        (which === 0 ? result.full : result.normal).push(rate);
      }
    }
  } finally {
    for (const c of clients) c.close();
  }
  return result;
}

/** The comparison's figures: the median of the rounds' FULL/NORMAL ratios is the one with a target. */
function summary(c: CreateComparison) {
  return {
    createsPerSecFull: Math.round(median(c.full)),
    createsPerSecNormal: Math.round(median(c.normal)),
    fullToNormalRatio: Number(median(c.full.map((f, i) => f / c.normal[i])).toFixed(3)),
    // The same from the two medians, less robust to load that drifts between rounds; shown for comparison.
    fullToNormalRatioOfMedians: Number((median(c.full) / median(c.normal)).toFixed(3)),
    perRound: { full: c.full.map(Math.round), normal: c.normal.map(Math.round) },
  };
}

/**
 * The disk's fsync latency now (median of 4 KiB writes each fsynced, in `dir`): what a FULL commit waits for.
 * A create waits for about two commits (the one under way, then its own), so with 16 clients FULL's creates/s
 * cannot exceed about 16 / (2 × fsync): the ratio is to be read with it.
 */
async function fsyncMs(dir: string): Promise<number> {
  const path = join(dir, 'fsync-probe');
  const file = await open(path, 'w');
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < 40; i++) {
      await file.write(block, 0, block.length, (i % 8) * block.length);
      const started = performance.now();
      await file.sync();
      times.push(performance.now() - started);
    }
  } finally {
    await file.close();
    await rm(path);
  }
  return median(times);
}

function comparisonRows(clients: number, c: ReturnType<typeof summary>): string[] {
  return [
    `| ${clients} clients: creates/s with FULL / with --sqlite-synchronous=normal (interleaved rounds) | ${c.createsPerSecFull} / ${c.createsPerSecNormal} | — |`,
    `| ${clients} clients: FULL / NORMAL (median of the rounds' ratios; ratio of the medians) | ${c.fullToNormalRatio}; ${c.fullToNormalRatioOfMedians} | ≥ 0.7 |`,
  ];
}

if (process.argv.includes('--authorization')) {
  await benchAuthorization();
  process.exit(0);
}

const server = await startServerProcess();
const normalServer = await startServerProcess(undefined, ['--sqlite-synchronous=normal']);
const client = new Client(server, CONCURRENCY);
const normalClient = new Client(normalServer, CONCURRENCY);
try {
  await prepare(client);
  await prepare(normalClient);

  const fsyncBefore = await fsyncMs(server.dataDir);
  // The clients of the other figures, then many more: group commit shares each fsync among more writes.
  const at16 = summary(await compareCreates(CONCURRENCY, 'bench', secrets));
  // In a namespace of their own, so that the lists below are of the same 10,000 Secrets as before.
  const at64 = summary(await compareCreates(64, 'bench-64', secrets));
  const fsync = Number(median([fsyncBefore, await fsyncMs(server.dataDir)]).toFixed(2));

  const reads = await throughput(gets, CONCURRENCY, async (i) => {
    const res = await client.call('GET', `/api/v1/namespaces/bench/secrets/secret-${i % secrets}`);
    if (res.status !== 200) throw new Error(`get failed: ${res.status}`);
  });

  const accept = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
  const listTimes: number[] = [];
  let listed = 0;
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const res = await client.call('GET', '/api/v1/namespaces/bench/secrets', undefined, accept);
    listTimes.push(performance.now() - started);
    listed = (JSON.parse(res.text).items as unknown[]).length;
  }
  const fullTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await client.call('GET', '/api/v1/namespaces/bench/secrets');
    fullTimes.push(performance.now() - started);
  }
  const memory = await rssMiB(server.pid);

  const results = {
    date: new Date().toISOString(),
    concurrency: CONCURRENCY,
    secrets,
    rounds,
    createsPerSec: at16.createsPerSecFull,
    synchronousFullVsNormal: { clients16: at16, clients64: at64 },
    diskFsyncMs: fsync,
    getsPerSec: Math.round(reads.opsPerSec),
    listMetadataMs: { median: Number(median(listTimes).toFixed(1)), items: listed },
    listFullMs: { median: Number(median(fullTimes).toFixed(1)) },
    serverRssMiB: Math.round(memory),
    targets: { createsPerSec: 3000, getsPerSec: 10000, listMetadataMs: 150, fullToNormalRatio: 0.7 },
  };
  const table = [
    '| measure | result | target |',
    '|---|---|---|',
    `| creates/s (1 KiB Secrets, ${CONCURRENCY} clients, HTTPS; synchronous=FULL, the default; median of ${rounds} rounds) | ${at16.createsPerSecFull} | ≥ 3,000 |`,
    ...comparisonRows(CONCURRENCY, at16),
    ...comparisonRows(64, at64),
    `| disk fsync latency around the create rounds (median, 4 KiB) | ${fsync} ms | — |`,
    `| GETs/s (${CONCURRENCY} clients, HTTPS) | ${results.getsPerSec} | ≥ 10,000 |`,
    `| list ${listed} Secrets as PartialObjectMetadata (median of 10) | ${results.listMetadataMs.median} ms | < 150 ms |`,
    `| list ${listed} Secrets as full objects (median of 5) | ${results.listFullMs.median} ms | — |`,
    `| server RSS after the run | ${results.serverRssMiB} MiB | — |`,
  ].join('\n');
  await writeResults('apiserver', results, table);
} finally {
  client.close();
  normalClient.close();
  await server.stop();
  await normalServer.stop();
}
