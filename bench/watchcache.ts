import { request } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage } from '../packages/apiserver/src/storage/types.ts';
import { EtcdStorage } from '../packages/apiserver/src/storage/etcd/store.ts';
import { SqliteStorage } from '../packages/apiserver/src/storage/sqlite.ts';
import { etcdAvailable, startEtcd } from '../packages/testenv/src/etcd/etcd.ts';
import {
  Client,
  median,
  rssMiB,
  type ServerProcess,
  startServerProcess,
  throughput,
  waitReadyz,
  writeResults,
} from './lib.ts';
import { seedNamespace, seedSecrets } from '../packages/testenv/src/apiserver/seed.ts';

/**
 * The watch cache against the same data with and without it (--watch-cache=false), in one run:
 * - list of 30,000 Secrets at resourceVersion 0 as PartialObjectMetadata;
 * - 1,000 concurrent watchers each receiving 1,000 events (one million deliveries), and server memory growth;
 * - initialising the cache from 30,000 Secrets on SQLite and on etcd: time and peak memory.
 * Usage: npm run bench:watchcache [-- --watchers=N --events=N --secrets=N]
 */

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const SECRETS = arg('secrets', 30_000);
const WATCHERS = arg('watchers', 1000);
const EVENTS = arg('events', 1000);
const WATCH_TIMEOUT_MS = 180_000;

async function seed(storage: Storage): Promise<void> {
  await seedNamespace(storage, 'bulk');
  await seedNamespace(storage, 'events');
  await seedSecrets(storage, 'bulk', SECRETS, {
    data: { payload: Buffer.alloc(768, 'x').toString('base64') },
    labels: () => ({ app: 'bench' }),
  });
}

async function cacheInitSeconds(client: Client): Promise<number> {
  const text = (await client.call('GET', '/metrics')).text;
  const m = /apiserver_watch_cache_initialization_duration_seconds\{resource="secrets"\} ([\d.e-]+)/.exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

/** Opens a watch and counts event lines without parsing them (the client must not be the bottleneck). */
function countingWatch(
  server: ServerProcess,
  agent: Client['agent'],
  path: string,
  onEvents: (n: number) => void,
) {
  return new Promise<() => void>((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      { headers: { Authorization: `Bearer ${server.token}` }, agent },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`watch answered ${res.statusCode}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          let n = 0;
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) n++;
          if (n) onEvents(n);
        });
        resolve(() => req.destroy());
      },
    );
    req.on('error', () => {});
    req.end();
  });
}

interface ModeResult {
  listMetadataMs: number;
  listedItems: number;
  watchSeconds: number | null;
  deliveries: number;
  rssBeforeWatchersMiB: number;
  rssAfterMiB: number;
  memoryGrowthMiB: number;
  startPeakRssMiB: number;
}

async function runMode(label: string, dataDir: string, flags: string[]): Promise<ModeResult> {
  const server = await startServerProcess(dataDir, flags);
  const client = new Client(server, 16);
  try {
    await waitReadyz(client);
    const startPeakRssMiB = await rssMiB(server.pid, 'VmHWM');
    const accept = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
    const times: number[] = [];
    let listedItems = 0;
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      const res = await client.call(
        'GET',
        '/api/v1/namespaces/bulk/secrets?resourceVersion=0',
        undefined,
        accept,
      );
      times.push(performance.now() - started);
      listedItems = (JSON.parse(res.text).items as unknown[]).length;
    }

    const rv = JSON.parse((await client.call('GET', '/api/v1/namespaces/events/configmaps')).text).metadata
      .resourceVersion;
    const watchAgent = new Client(server, WATCHERS + 10).agent;
    const rssBeforeWatchersMiB = await rssMiB(server.pid);
    let deliveries = 0;
    let doneWatchers = 0;
    const perWatcher = new Array<number>(WATCHERS).fill(0);
    let allDone: () => void = () => {};
    const finished = new Promise<void>((r) => {
      allDone = r;
    });
    const closers: (() => void)[] = [];
    for (let i = 0; i < WATCHERS; i++) {
      closers.push(
        await countingWatch(
          server,
          watchAgent,
          `/api/v1/namespaces/events/configmaps?watch=true&resourceVersion=${rv}`,
          (n) => {
            deliveries += n;
            perWatcher[i] += n;
            if (perWatcher[i] >= EVENTS && perWatcher[i] - n < EVENTS && ++doneWatchers === WATCHERS)
              allDone();
          },
        ),
      );
    }
    const started = performance.now();
    await throughput(EVENTS, 16, async (i) => {
      const res = await client.call('POST', '/api/v1/namespaces/events/configmaps', {
        metadata: { name: `${label}-${i}` },
        data: { i: String(i) },
      });
      if (res.status !== 201) throw new Error(`create failed: ${res.status}`);
    });
    const outcome = await Promise.race([
      finished.then(() => 'done' as const),
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), WATCH_TIMEOUT_MS)),
    ]);
    const watchSeconds = outcome === 'done' ? (performance.now() - started) / 1000 : null;
    const rssAfterMiB = await rssMiB(server.pid);
    for (const close of closers) close();
    watchAgent.destroy();
    return {
      listMetadataMs: Number(median(times).toFixed(1)),
      listedItems,
      watchSeconds: watchSeconds === null ? null : Number(watchSeconds.toFixed(2)),
      deliveries,
      rssBeforeWatchersMiB: Math.round(rssBeforeWatchersMiB),
      rssAfterMiB: Math.round(rssAfterMiB),
      memoryGrowthMiB: Math.round(rssAfterMiB - rssBeforeWatchersMiB),
      startPeakRssMiB: Math.round(startPeakRssMiB),
    };
  } finally {
    client.close();
    await server.stop();
  }
}

async function initFigures(label: string, makeDataDir: () => Promise<{ dir: string; flags: string[] }>) {
  const { dir, flags } = await makeDataDir();
  const server = await startServerProcess(dir, flags);
  const client = new Client(server, 4);
  try {
    const readyMs = await waitReadyz(client);
    return {
      storage: label,
      cacheInitSeconds: Number((await cacheInitSeconds(client)).toFixed(3)),
      readyAfterListenMs: Math.round(readyMs),
      peakRssMiB: Math.round(await rssMiB(server.pid, 'VmHWM')),
    };
  } finally {
    client.close();
    await server.stop();
  }
}

const ratio = (a: number | null, b: number | null) => (a && b ? Number((a / b).toFixed(3)) : null);

const sqliteDir = await mkdtemp(join(tmpdir(), 'certkit-bench-wc-'));
try {
  const storage = SqliteStorage.open(join(sqliteDir, 'state.db'));
  await seed(storage);
  await storage.close();

  // The two modes on the same data, one after the other in this run.
  const cached = await runMode('cache', sqliteDir, ['--watch-cache=true']);
  const uncached = await runMode('nocache', sqliteDir, ['--watch-cache=false']);

  const init = [await initFigures('sqlite', async () => ({ dir: sqliteDir, flags: [] }))];
  if (etcdAvailable()) {
    const etcd = await startEtcd();
    const etcdDir = await mkdtemp(join(tmpdir(), 'certkit-bench-wc-etcd-'));
    try {
      const etcdStorage = await EtcdStorage.connect({ endpoints: [etcd.endpoint] });
      await seed(etcdStorage);
      await etcdStorage.close();
      init.push(
        await initFigures('etcd', async () => ({
          dir: etcdDir,
          flags: ['--storage', 'etcd', '--etcd-endpoints', etcd.endpoint],
        })),
      );
    } finally {
      await etcd.cleanup();
      await rm(etcdDir, { recursive: true, force: true });
    }
  }

  const results = {
    date: new Date().toISOString(),
    secrets: SECRETS,
    watchers: WATCHERS,
    eventsPerWatcher: EVENTS,
    cache: cached,
    noCache: uncached,
    ratios: {
      listMetadata: ratio(cached.listMetadataMs, uncached.listMetadataMs),
      watchFanOut: ratio(cached.watchSeconds, uncached.watchSeconds),
      memoryGrowth: ratio(cached.memoryGrowthMiB, uncached.memoryGrowthMiB),
    },
    initialisation: init,
    targets: { listMetadataMs: 150, watchSeconds: 5, memoryGrowthMiB: 100 },
  };
  const fmt = (v: number | null, unit: string) =>
    v === null ? `timed out (>${WATCH_TIMEOUT_MS / 1000} s)` : `${v} ${unit}`;
  const table = [
    '| measure | watch cache | no cache | cache / no cache | target |',
    '|---|---|---|---|---|',
    `| list ${cached.listedItems} Secrets at RV 0 as PartialObjectMetadata (median of 7) | ${cached.listMetadataMs} ms | ${uncached.listMetadataMs} ms | ${results.ratios.listMetadata} | < 150 ms |`,
    `| ${WATCHERS} watchers × ${EVENTS} events (${cached.deliveries} / ${uncached.deliveries} delivered) | ${fmt(cached.watchSeconds, 's')} | ${fmt(uncached.watchSeconds, 's')} | ${results.ratios.watchFanOut} | < 5 s |`,
    `| server memory growth during the fan-out | ${cached.memoryGrowthMiB} MiB | ${uncached.memoryGrowthMiB} MiB | ${results.ratios.memoryGrowth} | < 100 MB |`,
    `| server peak RSS at start over ${SECRETS} Secrets | ${cached.startPeakRssMiB} MiB | ${uncached.startPeakRssMiB} MiB | ${ratio(cached.startPeakRssMiB, uncached.startPeakRssMiB)} | — |`,
    '',
    '| cache initialisation over 30,000 Secrets | cache init | /readyz ok after listen | peak RSS |',
    '|---|---|---|---|',
    ...init.map(
      (i) => `| ${i.storage} | ${i.cacheInitSeconds} s | ${i.readyAfterListenMs} ms | ${i.peakRssMiB} MiB |`,
    ),
  ].join('\n');
  await writeResults('watchcache', results, table);
} finally {
  await rm(sqliteDir, { recursive: true, force: true });
}
