import { Client, median, rssMiB, startServerProcess, throughput, writeResults } from './lib.ts';

/**
 * API server throughput over HTTPS on loopback with 16 concurrent clients: creates of 1 KiB Secrets, GETs,
 * and listing 10,000 Secrets as PartialObjectMetadata. The server runs in its own process, as in production.
 * Usage: npm run bench:apiserver [-- --secrets N]
 */

const CONCURRENCY = 16;
const secrets = Number(process.argv.find((a) => a.startsWith('--secrets='))?.split('=')[1] ?? 10_000);
const gets = 50_000;
const payload = Buffer.alloc(768, 'x').toString('base64'); // 1 KiB of base64 data

const server = await startServerProcess();
const client = new Client(server, CONCURRENCY);
try {
  await client.call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  // Warm up connections and the JIT before measuring.
  await throughput(500, CONCURRENCY, async (i) => {
    await client.call('POST', '/api/v1/namespaces/bench/configmaps', {
      metadata: { name: `warm-${i}` },
      data: { a: 'b' },
    });
  });

  const creates = await throughput(secrets, CONCURRENCY, async (i) => {
    const res = await client.call('POST', '/api/v1/namespaces/bench/secrets', {
      metadata: { name: `secret-${i}`, labels: { bench: 'true' } },
      data: { payload },
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  });

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
    createsPerSec: Math.round(creates.opsPerSec),
    getsPerSec: Math.round(reads.opsPerSec),
    listMetadataMs: { median: Number(median(listTimes).toFixed(1)), items: listed },
    listFullMs: { median: Number(median(fullTimes).toFixed(1)) },
    serverRssMiB: Math.round(memory),
    targets: { createsPerSec: 3000, getsPerSec: 10000, listMetadataMs: 150 },
  };
  const table = [
    '| measure | result | target |',
    '|---|---|---|',
    `| creates/s (1 KiB Secrets, ${CONCURRENCY} clients, HTTPS) | ${results.createsPerSec} | ≥ 3,000 |`,
    `| GETs/s (${CONCURRENCY} clients, HTTPS) | ${results.getsPerSec} | ≥ 10,000 |`,
    `| list ${listed} Secrets as PartialObjectMetadata (median of 10) | ${results.listMetadataMs.median} ms | < 150 ms |`,
    `| list ${listed} Secrets as full objects (median of 5) | ${results.listFullMs.median} ms | — |`,
    `| server RSS after the run | ${results.serverRssMiB} MiB | — |`,
  ].join('\n');
  await writeResults('apiserver', results, table);
} finally {
  client.close();
  await server.stop();
}
