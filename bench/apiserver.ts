import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, median, rssMiB, startServerProcess, throughput, writeResults } from './lib.ts';

/**
 * API server throughput over HTTPS on loopback with 16 concurrent clients: creates of 1 KiB Secrets, GETs,
 * and listing 10,000 Secrets as PartialObjectMetadata. The server runs in its own process, as in production.
 *
 * Creates are measured twice, side by side: against the default server (SQLite synchronous=FULL, every group
 * commit fsynced before it is acknowledged) and against one started with --sqlite-synchronous=normal, in
 * interleaved rounds (alternating which goes first) so that drifting load on the machine falls on both alike.
 * The ratio is the median of the rounds' FULL/NORMAL ratios. The other figures are the default server's.
 * Usage: npm run bench:apiserver [-- --secrets=N --rounds=N]
 */

const CONCURRENCY = 16;
const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const secrets = flag('secrets', 10_000);
const rounds = flag('rounds', 20);
const gets = 50_000;
const payload = Buffer.alloc(768, 'x').toString('base64'); // 1 KiB of base64 data

async function prepare(client: Client): Promise<void> {
  await client.call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  // Warm up connections and the JIT before measuring.
  await throughput(500, CONCURRENCY, async (i) => {
    await client.call('POST', '/api/v1/namespaces/bench/configmaps', {
      metadata: { name: `warm-${i}` },
      data: { a: 'b' },
    });
  });
}

/** Creates Secrets first..first+count-1; returns creates per second. */
async function createSecrets(client: Client, first: number, count: number): Promise<number> {
  const { opsPerSec } = await throughput(count, CONCURRENCY, async (i) => {
    const res = await client.call('POST', '/api/v1/namespaces/bench/secrets', {
      metadata: { name: `secret-${first + i}`, labels: { bench: 'true' } },
      data: { payload },
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  });
  return opsPerSec;
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

const server = await startServerProcess();
const normalServer = await startServerProcess(undefined, ['--sqlite-synchronous=normal']);
const client = new Client(server, CONCURRENCY);
const normalClient = new Client(normalServer, CONCURRENCY);
try {
  await prepare(client);
  await prepare(normalClient);

  const fsyncBefore = await fsyncMs(server.dataDir);
  const perRound = Math.ceil(secrets / rounds);
  const full: number[] = [];
  const normal: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const first = r * perRound;
    const count = Math.min(perRound, secrets - first);
    if (r % 2 === 0) {
      full.push(await createSecrets(client, first, count));
      normal.push(await createSecrets(normalClient, first, count));
    } else {
      normal.push(await createSecrets(normalClient, first, count));
      full.push(await createSecrets(client, first, count));
    }
  }
  const ratio = median(full.map((f, i) => f / normal[i]));
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
    createsPerSec: Math.round(median(full)),
    createsPerSecSynchronousNormal: Math.round(median(normal)),
    createsFullToNormalRatio: Number(ratio.toFixed(3)),
    // The same from the two medians, less robust to load that drifts between rounds; shown for comparison.
    createsFullToNormalRatioOfMedians: Number((median(full) / median(normal)).toFixed(3)),
    createsPerRound: { full: full.map(Math.round), normal: normal.map(Math.round) },
    diskFsyncMs: fsync,
    getsPerSec: Math.round(reads.opsPerSec),
    listMetadataMs: { median: Number(median(listTimes).toFixed(1)), items: listed },
    listFullMs: { median: Number(median(fullTimes).toFixed(1)) },
    serverRssMiB: Math.round(memory),
    targets: { createsPerSec: 3000, getsPerSec: 10000, listMetadataMs: 150, createsFullToNormalRatio: 0.7 },
  };
  const table = [
    '| measure | result | target |',
    '|---|---|---|',
    `| creates/s (1 KiB Secrets, ${CONCURRENCY} clients, HTTPS; synchronous=FULL, the default; median of ${rounds} rounds) | ${results.createsPerSec} | ≥ 3,000 |`,
    `| creates/s with --sqlite-synchronous=normal (rounds interleaved with FULL's) | ${results.createsPerSecSynchronousNormal} | — |`,
    `| FULL / NORMAL creates/s (median of the rounds' ratios) | ${results.createsFullToNormalRatio} | ≥ 0.7 |`,
    `| FULL / NORMAL creates/s (ratio of the medians above) | ${results.createsFullToNormalRatioOfMedians} | — |`,
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
