import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SqliteStorage } from '../packages/apiserver/src/storage/sqlite.ts';
import { startServerProcess, waitReadyz, Client, writeResults } from './lib.ts';
import { seedNamespace, seedSecrets } from '../packages/testenv/src/apiserver/seed.ts';

/**
 * The controller runtime over 30,000 Secrets served by certkit's API server: informer initial sync in metadata-only
 * and full mode against @kubernetes/client-node's informer on the same data (time and peak RSS, each in its own
 * process), cache Get/List throughput, and work queue throughput.
 * Usage: npm run bench:runtime [-- --secrets=N]
 */

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const SECRETS = Number(process.argv.find((a) => a.startsWith('--secrets='))?.split('=')[1] ?? 30_000);

async function seed(storage: SqliteStorage): Promise<void> {
  await seedNamespace(storage, 'bulk');
  await seedSecrets(storage, 'bulk', SECRETS, {
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.alloc(768, 'c').toString('base64'),
      'tls.key': Buffer.alloc(256, 'k').toString('base64'),
    },
    labels: (i) => ({ shard: String(i % 10), app: 'bench' }),
    annotations: { 'example.com/owner': 'team-a' },
  });
}

async function probe(mode: string, kubeconfig: string): Promise<Record<string, number | string>> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', join(here, 'runtime-probe.ts'), mode, kubeconfig, 'bulk', String(SECRETS)],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

const dir = await mkdtemp(join(tmpdir(), 'certkit-bench-runtime-'));
try {
  const storage = SqliteStorage.open(join(dir, 'state.db'));
  await seed(storage);
  await storage.close();
  const server = await startServerProcess(dir);
  const client = new Client(server, 2);
  try {
    await waitReadyz(client);
    const kubeconfig = join(dir, 'kubeconfig');
    const metadata = await probe('metadata', kubeconfig);
    const full = await probe('full', kubeconfig);
    const clientNode = await probe('client-node', kubeconfig);
    const cache = await probe('cache', kubeconfig);
    const workqueue = await probe('workqueue', kubeconfig);
    const ratio = (a: unknown, b: unknown) => Number((Number(a) / Number(b)).toFixed(3));
    const results = {
      date: new Date().toISOString(),
      secrets: SECRETS,
      informers: { metadata, full, clientNode },
      ratios: {
        metadataVsClientNode: {
          syncMs: ratio(metadata.syncMs, clientNode.syncMs),
          peakRss: ratio(metadata.peakRssMiB, clientNode.peakRssMiB),
        },
        fullVsClientNode: {
          syncMs: ratio(full.syncMs, clientNode.syncMs),
          peakRss: ratio(full.peakRssMiB, clientNode.peakRssMiB),
        },
      },
      cache,
      workqueue,
    };
    const row = (label: string, r: Record<string, unknown>) =>
      `| ${label} | ${r.syncMs} ms | ${r.peakRssMiB} MiB | ${r.heapGrowthMiB} MiB | ${r.objects} |`;
    const table = [
      `| informer over ${SECRETS} Secrets | initial sync | peak RSS | heap growth | objects |`,
      '|---|---|---|---|---|',
      row('certkit, metadata-only', metadata),
      row('certkit, full', full),
      row('@kubernetes/client-node', clientNode),
      '',
      `| ratio to client-node | sync time | peak RSS |`,
      '|---|---|---|',
      `| metadata-only | ${results.ratios.metadataVsClientNode.syncMs} | ${results.ratios.metadataVsClientNode.peakRss} |`,
      `| full | ${results.ratios.fullVsClientNode.syncMs} | ${results.ratios.fullVsClientNode.peakRss} |`,
      '',
      '| throughput | result |',
      '|---|---|',
      `| cache Get (deep copy) | ${cache.getsPerSec}/s |`,
      `| cache List with a label selector (${cache.selectiveListItems} of ${SECRETS}) | ${cache.selectiveListsPerSec}/s |`,
      `| cache List of all, unsafeDisableDeepCopy | ${cache.fullListsNoCopyPerSec}/s |`,
      `| work queue add → get → done | ${workqueue.itemsPerSec} items/s |`,
    ].join('\n');
    await writeResults('runtime', results, table);
  } finally {
    client.close();
    await server.stop();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
