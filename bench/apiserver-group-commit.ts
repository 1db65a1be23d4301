import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { SqliteStorage, type SqliteStorageOptions } from '@certkit/apiserver/storage/sqlite';
import { flag, median, writeResults } from './lib.ts';

/**
 * What a group commit of the SQLite store costs, and how groups form when clients write one after the other
 * (ADR 1210).
 *
 * - CPU per write by group size: the store on a file (synchronous=FULL, its writer thread), writes made
 *   `size` at a time in one turn, so that each batch is one group commit; the whole process's CPU
 *   (process.cpuUsage: the main thread, the writer thread, V8's helpers) over `--writes` writes of a
 *   Certificate-sized value. CPU per write = own work + (cost of a group) / size, so the difference between
 *   sizes 2 and 16 gives the cost of a group (a group of one writes fewer pages).
 * - Latency of one write at a time, 2 ms apart (a sequential client, an idle store).
 * - `--chains` clients each writing, awaiting the acknowledgement, then writing again 0–2 ms later (as a
 *   controller answers a watch event): CPU per write, writes per group and latency, as in an issuance.
 *
 * Sizes alternate in order within each round; the table gives the median over rounds. ADR 1210 ran the same
 * with a group held open for more writes (the store had options for it then), which did not pay.
 *
 * Usage: npm run bench:apiserver-group-commit [-- --rounds=3 --writes=2000 --chains=8 --results=NAME]
 */

const ROUNDS = Number(flag('rounds') ?? 3);
const WRITES = Number(flag('writes') ?? 2000);
const SIZES = [1, 2, 4, 8, 16];
const SEQUENTIAL = 200;
const CHAINS = Number(flag('chains') ?? 8);

/** A Certificate-sized stored object (~2 KB of JSON). */
const VALUE = JSON.stringify({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'cert-1', namespace: 'bench', labels: { app: 'bench' } },
  spec: { secretName: 'cert-1-tls', dnsNames: ['cert-1.bench.example'], issuerRef: { name: 'ca-1' } },
  status: { conditions: [{ type: 'Ready', status: 'True', message: 'x'.repeat(1600) }] },
});

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function withStore<T>(options: SqliteStorageOptions, fn: (s: SqliteStorage) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-group-commit-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), options);
  try {
    // Warm: the writer thread started, statements prepared, the first pages allocated.
    for (let i = 0; i < 50; i++) await storage.create(`/registry/warm/${i}`, VALUE);
    return await fn(storage);
  } finally {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU µs per write with writes made `size` at a time, and the groups the store committed. */
async function cpuPerWrite(
  size: number,
  round: number,
): Promise<{ cpuUsPerWrite: number; writesPerGroup: number }> {
  return withStore({}, async (storage) => {
    const before = storage.commitStats();
    const cpu = cpuUs();
    for (let i = 0; i < WRITES; i += size) {
      await Promise.all(
        Array.from({ length: size }, (_, j) =>
          storage.create(`/registry/r${round}/s${size}/${i + j}`, VALUE),
        ),
      );
    }
    const used = cpuUs() - cpu;
    const after = storage.commitStats();
    return {
      cpuUsPerWrite: used / WRITES,
      writesPerGroup: (after.writes - before.writes) / (after.groups - before.groups),
    };
  });
}

/** One write at a time, each awaited: latency of a lone write (the store's default hold and none). */
async function sequentialLatencyMs(options: SqliteStorageOptions, round: number): Promise<number[]> {
  return withStore(options, async (storage) => {
    const latencies: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const started = performance.now();
      await storage.create(`/registry/seq${round}/${i}`, VALUE);
      latencies.push(performance.now() - started);
      // Writes apart, as a user's: the store is idle between them.
      await setTimeout(2);
    }
    return latencies;
  });
}

/**
 * CHAINS clients, each writing, awaiting the acknowledgement, then writing again after a moment of its own
 * (0–2 ms, as a controller answers a watch event): the pattern of an issuance, in one process.
 */
async function chains(
  options: SqliteStorageOptions,
  round: number,
): Promise<{ cpuUsPerWrite: number; writesPerGroup: number; latencyMs: number; seconds: number }> {
  return withStore(options, async (storage) => {
    const before = storage.commitStats();
    const cpu = cpuUs();
    const started = performance.now();
    let latency = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: CHAINS }, async () => {
        while (next < WRITES) {
          const i = next++;
          const sent = performance.now();
          await storage.create(`/registry/chain${round}/${i}`, VALUE);
          latency += performance.now() - sent;
          await setTimeout(i % 3);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const used = cpuUs() - cpu;
    const after = storage.commitStats();
    return {
      cpuUsPerWrite: used / WRITES,
      writesPerGroup: (after.writes - before.writes) / (after.groups - before.groups),
      latencyMs: latency / WRITES,
      seconds,
    };
  });
}

function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The store as it is; ADR 1210 compared variants of it here. */
const VARIANTS: { name: string; options: SqliteStorageOptions }[] = [{ name: 'store', options: {} }];

const cpuBySize = new Map<number, number[]>(SIZES.map((s) => [s, []]));
const sequential = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
const chained = new Map<string, Awaited<ReturnType<typeof chains>>[]>(VARIANTS.map((v) => [v.name, []]));
const log = (msg: string) => process.stderr.write(`[bench:apiserver-group-commit] ${msg}\n`);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? SIZES : [...SIZES].reverse();
  for (const size of order) {
    const r = await cpuPerWrite(size, round);
    cpuBySize.get(size)!.push(r.cpuUsPerWrite);
    log(
      `round ${round + 1}, ${size} at a time: ${r.cpuUsPerWrite.toFixed(1)} CPU µs per write, ${r.writesPerGroup.toFixed(2)} writes per group`,
    );
  }
  const variants = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
  for (const v of variants) {
    const latencies = await sequentialLatencyMs(v.options, round);
    sequential.get(v.name)!.push(...latencies);
    const c = await chains(v.options, round);
    chained.get(v.name)!.push(c);
    log(
      `round ${round + 1}, ${v.name}: lone write median ${quantile(latencies, 0.5).toFixed(2)} ms; ${CHAINS} chains: ${c.cpuUsPerWrite.toFixed(1)} CPU µs per write, ${c.writesPerGroup.toFixed(2)} writes per group, ${c.latencyMs.toFixed(2)} ms per write, ${c.seconds.toFixed(2)} s`,
    );
  }
}

const cpu = Object.fromEntries(SIZES.map((s) => [s, Math.round(median(cpuBySize.get(s)!))]));
// CPU per write = w + g / size: the cost of a group from sizes 2 and 16 (a group of one writes fewer pages).
const groupUs = Math.round(((cpu[2] - cpu[16]) * 16) / 7);
const round2 = (x: number) => Math.round(x * 100) / 100;
const variantResults = VARIANTS.map((v) => {
  const runs = chained.get(v.name)!;
  const lone = sequential.get(v.name)!;
  return {
    name: v.name,
    loneWriteMs: {
      median: round2(quantile(lone, 0.5)),
      p90: round2(quantile(lone, 0.9)),
      p99: round2(quantile(lone, 0.99)),
    },
    chains: {
      cpuUsPerWrite: round2(median(runs.map((r) => r.cpuUsPerWrite))),
      writesPerGroup: round2(median(runs.map((r) => r.writesPerGroup))),
      latencyMs: round2(median(runs.map((r) => r.latencyMs))),
      seconds: round2(median(runs.map((r) => r.seconds))),
    },
  };
});
const results = {
  date: new Date().toISOString(),
  rounds: ROUNDS,
  writes: WRITES,
  chains: CHAINS,
  cpuUsPerWrite: cpu,
  groupUs,
  variants: variantResults,
};
const table = [
  `| writes made at a time (one group each) | ${SIZES.join(' | ')} |`,
  `|---|${SIZES.map(() => '---').join('|')}|`,
  `| process CPU µs per write (median of ${ROUNDS}) | ${SIZES.map((s) => cpu[s]).join(' | ')} |`,
  '',
  `A group commit's own cost (from 2 and 16 at a time): ~${groupUs} CPU µs.`,
  '',
  `| variant | lone write: median / p90 / p99 ms | ${CHAINS} chains: CPU µs per write | writes per group | ms per write | s for ${WRITES} |`,
  '|---|---|---|---|---|---|',
  ...variantResults.map(
    (v) =>
      `| ${v.name} | ${v.loneWriteMs.median} / ${v.loneWriteMs.p90} / ${v.loneWriteMs.p99} | ${v.chains.cpuUsPerWrite} | ${v.chains.writesPerGroup} | ${v.chains.latencyMs} | ${v.chains.seconds} |`,
  ),
  '',
  `Lone writes: ${SEQUENTIAL} per round, 2 ms apart. Chains: ${CHAINS} clients, each writing again 0–2 ms after its acknowledgement. Medians over ${ROUNDS} rounds, variants alternating.`,
].join('\n');
await writeResults(flag('results') ?? 'apiserver-group-commit', results, table);
