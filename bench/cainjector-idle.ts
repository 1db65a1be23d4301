import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtins } from '@certkit/runtime';
import { parse as parseYaml } from 'yaml';
import {
  createNamespace,
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { flag, median, writeResults } from './lib.ts';
import { staleBuilds } from '../scripts/build.ts';

/**
 * The idle cainjector's memory (docs/adr/1880): `certkit cainjector` as a process of its own, started as
 * deploy/deployment.yaml starts the controller (same node flags and malloc settings), on a cluster holding
 * --secrets=N Secrets (default 2000; it watches all of them, as metadata) and one annotated webhook
 * configuration it injects into at start; beside it `certkit controller` on the same cluster and a bare `node`
 * (the floor). Both read the cluster's kubeconfig written as JSON, so neither loads a YAML library, as in a pod
 * (bench:idle's shipped-json-kubeconfig). And `certkit up` on an empty data dir of its own with its in-process cainjector and with
 * `--cainjector=false`: what the cainjector adds to the one-process setup. RSS from /proc (the mean of samples
 * over 5 s, 20 s after start), variants interleaved, --rounds times (default 3), medians reported.
 *
 * Usage: npm run bench:cainjector-idle [-- --rounds=3 --secrets=2000 --variants=a,b --results=NAME]
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'packages/cli/bin/certkit.js');
const ROUNDS = Number(flag('rounds') ?? 3);
const SECRETS = Number(flag('secrets') ?? 2000);
const RESULTS = flag('results') ?? 'cainjector-idle';
const SETTLE_MS = 20_000;
const WINDOW_MS = 5_000;
const MB = 1e6;

interface Variant {
  name: string;
  what: string;
  /** The command line after `node`; `dataDir` is a fresh directory for `up`. */
  args(kubeconfig: string, dataDir: string): string[];
}

const cacheDir = await mkdtemp(join(tmpdir(), 'certkit-cainjector-bench-cache-'));
const shipped = (command: string[]) => [...SHIPPED_CONTROLLER_NODE_ARGS, BIN, ...command];

const ALL: Variant[] = [
  {
    name: 'bare-node',
    what: 'node -e "setInterval(() => {}, 1000)" (the floor)',
    args: () => ['-e', 'setInterval(() => {}, 1000)'],
  },
  {
    name: 'cainjector',
    what: 'certkit cainjector, shipped flags and environment, warm compile cache',
    args: (k) =>
      shipped(['cainjector', '--kubeconfig', k, '--leader-elect=false', '--metrics-listen-address=0']),
  },
  {
    name: 'cainjector-no-crds',
    what: 'the same with --enable-customresourcedefinitions-injectable=false (no CRD informer)',
    args: (k) =>
      shipped([
        'cainjector',
        '--kubeconfig',
        k,
        '--leader-elect=false',
        '--metrics-listen-address=0',
        '--enable-customresourcedefinitions-injectable=false',
      ]),
  },
  {
    name: 'controller',
    what: 'certkit controller on the same cluster, shipped flags and environment, warm compile cache',
    args: (k) =>
      shipped(['controller', '--kubeconfig', k, '--leader-elect=false', '--metrics-bind-address=0']),
  },
  {
    name: 'up',
    what: 'certkit up (API server, controller and cainjector) on an empty data dir of its own',
    args: (_k, d) => [BIN, 'up', '--data-dir', d, '--port', '0'],
  },
  {
    name: 'up-no-cainjector',
    what: 'certkit up --cainjector=false on an empty data dir of its own',
    args: (_k, d) => [BIN, 'up', '--data-dir', d, '--port', '0', '--cainjector=false'],
  },
];
const wanted = flag('variants')?.split(',');
const VARIANTS = ALL.filter((v) => !wanted || wanted.includes(v.name));

async function rss(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) * 1024;
}

/** Runs a variant for `ms`; with `sample`, its mean RSS over the window at the end (MB). */
async function run(variant: Variant, kubeconfig: string, sample: boolean, ms = SETTLE_MS): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), 'certkit-cainjector-bench-up-'));
  const child = spawn(process.execPath, variant.args(kubeconfig, dataDir), {
    stdio: ['ignore', 'ignore', 'inherit'],
    // The compiled dist/, as production runs it (the npm script's NODE_OPTIONS set the source condition).
    env: { ...process.env, NODE_OPTIONS: '', NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await new Promise((r) => {
      const timer = setTimeout(r, ms);
      interrupted.signal.addEventListener('abort', () => (clearTimeout(timer), r(undefined)), { once: true });
    });
    if (interrupted.signal.aborted) throw new Error('interrupted');
    if (child.exitCode !== null) throw new Error(`${variant.name} exited with ${child.exitCode}`);
    if (!sample) return 0;
    const samples: number[] = [];
    const until = Date.now() + WINDOW_MS;
    while (Date.now() < until) {
      samples.push(await rss(child.pid!));
      await new Promise((r) => setTimeout(r, 200));
    }
    return samples.reduce((a, b) => a + b, 0) / samples.length / MB;
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The kubeconfig as JSON beside it (the same data). */
function jsonKubeconfig(kubeconfig: string): string {
  const json = `${kubeconfig}.json`;
  writeFileSync(json, JSON.stringify(parseYaml(readFileSync(kubeconfig, 'utf8'))));
  return json;
}

const stale = staleBuilds();
if (stale.length > 0) throw new Error(`stale or missing build (${stale.join(', ')}): run npm run build`);
const cluster = await startCluster();
const kubeconfig = jsonKubeconfig(cluster.kubeconfigPath);
// Stopped early (Ctrl-C), the cluster and the temporary directories go too.
const interrupted = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => interrupted.abort());
const byVariant = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
try {
  const ns = 'cainjector-bench';
  await createNamespace(cluster, ns);
  const secrets = cluster.admin.resource(builtins.secrets);
  const ca = await readFile(join(cluster.server.dataDir, 'pki', 'ca.crt'));
  for (let i = 0; i < SECRETS; i++) {
    await secrets.create(ns, {
      metadata: { name: `s-${i}`, labels: { app: `app-${i}` } },
      data: { key: 'dmFsdWU=' },
    });
  }
  await secrets.create(ns, {
    metadata: { name: 'webhook-ca', annotations: { 'cert-manager.io/allow-direct-injection': 'true' } },
    data: { 'ca.crt': ca.toString('base64') },
  });
  await cluster.admin
    .resource({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'validatingwebhookconfigurations',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
    })
    .create(undefined, {
      metadata: {
        name: 'bench',
        annotations: { 'cert-manager.io/inject-ca-from-secret': `${ns}/webhook-ca` },
      },
      webhooks: [
        {
          name: 'bench.example.com',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          clientConfig: { url: 'https://127.0.0.1:1/validate' },
          rules: [
            { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['x'] },
          ],
        },
      ],
    } as never);
  process.stderr.write(
    `[bench:cainjector-idle] ${SECRETS} Secrets and one annotated webhook configuration\n`,
  );
  // Fill the compile cache for every command before measuring.
  for (const v of VARIANTS.filter((x) => x.name !== 'bare-node')) await run(v, kubeconfig, false, 8_000);
  for (let r = 0; r < ROUNDS && !interrupted.signal.aborted; r++) {
    for (const v of VARIANTS) {
      if (interrupted.signal.aborted) break;
      const mb = await run(v, kubeconfig, true);
      process.stderr.write(`[bench:cainjector-idle] round ${r + 1}: ${v.name} ${mb.toFixed(1)} MB\n`);
      byVariant.get(v.name)!.push(mb);
    }
  }
} finally {
  await cluster.stop();
  await rm(cacheDir, { recursive: true, force: true });
}

const rows = VARIANTS.map((v) => ({
  variant: v.name,
  what: v.what,
  medianRssMB: round(median(byVariant.get(v.name)!)),
  rssMB: byVariant.get(v.name)!.map((x) => round(x)),
}));
const med = (name: string) => rows.find((r) => r.variant === name)?.medianRssMB;
const upDelta =
  med('up') !== undefined && med('up-no-cainjector') !== undefined
    ? round(med('up')! - med('up-no-cainjector')!)
    : undefined;
const table = [
  '| idle process (RSS from /proc, MB = 10⁶ bytes) | median RSS | rounds |',
  '|---|---|---|',
  ...rows.map((r) => `| ${r.variant}: ${r.what} | ${r.medianRssMB} | ${r.rssMB.join(', ')} |`),
  '',
  ...(upDelta !== undefined
    ? [`\`up\` with its cainjector minus \`up --cainjector=false\`: ${upDelta} MB.`, '']
    : []),
  `The cluster of \`cainjector\` and \`controller\` held ${SECRETS} Secrets and one webhook configuration annotated inject-ca-from-secret (injected at start). RSS: the mean of samples over ${WINDOW_MS / 1000} s, ${SETTLE_MS / 1000} s after start; ${ROUNDS} rounds, variants interleaved; ${availableParallelism()} CPUs.`,
].join('\n');
await writeResults(
  RESULTS,
  {
    date: new Date().toISOString(),
    rounds: ROUNDS,
    secrets: SECRETS,
    upCAInjectorMB: upDelta,
    variants: rows,
  },
  table,
);
