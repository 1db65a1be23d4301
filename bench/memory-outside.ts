import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import {
  createNamespace,
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { throughput } from './lib.ts';

/**
 * The seed scenario of bench:memory measured from outside the process, as an operator (or a Kubernetes memory
 * limit) sees it: `certkit controller` started through the CLI (packages/cli/bin/certkit.js), no --expose-gc,
 * no forced GC, no IPC; its RSS read from /proc. 300 unrelated Secrets of ~1 MB are created, then all
 * relabelled twice (foo=bar, then foo=baz); 8 s after each step the RSS is read (the mean of samples over the
 * ninth second), against the RSS read the same way after the controller had sat idle on the empty cluster
 * for BASELINE_MS. The peak is the highest sample (every 100 ms) from the baseline on.
 *
 * Several ways of starting the process (VARIANTS: node flags, environment) run side by side against the same
 * API server, so they see the same events at the same time and compare within one run.
 */

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'packages/cli/bin/certkit.js');
const MB = 1e6;
const BIG_BYTES = 1_000_000;
const BASELINE_MS = 30_000;
const READ_AFTER_MS = 8_000;

export interface OutsideVariant {
  name: string;
  what: string;
  /** What node runs (default BIN). */
  entry?: string;
  nodeArgs?: string[];
  env?: Record<string, string>;
}

/** What the measurement compares; `shipped` is the controller as deploy/deployment.yaml starts it. */
export const OUTSIDE_VARIANTS: OutsideVariant[] = [
  {
    name: 'shipped',
    what: `certkit controller as deploy/deployment.yaml runs it (node ${SHIPPED_CONTROLLER_NODE_ARGS.join(' ')}, ${Object.entries(
      SHIPPED_CONTROLLER_ENV,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')})`,
    nodeArgs: SHIPPED_CONTROLLER_NODE_ARGS,
    env: SHIPPED_CONTROLLER_ENV,
  },
  { name: 'node-defaults', what: "bin/certkit.js controller with node's own heap and malloc settings" },
  {
    name: 'main-ts',
    what: 'node packages/cli/src/main.ts controller, no compile cache (as measured in issue 19)',
    entry: join(here, '..', 'packages/cli/src/main.ts'),
    env: { NODE_DISABLE_COMPILE_CACHE: '1' },
  },
  {
    name: 'semi-space-1',
    what: 'bin/certkit.js controller, --max-semi-space-size=1 alone',
    nodeArgs: ['--max-semi-space-size=1'],
  },
];

export interface OutsideResult {
  variant: string;
  what: string;
  baselineMB: number;
  /** RSS growth 8 s after each step, against the baseline. */
  createGrowthMB: number;
  relabelGrowthMB: number;
  relabelAgainGrowthMB: number;
  /** Highest sample from the baseline on, less the baseline. */
  peakGrowthMB: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function rss(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) * 1024;
}

interface Running {
  variant: OutsideVariant;
  child: ChildProcess;
  samples: { at: number; rss: number }[];
  timer: NodeJS.Timeout;
}

async function startController(variant: OutsideVariant, kubeconfig: string): Promise<Running> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(variant.nodeArgs ?? []),
      variant.entry ?? BIN,
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--leader-elect=false',
      '--kube-api-qps=-1',
      `--metrics-bind-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...variant.env } },
  );
  const running: Running = {
    variant,
    child,
    samples: [],
    timer: setInterval(() => {
      void rss(child.pid!).then((value) => value && running.samples.push({ at: Date.now(), rss: value }));
    }, 100),
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${variant.name}: certkit controller exited`);
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return running;
    if (Date.now() > deadline) throw new Error(`${variant.name}: not ready within 120 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The mean RSS of the samples taken in the last second. */
function lastSecondMB(r: Running): number {
  const since = Date.now() - 1_000;
  const recent = r.samples.filter((s) => s.at >= since);
  return recent.reduce((a, s) => a + s.rss, 0) / Math.max(1, recent.length) / MB;
}

export async function outsideSeedScenario(
  count: number,
  variants: OutsideVariant[],
  log: (msg: string) => void,
): Promise<OutsideResult[]> {
  const cluster = await startCluster();
  const running: Running[] = [];
  try {
    await createNamespace(cluster, 'helm');
    const secrets = cluster.admin.resource<Secret & KubeObject>(builtins.secrets);
    // One start and stop of each first, so that every variant finds the module compile cache written for its
    // flags, as on any start of an installed certkit but the very first.
    for (const v of variants) {
      const warm = await startController(v, cluster.kubeconfigPath);
      clearInterval(warm.timer);
      warm.child.kill('SIGTERM');
      await new Promise((r) => warm.child.once('exit', r));
    }
    for (const v of variants) running.push(await startController(v, cluster.kubeconfigPath));
    log(`outside: ${variants.length} controllers ready; idle ${BASELINE_MS / 1000} s for the baseline`);
    await new Promise((r) => setTimeout(r, BASELINE_MS));
    const baseline = running.map(lastSecondMB);
    const from = Date.now();
    const afterStep = async () => {
      await new Promise((r) => setTimeout(r, READ_AFTER_MS + 1_000));
      return running.map(lastSecondMB);
    };

    log(`outside: creating ${count} Secrets of ~1 MB`);
    await throughput(count, 4, async (i) => {
      await secrets.create('helm', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `sh.helm.release.v1.app-${i}.v1`, labels: { owner: 'helm', name: `app-${i}` } },
        type: 'helm.sh/release.v1',
        data: { release: randomBytes(BIG_BYTES).toString('base64') },
      });
    });
    const created = await afterStep();
    const relabel = async (value: string) => {
      log(`outside: relabelling all ${count} (foo=${value})`);
      await throughput(count, 4, async (i) => {
        await secrets.patch('helm', `sh.helm.release.v1.app-${i}.v1`, 'merge', {
          metadata: { labels: { foo: value } },
        });
      });
      return afterStep();
    };
    const relabelled = await relabel('bar');
    const again = await relabel('baz');
    return running.map((r, i) => {
      const peak = Math.max(...r.samples.filter((s) => s.at >= from).map((s) => s.rss)) / MB;
      return {
        variant: r.variant.name,
        what: r.variant.what,
        baselineMB: round(baseline[i]),
        createGrowthMB: round(created[i] - baseline[i]),
        relabelGrowthMB: round(relabelled[i] - baseline[i]),
        relabelAgainGrowthMB: round(again[i] - baseline[i]),
        peakGrowthMB: round(peak - baseline[i]),
      };
    });
  } finally {
    for (const r of running) {
      clearInterval(r.timer);
      r.child.kill('SIGTERM');
      await new Promise((resolve) =>
        r.child.exitCode === null ? r.child.once('exit', resolve) : resolve(null),
      );
    }
    await cluster.stop();
  }
}

export function outsideTable(count: number, results: OutsideResult[]): string {
  const pass = (ok: boolean) => (ok ? '✓' : '✗');
  return [
    `| ${count} unrelated Secrets of ~1 MB, \`certkit controller\` seen from outside (RSS growth from /proc, MB = 10⁶ bytes) | idle RSS | create | relabel | relabel again | peak | target: steady < 5, peak < 10 |`,
    '|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.variant}: ${r.what} | ${r.baselineMB} | ${r.createGrowthMB} | ${r.relabelGrowthMB} | ${r.relabelAgainGrowthMB} | ${r.peakGrowthMB} | ${pass(Math.max(r.createGrowthMB, r.relabelGrowthMB, r.relabelAgainGrowthMB) < 5 && r.peakGrowthMB < 10)} |`,
    ),
    '',
    `Growth ${READ_AFTER_MS / 1000} s after each step against the RSS after ${BASELINE_MS / 1000} s idle on the empty cluster;`,
    'no forced GC. The variants run side by side against one API server.',
  ].join('\n');
}
