import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ensureServingCertificates } from '@certkit/apiserver/security/certificates';
import { flag, median, writeResults } from './lib.ts';

/**
 * Two ways the API server could write less, measured on Node's own machinery before changing the server
 * (ADR 1195):
 *
 * - Watch events of one turn, written to a chunked HTTPS response: one `res.write` per event under a cork
 *   held for the turn (what http/watch.ts does), against one `res.write` of the turn's events joined. The
 *   watchers are TLS connections in a child process that only read, so this process's CPU is the server's.
 * - The SQLite store's message to its writer thread (one per group commit): thread CPU of building and
 *   posting a group as the store sends it (rows of [id, name, ..., value]) against the values joined into one
 *   string, and against an empty message (the wake-up alone).
 * - The CSR check a CertificateRequest create pays at admission (certificates/api/validation/csr.ts): a P-256
 *   key parsed from its SPKI and a signature verified with it, against the DER handed to verify directly.
 *
 * Variants alternate within each round (the watch's two in the other order every other round); the table
 * gives the median over rounds.
 *
 * Usage: npm run bench:apiserver-write-paths [-- --rounds=5 --ticks=20000 --results=NAME]
 */

const ROUNDS = Number(flag('rounds') ?? 5);
const TICKS = Number(flag('ticks') ?? 20000);
const WATCHERS = 4;
const GROUPS = 5000;

/** A Secret-sized watch event line (a certificate Secret of an ECDSA issuance is ~2.4 KB). */
const EVENT = `${JSON.stringify({
  type: 'MODIFIED',
  object: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cert-1', namespace: 'bench', resourceVersion: '12345' },
    data: { 'tls.crt': 'Q'.repeat(1200), 'tls.key': 'K'.repeat(300) },
  },
})}\n`;

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function threadCpuUs(): number {
  const u = process.threadCpuUsage();
  return u.user + u.system;
}

/** The readers: WATCHERS TLS connections that send one GET each and read whatever comes. */
const READERS = `
import { connect } from 'node:tls';
const [port, count] = process.argv.slice(1).map(Number);
for (let i = 0; i < count; i++) {
  const s = connect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () =>
    s.write('GET /watch HTTP/1.1\\r\\nHost: bench\\r\\n\\r\\n'));
  s.on('data', () => {});
  s.on('error', () => process.exit(0));
}
`;

async function watchWrites(
  tls: { certPem: string; keyPem: string },
  perTurn: number,
  reversed: boolean,
): Promise<Record<string, number>> {
  const responses: ServerResponse[] = [];
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    responses.push(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const readers = spawn(
    process.execPath,
    ['--input-type=module', '-e', READERS, String((server.address() as AddressInfo).port), String(WATCHERS)],
    { stdio: 'ignore' },
  );
  while (responses.length < WATCHERS) await new Promise((r) => setTimeout(r, 10));

  const variants: Record<string, (res: ServerResponse) => void> = {
    'one res.write per event, corked for the turn (watch.ts)': (res) => {
      res.cork();
      for (let k = 0; k < perTurn; k++) res.write(EVENT);
      process.nextTick(() => res.uncork());
    },
    "one res.write of the turn's events joined": (res) => {
      const parts: string[] = [];
      for (let k = 0; k < perTurn; k++) parts.push(EVENT);
      process.nextTick(() => res.write(parts.length === 1 ? parts[0] : parts.join('')));
    },
  };
  const results: Record<string, number> = {};
  // Every other round the other variant goes first, so that neither always meets the connections fresh.
  const order = Object.entries(variants);
  if (reversed) order.reverse();
  for (const [name, write] of order) {
    const before = cpuMs();
    for (let t = 0; t < TICKS; t++) {
      for (const res of responses) write(res);
      await new Promise((r) => setImmediate(r));
      // Let the readers catch up now and then, so that no backlog builds and every write reaches the socket.
      if (t % 200 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    results[name] = ((cpuMs() - before) * 1000) / (TICKS * perTurn * WATCHERS);
  }
  readers.kill();
  server.closeAllConnections();
  server.close();
  return results;
}

/** The writer thread's stand-in: answers every message, as sqlite-writer-thread.ts does. */
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', () => parentPort.postMessage(1));
`;

async function writerMessages(): Promise<Record<string, number>> {
  const worker = new Worker(ECHO, { eval: true });
  const value = () =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cert-1', namespace: 'bench', labels: { a: 'b' } },
      data: { 'tls.crt': 'Q'.repeat(1200), 'tls.key': 'K'.repeat(300) },
    });
  // A group of 8 rows (ADR 1160 counted ~8 writes per commit group in an issuance), fresh strings each.
  const group = (): unknown[][] =>
    Array.from({ length: 8 }, (_, i) => [
      1000 + i,
      `/registry/secrets/bench/cert-${i}`,
      1,
      0,
      1000 + i,
      0,
      value(),
    ]);
  const variants: Record<string, (rows: unknown[][]) => unknown> = {
    'empty message (the wake-up alone)': () => ({ id: 1 }),
    'a group of 8 rows as the store sends it': (rows) => ({ id: 1, request: { kind: 'group', rows } }),
    "the group's values joined into one string": (rows) => ({
      id: 1,
      request: { kind: 'group', rows: rows.map((r) => r[6]).join('\u0000') },
    }),
  };
  const results: Record<string, number> = {};
  for (const [name, make] of Object.entries(variants)) {
    const groups = Array.from({ length: GROUPS }, group);
    let answered = 0;
    const all = Promise.withResolvers<void>();
    const onAnswer = () => {
      if (++answered === GROUPS) all.resolve();
    };
    worker.on('message', onAnswer);
    let spent = 0;
    for (let i = 0; i < GROUPS; i++) {
      // Building the message counts: a joined string is a copy the rows do not need.
      const start = threadCpuUs();
      worker.postMessage(make(groups[i]));
      spent += threadCpuUs() - start;
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await all.promise;
    worker.off('message', onAnswer);
    results[name] = spent / GROUPS;
  }
  await worker.terminate();
  return results;
}

/** CPU µs per call of each way to check a P-256 signature over a CSR-sized body, after a warm-up. */
function csrChecks(): Record<string, number> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const signed = Buffer.alloc(300, 7);
  const signature = sign('sha256', signed, privateKey);
  const der = { key: spki, format: 'der', type: 'spki' } as const;
  const variants: Record<string, () => unknown> = {
    'createPublicKey of the SPKI': () => createPublicKey(der),
    'verify with a parsed key': (() => {
      const key = createPublicKey(der);
      return () => verify('sha256', signed, key, signature);
    })(),
    'createPublicKey, then verify (csr.ts)': () => verify('sha256', signed, createPublicKey(der), signature),
    'verify handed the DER': () => verify('sha256', signed, der, signature),
  };
  const results: Record<string, number> = {};
  for (const [name, run] of Object.entries(variants)) {
    for (let i = 0; i < 500; i++) run();
    const before = cpuMs();
    for (let i = 0; i < 5000; i++) run();
    results[name] = ((cpuMs() - before) * 1000) / 5000;
  }
  return results;
}

const UNITS: Record<string, string> = {
  'watch, 1 event per turn': 'process CPU per event',
  'watch, 3 events per turn': 'process CPU per event',
  'writer message': 'main thread CPU per postMessage',
  'CSR check': 'CPU per check',
};

const dir = await mkdtemp(join(tmpdir(), 'bench-write-paths-'));
try {
  const tls = await ensureServingCertificates(dir, ['127.0.0.1']);
  const rounds: Record<string, number>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const one = await watchWrites(tls, 1, round % 2 === 0);
    const three = await watchWrites(tls, 3, round % 2 === 0);
    const messages = await writerMessages();
    const row: Record<string, number> = {};
    for (const [k, v] of Object.entries(one)) row[`watch, 1 event per turn: ${k}`] = v;
    for (const [k, v] of Object.entries(three)) row[`watch, 3 events per turn: ${k}`] = v;
    for (const [k, v] of Object.entries(messages)) row[`writer message: ${k}`] = v;
    for (const [k, v] of Object.entries(csrChecks())) row[`CSR check: ${k}`] = v;
    rounds.push(row);
    process.stderr.write(`[bench:apiserver-write-paths] round ${round}: ${JSON.stringify(row)}\n`);
  }
  const medians = Object.fromEntries(
    Object.keys(rounds[0]).map((k) => [k, Math.round(median(rounds.map((r) => r[k])) * 100) / 100]),
  );
  const table = [
    `| ${ROUNDS} rounds, median (watch: ${WATCHERS} TLS watchers, ${TICKS} turns; writer: ${GROUPS} messages) | µs |`,
    '|---|---|',
    ...Object.entries(medians).map(([k, v]) => `| ${k}, ${UNITS[k.slice(0, k.indexOf(':'))]} | ${v} |`),
  ].join('\n');
  await writeResults(
    flag('results') ?? 'apiserver-write-paths',
    { date: new Date().toISOString(), rounds, medians },
    table,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
