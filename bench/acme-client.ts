/**
 * bench:acme-client — the ACME client choice (docs/adr/1001): CPU and wall time per certificate order
 * against Pebble, certkit's RFC 8555 layer on jose + undici versus acme-client 5.4.0, in one process, rounds
 * alternating ABBA so that machine noise falls on both alike.
 *
 * An order here is what the Order and Challenge controllers do for one name: newOrder, get the
 * authorization, accept its http-01 challenge (Pebble runs with PEBBLE_VA_ALWAYS_VALID), poll it, poll the
 * order to ready, finalize with a CSR, poll to valid, download the chain. Both clients poll every 100 ms at
 * first. The CSR is made once, outside the timings. Pebble's nonce rejection is off here (it is on in the
 * tests), so that both clients do the same number of requests.
 *
 * acme-client is not a dependency of the project: install it anywhere and point ACME_CLIENT_DIR at that
 * directory (`npm install --prefix /tmp/acme-eval acme-client@5.4.0`, then
 * `ACME_CLIENT_DIR=/tmp/acme-eval npm run bench:acme-client`). Without it only certkit's client runs.
 */

import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent as HttpsAgent } from 'node:https';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { AcmeClient, loadAccountKey } from '../packages/certificates/src/acme/client/index.ts';
import { startPebble } from '../packages/testenv/src/pebble/pebble.ts';
import { buildCertificateRequest, generatePrivateKey } from '../packages/certificates/src/pki/index.ts';
import { decodePemBlocks } from '../packages/certificates/src/pki/pem.ts';
import { median, writeResults } from './lib.ts';

const ORDERS_PER_ROUND = Number(process.env.ORDERS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const NAME = 'bench.example.test';

interface Runner {
  name: string;
  order(): Promise<string>;
  close(): Promise<void>;
}

/** Pebble's user+system CPU seconds, from /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s). */
async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const pebble = await startPebble({ alwaysValid: true, nonceRejectPercent: 0, authzReusePercent: 0 });
const csrKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
const csrPem = await buildCertificateRequest({ dnsNames: [NAME] }, csrKey);
const csrDer = decodePemBlocks(csrPem)[0].der;
/** A fresh account key per client: acme-client answers an existing account with an update Pebble refuses. */
const newAccountKeyPem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    format: 'pem',
    type: 'pkcs8',
  }) as string;

async function certkitRunner(): Promise<Runner> {
  const client = new AcmeClient({
    directoryUrl: pebble.directoryUrl,
    caBundle: pebble.caBundle,
    accountKey: await loadAccountKey(newAccountKeyPem()),
  });
  await client.registerAccount({ termsOfServiceAgreed: true });
  return {
    name: 'certkit (jose + undici)',
    async order() {
      const order = await client.newOrder({ identifiers: [{ type: 'dns', value: NAME }] });
      for (const url of order.authorizations) {
        const authz = await client.getAuthorization(url);
        const challenge = authz.challenges.find((c) => c.type === 'http-01');
        if (authz.status !== 'valid' && challenge) {
          await client.acceptChallenge(challenge.url);
          await client.waitForAuthorization(url);
        }
      }
      const ready = await client.waitForOrder(order.url);
      await client.finalizeOrder(ready.finalize, csrDer, order.url);
      const valid = await client.waitForOrder(order.url);
      return client.certificateChain(valid.certificate ?? '');
    },
    close: () => client.close(),
  };
}

interface AcmeClientModule {
  Client: new (options: Record<string, unknown>) => {
    createAccount(data: Record<string, unknown>): Promise<unknown>;
    createOrder(data: Record<string, unknown>): Promise<{ url: string }>;
    getAuthorizations(
      order: unknown,
    ): Promise<Array<{ status: string; challenges: Array<{ type: string }> }>>;
    completeChallenge(challenge: unknown): Promise<unknown>;
    waitForValidStatus<T>(item: T): Promise<T>;
    finalizeOrder(order: unknown, csr: string): Promise<unknown>;
    getCertificate(order: unknown): Promise<string>;
  };
  axios: { defaults: { httpsAgent?: unknown } };
}

async function acmeClientRunner(dir: string): Promise<Runner> {
  const acme = createRequire(join(dir, 'package.json'))('acme-client') as AcmeClientModule;
  acme.axios.defaults.httpsAgent = new HttpsAgent({ ca: pebble.caBundle, keepAlive: true });
  const client = new acme.Client({
    directoryUrl: pebble.directoryUrl,
    accountKey: newAccountKeyPem(),
    backoffMin: 100,
    backoffMax: 5000,
  });
  await client.createAccount({ termsOfServiceAgreed: true });
  return {
    name: 'acme-client 5.4.0 (axios + node-forge)',
    async order() {
      const order = await client.createOrder({ identifiers: [{ type: 'dns', value: NAME }] });
      for (const authz of await client.getAuthorizations(order)) {
        const challenge = authz.challenges.find((c) => c.type === 'http-01');
        if (authz.status !== 'valid' && challenge) {
          await client.completeChallenge(challenge);
          await client.waitForValidStatus(challenge);
        }
      }
      await client.waitForValidStatus(order);
      await client.finalizeOrder(order, csrPem);
      return client.getCertificate(order);
    },
    close: async () => {},
  };
}

const runners = [await certkitRunner()];
if (process.env.ACME_CLIENT_DIR) runners.push(await acmeClientRunner(process.env.ACME_CLIENT_DIR));

// One warm-up order each, so module loading and connection set-up stay out of the figures.
for (const runner of runners) await runner.order();

const samples = new Map<string, { cpuMs: number[]; wallMs: number[]; pebbleCpuMs: number[] }>();
for (const runner of runners) samples.set(runner.name, { cpuMs: [], wallMs: [], pebbleCpuMs: [] });
for (let round = 0; round < ROUNDS; round++) {
  // ABBA: A B, B A, A B, …
  const order = round % 2 === 0 ? runners : [...runners].reverse();
  for (const runner of order) {
    const cpu = process.cpuUsage();
    const pebbleCpu = await processCpuSeconds(pebble.pid);
    const started = performance.now();
    for (let i = 0; i < ORDERS_PER_ROUND; i++) {
      const chain = await runner.order();
      if (!chain.includes('BEGIN CERTIFICATE')) throw new Error(`${runner.name}: no certificate`);
    }
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const s = samples.get(runner.name)!;
    s.cpuMs.push((used.user + used.system) / 1000 / ORDERS_PER_ROUND);
    s.wallMs.push(wall / ORDERS_PER_ROUND);
    s.pebbleCpuMs.push((((await processCpuSeconds(pebble.pid)) - pebbleCpu) * 1000) / ORDERS_PER_ROUND);
  }
}
for (const runner of runners) await runner.close();
await pebble.stop();

const rows = runners.map((r) => {
  const s = samples.get(r.name)!;
  return {
    client: r.name,
    cpuMsPerOrder: Number(median(s.cpuMs).toFixed(2)),
    wallMsPerOrder: Number(median(s.wallMs).toFixed(1)),
    pebbleCpuMsPerOrder: Number(median(s.pebbleCpuMs).toFixed(1)),
  };
});
let ratio = '';
if (rows.length === 2) {
  const a = samples.get(runners[0].name)!;
  const b = samples.get(runners[1].name)!;
  const perRound = a.cpuMs.map((v, i) => v / b.cpuMs[i]);
  ratio =
    `\ncertkit / acme-client client CPU, median of per-round ratios: ${median(perRound).toFixed(2)} ` +
    `(per round: ${perRound.map((v) => v.toFixed(2)).join(', ')}).`;
}
const table = [
  `| ${ORDERS_PER_ROUND} orders × ${ROUNDS} rounds, ABBA | client CPU ms / order | wall ms / order | Pebble CPU ms / order |`,
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.client} | ${r.cpuMsPerOrder} | ${r.wallMsPerOrder} | ${r.pebbleCpuMsPerOrder} |`),
  '',
  `Medians over the rounds. One order = newOrder, authorization, accept http-01 (PEBBLE_VA_ALWAYS_VALID), ` +
    `polls, finalize (ECDSA P-256 CSR made once), chain download; ECDSA P-256 account key; Pebble ` +
    `2.4.0 on loopback with nonce rejection and authz reuse off; 2 CPUs shared; Node ${process.version}.` +
    ratio,
].join('\n');
await writeResults('acme-client', { ordersPerRound: ORDERS_PER_ROUND, rounds: ROUNDS, rows }, table);
