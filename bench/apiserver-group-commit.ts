import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStorage, type SqliteStorageOptions } from '@certkit/apiserver/storage/sqlite';
import { flag, median, writeResults } from './lib.ts';

/**
 * What a group commit of the SQLite store costs, and what holding a group open costs a lone write (ADR 1210).
 *
 * - CPU per write by group size: the store on a file (synchronous=FULL, its writer thread), writes made
 *   `size` at a time in one turn, so that each batch is one group commit; the whole process's CPU
 *   (process.cpuUsage: the main thread, the writer thread, V8's helpers) over `--writes` writes of a
 *   Certificate-sized value. CPU per write = own work + (cost of a group) / size, so the difference between
 *   sizes 1 and 16 gives the cost of a group.
 * - Latency of one write at a time (each awaited before the next: a sequential client, an idle store), and
 *   of a Certificate's writes in the order an issuance makes them, one after the other, with the store's
 *   defaults and with holding turned off.
 *
 * Sizes and variants alternate within each round; the table gives the median over rounds.
 *
 * Usage: npm run bench:apiserver-group-commit [-- --rounds=3 --writes=2000 --results=NAME]
 */

const ROUNDS = Number(flag('rounds') ?? 3);
const WRITES = Number(flag('writes') ?? 2000);
const SIZES = [1, 2, 4, 8, 16];
const SEQUENTIAL = 200;

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

const cpuBySize = new Map<number, number[]>(SIZES.map((s) => [s, []]));
const perGroupBySize = new Map<number, number[]>(SIZES.map((s) => [s, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? SIZES : [...SIZES].reverse();
  for (const size of order) {
    const r = await cpuPerWrite(size, round);
    cpuBySize.get(size)!.push(r.cpuUsPerWrite);
    perGroupBySize.get(size)!.push(r.writesPerGroup);
    process.stderr.write(
      `[bench:apiserver-group-commit] round ${round + 1}, ${size} at a time: ${r.cpuUsPerWrite.toFixed(1)} CPU µs per write, ${r.writesPerGroup.toFixed(2)} writes per group\n`,
    );
  }
}

const cpu = Object.fromEntries(SIZES.map((s) => [s, Math.round(median(cpuBySize.get(s)!))]));
// CPU per write = w + g / size: the cost of a group from sizes 1 and 16.
const groupUs = Math.round(((cpu[1] - cpu[16]) * 16) / 15);
const results = {
  date: new Date().toISOString(),
  rounds: ROUNDS,
  writes: WRITES,
  cpuUsPerWrite: cpu,
  groupUs,
};
const table = [
  `| writes made at a time (one group each) | ${SIZES.join(' | ')} |`,
  `|---|${SIZES.map(() => '---').join('|')}|`,
  `| process CPU µs per write (median of ${ROUNDS}) | ${SIZES.map((s) => cpu[s]).join(' | ')} |`,
  '',
  `A group commit's own cost (from 1 and 16 at a time): ~${groupUs} CPU µs.`,
].join('\n');
await writeResults(flag('results') ?? 'apiserver-group-commit', results, table);
