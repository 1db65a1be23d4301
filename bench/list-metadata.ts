import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SqliteStorage } from '../packages/apiserver/src/storage/sqlite.ts';
import { seedNamespace, seedSecrets } from '../packages/testenv/src/apiserver/seed.ts';
import { Client, median, rssMiB, startServerProcess, waitReadyz, writeResults } from './lib.ts';

/**
 * LIST of every Secret as PartialObjectMetadataList (issue 19: under 100 ms at 10,000 certificate Secrets), and
 * the API server's RSS, against a checkout from before the change in one run (the machine is noisy: compare
 * within a run).
 *
 * Per count, one data dir is seeded straight into storage with certificate Secrets as certkit writes them
 * (type kubernetes.io/tls; tls.crt, tls.key and ca.crt, ~3.8 KB; cert-manager's labels and annotations), and a
 * fresh `certkit apiserver` of each checkout is started on a copy of it. Each then answers, --rounds times
 * each (the first call of each kind reported apart, as it may build what later calls reuse):
 *
 *   metadata        LIST /api/v1/secrets as PartialObjectMetadataList, no resourceVersion (a consistent
 *                   read: what bench:scale, curl and a plain client send; from storage before ADR 1104, from
 *                   the watch cache once current after it)
 *   metadata rv=0   the same with resourceVersion=0 (from the watch cache: what an informer sends)
 *   full            LIST /api/v1/secrets as SecretList, no resourceVersion, for reference
 *
 * Time is from the request to the whole body read. RSS (whole process, /proc VmRSS) is read once the server is
 * ready and settled, and again after all the lists (the median of 5 readings over a second each time). Every
 * body's items of a kind must be the same bytes in both checkouts (SHA-256), and the metadata lists must hold
 * every Secret's metadata exactly as its full object has it.
 *
 * Usage: npm run bench:list-metadata -- --baseline=/path/to/checkout-before [--counts=1000,5000,10000]
 *        [--rounds=15]
 * The baseline checkout needs its own node_modules (e.g. `git archive` of the earlier commit plus `npm ci`).
 */

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const BASELINE = flag('baseline');
const COUNTS = (flag('counts') ?? '1000,5000,10000').split(',').map(Number);
const ROUNDS = Number(flag('rounds') ?? 15);
const NS = 'bench';
const TARGET_MS = 100;
const SETTLE_MS = 3000;
const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

const run = promisify(execFile);
const log = (msg: string) => process.stderr.write(`[bench:list-metadata] ${msg}\n`);
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** A PEM block of `bytes` random bytes, as the base64 of a Secret's data holds it. */
function pem(label: string, bytes: number): string {
  const body = randomBytes(bytes).toString('base64').replace(/.{64}/g, '$&\n');
  return Buffer.from(`-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`).toString('base64');
}

/** `count` Secrets of the size and shape certkit's issuing controller writes for an ECDSA P-256 Certificate. */
async function seed(dir: string, count: number): Promise<void> {
  const storage = SqliteStorage.open(join(dir, 'state.db'));
  try {
    await seedNamespace(storage, NS);
    // One chain for all: the data's size is what matters here, not its variety.
    await seedSecrets(storage, NS, count, {
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': pem('CERTIFICATE', 1000),
        'tls.key': pem('EC PRIVATE KEY', 121),
        'ca.crt': pem('CERTIFICATE', 700),
      },
      labels: (i) => ({ 'controller.cert-manager.io/fao': 'true', app: `app-${i % 50}` }),
      annotations: {
        'cert-manager.io/certificate-name': 'web',
        'cert-manager.io/common-name': 'web.example.com',
        'cert-manager.io/alt-names': 'web.example.com,www.example.com',
        'cert-manager.io/ip-sans': '',
        'cert-manager.io/uri-sans': '',
        'cert-manager.io/issuer-name': 'ca-issuer',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-group': 'cert-manager.io',
      },
    });
  } finally {
    await storage.close();
  }
}

type Kind = 'metadata' | 'metadataCache' | 'full';
const KINDS: { kind: Kind; query: string; accept: string; label: string }[] = [
  {
    kind: 'metadata',
    query: '',
    accept: METADATA_ACCEPT,
    label: 'metadata LIST, no resourceVersion (consistent)',
  },
  {
    kind: 'metadataCache',
    query: '?resourceVersion=0',
    accept: METADATA_ACCEPT,
    label: 'metadata LIST, resourceVersion=0 (watch cache)',
  },
  { kind: 'full', query: '', accept: 'application/json', label: 'full LIST (from storage), for reference' },
];

interface Timing {
  firstMs: number;
  medianMs: number;
  p95Ms: number;
  bytes: number;
  sha256: string;
}

interface Figures {
  rssReadyMiB: number;
  rssAfterMiB: number;
  lists: Record<Kind, Timing>;
}

/** RSS sampled a few times over a second, the median: one reading can catch a GC in progress. */
async function steadyRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(await rssMiB(pid));
    await new Promise((r) => setTimeout(r, 250));
  }
  return round1(median(samples));
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
}

interface ListBody {
  kind: string;
  items: { metadata: Record<string, unknown> }[];
}

/** Every Secret's metadata in the metadata list is exactly its full object's. */
function checkMetadata(metadataText: string, fullText: string, count: number): void {
  const metadata = JSON.parse(metadataText) as ListBody;
  const full = JSON.parse(fullText) as ListBody;
  if (metadata.kind !== 'PartialObjectMetadataList') throw new Error(`metadata LIST gave a ${metadata.kind}`);
  const ours = full.items.filter((s) => s.metadata.namespace === NS);
  if (ours.length !== count) throw new Error(`full LIST holds ${ours.length} of ${count} Secrets`);
  if (metadata.items.length !== full.items.length)
    throw new Error('metadata and full LISTs differ in length');
  full.items.forEach((s, i) => {
    const a = JSON.stringify(metadata.items[i].metadata);
    const b = JSON.stringify(s.metadata);
    if (a !== b) throw new Error(`metadata of item ${i} differs:\n${a}\n${b}`);
  });
}

async function measure(dataDir: string, count: number, root: string | undefined): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-bench-list-metadata-'));
  await run('cp', ['-a', `${dataDir}/.`, dir]);
  const server = await startServerProcess(dir, [], { root });
  const client = new Client(server, 1);
  try {
    await waitReadyz(client);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const rssReadyMiB = await steadyRss(server.pid);
    const lists = {} as Record<Kind, Timing>;
    const texts = {} as Record<Kind, string>;
    for (const { kind, query, accept } of KINDS) {
      const times: number[] = [];
      let sha256 = '';
      for (let r = 0; r <= ROUNDS; r++) {
        const started = performance.now();
        const res = await client.call('GET', `/api/v1/secrets${query}`, undefined, accept);
        times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`LIST ${kind}: ${res.status} ${res.text.slice(0, 200)}`);
        // The items' bytes: the list's own resourceVersion is the revision its source was current to, which
        // may differ between two servers on the same data (a cache told of later writes elsewhere says so).
        const hash = createHash('sha256')
          .update(res.text.slice(res.text.indexOf('"items":[')))
          .digest('hex');
        if (sha256 && hash !== sha256) throw new Error(`LIST ${kind} gave different bodies`);
        sha256 = hash;
        texts[kind] = res.text;
      }
      const rest = times.slice(1);
      lists[kind] = {
        firstMs: round1(times[0]),
        medianMs: round1(median(rest)),
        p95Ms: round1(p95(rest)),
        bytes: Buffer.byteLength(texts[kind]),
        sha256,
      };
    }
    checkMetadata(texts.metadata, texts.full, count);
    checkMetadata(texts.metadataCache, texts.full, count);
    const rssAfterMiB = await steadyRss(server.pid);
    return { rssReadyMiB, rssAfterMiB, lists };
  } finally {
    client.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('--baseline=<checkout before the change> is required');
  const git = (args: string[]) => execFileSync('git', ['-C', BASELINE, ...args], { encoding: 'utf8' }).trim();
  const baselineCommit = `${git(['rev-parse', '--short', 'HEAD'])} (${git(['log', '-1', '--format=%s'])})`;
  const results: { count: number; baseline: Figures; current: Figures }[] = [];
  for (const [n, count] of COUNTS.entries()) {
    const dataDir = await mkdtemp(join(tmpdir(), 'certkit-bench-list-metadata-seed-'));
    try {
      const seeded = performance.now();
      await seed(dataDir, count);
      log(`seeded ${count} Secrets in ${round1((performance.now() - seeded) / 1000)} s`);
      // Alternate which goes first, so that neither always runs on a warmer machine.
      const order = n % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
      const figures = {} as Record<'baseline' | 'current', Figures>;
      for (const which of order) {
        figures[which] = await measure(dataDir, count, which === 'baseline' ? BASELINE : undefined);
        log(`${count} ${which}: ${JSON.stringify(figures[which])}`);
      }
      for (const { kind } of KINDS)
        if (figures.baseline.lists[kind].sha256 !== figures.current.lists[kind].sha256)
          throw new Error(`${kind} LIST of ${count} Secrets: the body differs from the baseline's`);
      results.push({ count, ...figures });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const header = results.map((r) => `${r.count.toLocaleString('en')}`).join(' | ');
  const cell = (baseline: number, current: number, unit: string) =>
    `${baseline} → **${current}** ${unit} (×${round2(current / baseline)})`;
  const rows: string[] = [];
  for (const { kind, label } of KINDS) {
    const target = kind === 'full' ? '' : ` (target < ${TARGET_MS} ms)`;
    rows.push(
      `| ${label}, median${target} | ${results
        .map((r) => {
          const ok = kind === 'full' ? '' : r.current.lists[kind].medianMs < TARGET_MS ? ' ✓' : ' ✗';
          return cell(r.baseline.lists[kind].medianMs, r.current.lists[kind].medianMs, 'ms') + ok;
        })
        .join(' | ')} |`,
      `| ${label}, p95 | ${results.map((r) => cell(r.baseline.lists[kind].p95Ms, r.current.lists[kind].p95Ms, 'ms')).join(' | ')} |`,
      `| ${label}, first call | ${results.map((r) => cell(r.baseline.lists[kind].firstMs, r.current.lists[kind].firstMs, 'ms')).join(' | ')} |`,
    );
  }
  rows.push(
    `| API server RSS, ready (MiB) | ${results.map((r) => cell(r.baseline.rssReadyMiB, r.current.rssReadyMiB, '')).join(' | ')} |`,
    `| API server RSS, after the lists (MiB) | ${results.map((r) => cell(r.baseline.rssAfterMiB, r.current.rssAfterMiB, '')).join(' | ')} |`,
    `| metadata LIST body | ${results.map((r) => `${round1(r.current.lists.metadata.bytes / 1e6)} MB`).join(' | ')} |`,
    `| full LIST body | ${results.map((r) => `${round1(r.current.lists.full.bytes / 1e6)} MB`).join(' | ')} |`,
  );
  const table = [
    `LIST of all Secrets, baseline → this branch (Secrets: kubernetes.io/tls, ~3.8 KB each; ${ROUNDS} calls after a first; baseline ${baselineCommit})`,
    '',
    `| Secrets | ${header} |`,
    `|---|${results.map(() => '---').join('|')}|`,
    ...rows,
    '',
    '`certkit apiserver` (SQLite) as a process of its own, on a copy of a data dir seeded straight into storage;',
    "one HTTPS client, each list read whole before the next. Every body's items are byte-identical to the",
    "baseline's (SHA-256), and each metadata item equals its full object's metadata. RSS: whole process, /proc",
    'VmRSS.',
  ].join('\n');
  await writeResults(
    'list-metadata',
    { date: new Date().toISOString(), baselineCommit, rounds: ROUNDS, results },
    table,
  );
}

await main();
