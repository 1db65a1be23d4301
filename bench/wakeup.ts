import { spawn } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { round } from './controller-lib.ts';
import { writeResults } from './lib.ts';

/**
 * What a thread pays for having slept: the CPU time of one fixed unit of controller-like work (two ECDSA
 * signatures, JSON in and out of a Certificate-sized object) run back to back, and run right after the thread
 * slept 1, 5 or 20 ms, on an otherwise idle machine and with every CPU kept busy by other threads (as key
 * generation keeps them busy in bench:issuance's RSA runs).
 *
 * Why it matters: in an RSA issuance run the API server's and the controller's work arrives one Certificate
 * at a time, at the pace keys come out of key generation, so nearly every piece of it runs right after its
 * thread slept; in an ECDSA run it arrives in bursts. The same requests then cost their processes up to about
 * twice the CPU time (compare bench:issuance's RSA and ECDSA CPU columns). This bench isolates that effect
 * from the controller: it is a property of the machine (caches, TLBs and branch predictors that other work
 * refilled while the thread slept), not of certkit.
 *
 * CPU time is the process's (process.cpuUsage: microseconds; the per-thread counter only has ticks), so time
 * spent preempted is not counted.
 * Usage: npm run bench:wakeup [-- --units=200]
 */

const UNITS = Number(process.argv.find((a) => a.startsWith('--units='))?.split('=')[1] ?? 200);
const SLEEPS_MS = [1, 5, 20];

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const tbs = Buffer.alloc(600, 1);
const certificate = JSON.stringify({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'example', namespace: 'default', uid: 'a'.repeat(36), resourceVersion: '12345' },
  spec: {
    secretName: 'example-tls',
    dnsNames: Array.from({ length: 20 }, (_, i) => `host-${i}.example.com`),
  },
  status: {
    conditions: Array.from({ length: 4 }, (_, i) => ({
      type: `Type${i}`,
      status: 'True',
      message: 'm'.repeat(80),
    })),
  },
});

function unit(): void {
  for (let i = 0; i < 2; i++) sign('sha256', tbs, privateKey);
  for (let i = 0; i < 10; i++) JSON.stringify(JSON.parse(certificate));
}

/** The process's CPU time: its main thread here, the only busy one (the CPU hogs are another process). */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median thread CPU µs per unit: back to back (sleepMs 0) or each unit right after sleeping sleepMs. */
async function measure(sleepMs: number): Promise<number> {
  const costs: number[] = [];
  for (let i = 0; i < UNITS; i++) {
    if (sleepMs > 0) await sleep(sleepMs);
    const before = cpuMicros();
    unit();
    costs.push(cpuMicros() - before);
  }
  return median(costs);
}

/** A process whose threads spin on every CPU, at normal priority, until killed. */
function startCpuHogs() {
  const threads = availableParallelism() * 2;
  const code = `const { Worker } = require('node:worker_threads');
    for (let i = 0; i < ${threads}; i++) new Worker('let x = 0; for (;;) x = (x * 1103515245 + 12345) >>> 0;', { eval: true });`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

for (let i = 0; i < 200; i++) unit(); // warm up: optimized code before anything is timed

interface Row {
  condition: string;
  backToBackMicros: number;
  afterSleep: { sleepMs: number; micros: number; ratio: number }[];
}
const rows: Row[] = [];
for (const condition of ['machine otherwise idle', 'every CPU busy with other threads']) {
  const hogs = condition.startsWith('every') ? startCpuHogs() : undefined;
  if (hogs) await sleep(500);
  try {
    const backToBack = await measure(0);
    const afterSleep = [];
    for (const sleepMs of SLEEPS_MS) {
      const micros = await measure(sleepMs);
      afterSleep.push({ sleepMs, micros: round(micros, 0), ratio: round(micros / backToBack, 2) });
    }
    rows.push({ condition, backToBackMicros: round(backToBack, 0), afterSleep });
  } finally {
    hogs?.kill();
  }
}

const table = [
  `| one unit of work (2 ECDSA signatures, 10 JSON round trips), median of ${UNITS} | back to back | ${SLEEPS_MS.map((ms) => `after ${ms} ms asleep`).join(' | ')} |`,
  `|---|---|${SLEEPS_MS.map(() => '---|').join('')}`,
  ...rows.map(
    (r) =>
      `| ${r.condition} | ${r.backToBackMicros} µs | ${r.afterSleep.map((s) => `${s.micros} µs (${s.ratio} ×)`).join(' | ')} |`,
  ),
  '',
  `CPU time of the measuring process; ${availableParallelism()} CPUs; the busy case runs ${availableParallelism() * 2} spinning threads in another process.`,
].join('\n');
await writeResults('wakeup', { units: UNITS, rows }, table);
