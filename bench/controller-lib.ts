import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import { installCrds } from '../packages/certificates/src/controller.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  clusterIssuersRef,
  issuersRef,
} from '../packages/certificates/src/controllers/refs.ts';
import {
  Client,
  type ServerProcess,
  type ServerProcessOptions,
  startServerProcess,
  waitReadyz,
} from './lib.ts';

/** Pieces shared by bench/memory.ts and bench/issuance.ts: a cluster, the controller probe, metrics. */

const here = dirname(fileURLToPath(import.meta.url));

export interface Cluster {
  server: ServerProcess;
  /** Raw HTTPS to the API server (for /metrics). */
  http: Client;
  /** A client without client-side rate limits, for the bench's own writes. */
  admin: KubeClient;
  kubeconfigPath: string;
  stop(): Promise<void>;
}

/**
 * `certkit apiserver` in a fresh data dir, with the cert-manager.io CRDs installed and served. `serverOptions`
 * passes node flags (e.g. `--cpu-prof`) or another checkout to run the server from.
 */
export async function startCluster(serverOptions: ServerProcessOptions = {}): Promise<Cluster> {
  const server = await startServerProcess(undefined, [], serverOptions);
  const http = new Client(server, 8);
  await waitReadyz(http);
  const kubeconfigPath = join(server.dataDir, 'kubeconfig');
  const admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfigPath })), qps: -1 });
  await installCrds(admin);
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef]) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        await admin.resource(ref).list(undefined, { limit: 1 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  return {
    server,
    http,
    admin,
    kubeconfigPath,
    async stop() {
      admin.close();
      http.close();
      await server.stop();
    },
  };
}

export async function createNamespace(cluster: Cluster, name: string): Promise<void> {
  await cluster.admin.resource(builtins.namespaces).create(undefined, { metadata: { name } });
}

export interface Probe {
  child: ChildProcess;
  pid: number;
  /** Milliseconds from the process's start to every informer synced. */
  synced: Promise<number>;
  request<T = Record<string, unknown>>(cmd: string, extra?: Record<string, unknown>): Promise<T>;
  /** Asks the probe to stop its manager and exit (what writes a --cpu-prof profile). */
  exit(): Promise<void>;
}

export interface Measurement {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rssMiB: number;
  hwmMiB: number;
}

/**
 * bench/controller-probe.ts, with `certkit controller` flags (--kubeconfig and --leader-elect=false added)
 * and node flags (--expose-gc added).
 */
export function startProbe(kubeconfigPath: string, flags: string[], nodeFlags: string[] = []): Probe {
  const child = fork(
    join(here, 'controller-probe.ts'),
    ['--kubeconfig', kubeconfigPath, '--leader-elect=false', '--metrics-bind-address=0', ...flags],
    { execArgv: ['--expose-gc', ...nodeFlags], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  let next = 0;
  const pending = new Map<number, (body: Record<string, unknown>) => void>();
  let onSynced: (ms: number) => void;
  const synced = new Promise<number>((resolve, reject) => {
    onSynced = resolve;
    child.once('exit', (code, signal) => reject(new Error(`controller probe exited (${code ?? signal})`)));
  });
  synced.catch(() => {});
  child.on('message', (raw) => {
    const msg = raw as { id?: number; type?: string; ms?: number };
    if (msg.type === 'synced') onSynced(msg.ms!);
    else if (msg.id !== undefined) {
      pending.get(msg.id)?.(msg as Record<string, unknown>);
      pending.delete(msg.id);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const request = <T>(cmd: string, extra: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, (body) => (body.error ? reject(new Error(String(body.error))) : resolve(body as T)));
      child.send({ id, cmd, ...extra });
    });
  return {
    child,
    pid: child.pid!,
    synced,
    request,
    async exit() {
      if (child.exitCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.send({ id: next++, cmd: 'exit' });
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Prometheus text → value by series (`name{label="v",…}`, as written). */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

/** Sum of the series of `name` whose labels include every pair of `match`. */
export function sumMetric(metrics: Map<string, number>, name: string, match: Record<string, string> = {}) {
  let sum = 0;
  for (const [series, value] of metrics) {
    const brace = series.indexOf('{');
    const metric = brace < 0 ? series : series.slice(0, brace);
    if (metric !== name) continue;
    const labels = brace < 0 ? '' : series.slice(brace);
    if (Object.entries(match).every(([k, v]) => labels.includes(`${k}="${v}"`))) sum += value;
  }
  return sum;
}

/** The difference of two scrapes, series by series. */
export function diffMetrics(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [series, value] of after) out.set(series, value - (before.get(series) ?? 0));
  return out;
}

export async function apiserverMetrics(cluster: Cluster): Promise<Map<string, number>> {
  const res = await cluster.http.call('GET', '/metrics', undefined, 'text/plain');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parseMetrics(res.text);
}

export async function probeMetrics(probe: Probe): Promise<Map<string, number>> {
  return parseMetrics((await probe.request<{ text: string }>('metrics')).text);
}

/**
 * How deploy/deployment.yaml starts the controller (its `command` and `env`): node flags and environment that
 * bench:scale measured to pay (docs/adr/1101-controller-process-setup.md). The benches that run
 * `certkit controller` as shipped use these.
 */
export const SHIPPED_CONTROLLER_HEAP_ARGS = ['--max-semi-space-size=1', '--optimize-for-size'];
/**
 * The heap flags, and V8's optimizing compilers held back at start (TurboFan off, Maglev's filter matching no
 * function): `certkit controller` turns them on when it first has work, so an idle controller never runs
 * them (docs/adr/1133; runtime's DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS).
 */
export const SHIPPED_CONTROLLER_NODE_ARGS = [
  ...SHIPPED_CONTROLLER_HEAP_ARGS,
  '--no-turbofan',
  '--maglev-filter=-*',
];
export const SHIPPED_CONTROLLER_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '65536',
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_TOP_PAD_: '0',
};

export const MiB = 1024 * 1024;
export const round = (n: number, digits = 1) => Number(n.toFixed(digits));
