import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterRoleAggregator } from '@certkit/apiserver/authorization/aggregation';
import { requestAttributes } from '@certkit/apiserver/authorization/attributes';
import { RbacAuthorizer } from '@certkit/apiserver/authorization/authorizer';
import { ensureBootstrapPolicy } from '@certkit/apiserver/authorization/bootstrap-policy';
import { RbacIndex } from '@certkit/apiserver/authorization/rbac-index';
import { parseApiPath } from '@certkit/apiserver/http/request-info';
import { parseRequestTarget } from '@certkit/apiserver/http/request-target';
import { Registry } from '@certkit/apiserver/registry/registry';
import { SqliteStorage } from '@certkit/apiserver/storage/sqlite';
import {
  Client,
  flag,
  median,
  type ServerProcess,
  startServerProcess,
  throughput,
  writeResults,
} from './lib.ts';

/**
 * What authorization costs a request: `npm run bench:apiserver -- --authorization` starts four servers,
 * --authorization-mode RBAC, AlwaysAllow, AlwaysAllow, RBAC (in that order, so that an effect of start order
 * cancels), and creates (then reads) 1 KiB Secrets on each in rounds whose order rotates, as a token-file user
 * outside system:masters, whom RBAC must authorise from a RoleBinding to `edit` for its group (the admin's
 * system:masters bypass would cost nothing). Every server also holds 500 RoleBindings and 100
 * ClusterRoleBindings of other subjects, so the index is not trivially small. All use
 * --sqlite-synchronous=normal so fsync does not hide the CPU cost. The
 * figures are the median of the rounds' RBAC/AlwaysAllow throughput ratios and, steadier on a loaded
 * machine, each server's CPU time per create (from /proc); goal: RBAC costs under 5% of creates. Beside them,
 * the decision alone, timed in process over the same bindings.
 * Usage: npm run bench:apiserver -- --authorization [--secrets=N --rounds=N --modes=A,B,B,A]
 */

const CONCURRENCY = 16;
const USER_TOKEN = 'bench-user-token';
const payload = Buffer.alloc(768, 'x').toString('base64');

export async function benchAuthorization(): Promise<void> {
  const secrets = Number(flag('secrets') ?? 16_000);
  const rounds = Number(flag('rounds') ?? 16);
  const tokenFile = join(process.env.TMPDIR ?? '/tmp', `certkit-bench-tokens-${process.pid}.csv`);
  await writeFile(tokenFile, `${USER_TOKEN},bench-user,1000,"bench-team"\n`, { mode: 0o600 });
  const common = ['--sqlite-synchronous=normal', '--token-auth-file', tokenFile];
  // Four servers, A B B A: an A/A run of two servers showed the first one started using ~8% more CPU per
  // create than the second, identical one; A B B A cancels such an effect of position. `--modes=` with one
  // mode four times measures what is left of it (the comparison's noise floor).
  const modes = (flag('modes') ?? 'RBAC,AlwaysAllow,AlwaysAllow,RBAC').split(',');
  const calibration = new Set(modes).size === 1;
  // Group A: servers of the first mode (in a calibration run, the first and last positions); B the others.
  const inA = modes.map((m, i) => (calibration ? i === 0 || i === modes.length - 1 : m === modes[0]));
  const labels = calibration
    ? [`${modes[0]} (outer)`, `${modes[0]} (inner)`]
    : [modes[0], modes[inA.indexOf(false)]];
  const servers: ServerProcess[] = [];
  for (const mode of modes) {
    servers.push(await startServerProcess(undefined, [...common, `--authorization-mode=${mode}`]));
  }
  const users = servers.map((s) => new Client({ ...s, token: USER_TOKEN }, CONCURRENCY));
  try {
    for (const s of servers) await grant(s);
    for (const user of users) await warmUp(user);
    const perRound = Math.ceil(secrets / rounds);
    /** Per round, the mean rate of each group's servers. */
    const creates: [number[], number[]] = [[], []];
    const gets: [number[], number[]] = [[], []];
    const cpu = [0, 0];
    const created = [0, 0];
    const group = (which: number) => (inA[which] ? 0 : 1);
    for (let r = 0; r < rounds; r++) {
      // Rotated each round, so no server always goes first.
      const order = servers.map((_, i) => (i + r) % servers.length);
      const createRates: [number[], number[]] = [[], []];
      const getRates: [number[], number[]] = [[], []];
      for (const which of order) {
        const first = r * perRound;
        const cpuBefore = await cpuSeconds(servers[which].pid);
        const { opsPerSec } = await throughput(perRound, CONCURRENCY, async (i) => {
          const res = await users[which].call('POST', '/api/v1/namespaces/bench/secrets', {
            metadata: { name: `secret-${first + i}` },
            data: { payload },
          });
          if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
        });
        cpu[group(which)] += (await cpuSeconds(servers[which].pid)) - cpuBefore;
        created[group(which)] += perRound;
        createRates[group(which)].push(opsPerSec);
      }
      for (const which of order) {
        const { opsPerSec } = await throughput(perRound * 2, CONCURRENCY, async (i) => {
          const res = await users[which].call(
            'GET',
            `/api/v1/namespaces/bench/secrets/secret-${i % perRound}`,
          );
          if (res.status !== 200) throw new Error(`get failed: ${res.status} ${res.text}`);
        });
        getRates[group(which)].push(opsPerSec);
      }
      for (const g of [0, 1]) {
        creates[g].push(mean(createRates[g]));
        gets[g].push(mean(getRates[g]));
      }
    }
    const ratio = (a: number[], b: number[]) => Number(median(a.map((x, i) => x / b[i])).toFixed(3));
    const createRatio = ratio(creates[0], creates[1]);
    const getRatio = ratio(gets[0], gets[1]);
    const cpuPerCreateUs = cpu.map((c, g) => Math.round((c / created[g]) * 1e6));
    const cpuCostPercent = Number(((cpuPerCreateUs[0] / cpuPerCreateUs[1] - 1) * 100).toFixed(1));
    const decisionUs = await decisionMicros();
    const results = {
      date: new Date().toISOString(),
      modes,
      groups: labels,
      concurrency: CONCURRENCY,
      secrets,
      rounds,
      sqliteSynchronous: 'normal',
      otherBindings: { roleBindings: 500, clusterRoleBindings: 100 },
      createsPerSec: {
        [labels[0]]: Math.round(median(creates[0])),
        [labels[1]]: Math.round(median(creates[1])),
      },
      getsPerSec: { [labels[0]]: Math.round(median(gets[0])), [labels[1]]: Math.round(median(gets[1])) },
      ratios: { creates: createRatio, gets: getRatio },
      createCostPercent: Number(((1 - createRatio) * 100).toFixed(1)),
      serverCpuMicrosPerCreate: { [labels[0]]: cpuPerCreateUs[0], [labels[1]]: cpuPerCreateUs[1] },
      cpuCostPercent,
      decisionMicros: decisionUs,
      decisionShareOfCreateCpuPercent: Number(((decisionUs / cpuPerCreateUs[1]) * 100).toFixed(2)),
      perRound: {
        creates: { [labels[0]]: creates[0].map(Math.round), [labels[1]]: creates[1].map(Math.round) },
        gets: { [labels[0]]: gets[0].map(Math.round), [labels[1]]: gets[1].map(Math.round) },
      },
      targets: { createCostPercent: 5, cpuCostPercent: 5 },
    };
    const sign = (x: number) => (x >= 0 ? `+${x}` : `${x}`);
    const table = [
      `| measure | ${labels[0]} | ${labels[1]} | ${labels[0]} / ${labels[1]} | target |`,
      '|---|---|---|---|---|',
      `| creates/s (1 KiB Secrets, ${CONCURRENCY} clients, HTTPS, a user authorised by a RoleBinding; servers ${modes.join(', ')}; median of ${rounds} rounds' ratios) | ${results.createsPerSec[labels[0]]} | ${results.createsPerSec[labels[1]]} | ${createRatio} | ≥ 0.95 (cost < 5%) |`,
      `| GETs/s (same user) | ${results.getsPerSec[labels[0]]} | ${results.getsPerSec[labels[1]]} | ${getRatio} | — |`,
      `| server CPU per create (user+system, /proc, all rounds) | ${cpuPerCreateUs[0]} µs | ${cpuPerCreateUs[1]} µs | ${sign(cpuCostPercent)}% | < +5% |`,
      `| the RBAC decision alone (in process, 600 other bindings; share of ${labels[1]}'s CPU per create) | ${decisionUs} µs | — | ${results.decisionShareOfCreateCpuPercent}% | — |`,
    ].join('\n');
    await writeResults(
      calibration
        ? `apiserver-authorization-${modes[0].toLowerCase()}-calibration`
        : 'apiserver-authorization',
      results,
      table,
    );
  } finally {
    for (const u of users) u.close();
    for (const s of servers) await s.stop();
  }
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** The bench user's group may edit in `bench`; 600 bindings of other subjects fill the RBAC index. */
async function grant(server: ServerProcess): Promise<void> {
  const admin = new Client(server, 8);
  const ok = async (path: string, body: unknown) => {
    const res = await admin.call('POST', path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  };
  const ref = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });
  try {
    await ok('/api/v1/namespaces', { metadata: { name: 'bench' } });
    await ok('/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings', {
      metadata: { name: 'bench-team-edit' },
      roleRef: ref('edit'),
      subjects: [{ kind: 'Group', name: 'bench-team' }],
    });
    await throughput(500, 8, async (i) => {
      await ok('/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings', {
        metadata: { name: `other-${i}` },
        roleRef: ref('view'),
        subjects: [
          { kind: 'User', name: `user-${i}` },
          { kind: 'ServiceAccount', name: `sa-${i}` },
        ],
      });
    });
    await throughput(100, 8, async (i) => {
      await ok('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: `other-${i}` },
        roleRef: ref('view'),
        subjects: [{ kind: 'Group', name: `group-${i}` }],
      });
    });
  } finally {
    admin.close();
  }
}

/** Until the binding is in force (the authorizer follows storage), then some creates to warm the JIT. */
async function warmUp(user: Client): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await user.call('GET', '/api/v1/namespaces/bench/secrets?limit=1');
    if (res.status === 200) break;
    if (i > 200) throw new Error(`the bench user is not allowed: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  await throughput(500, CONCURRENCY, async (i) => {
    const res = await user.call('POST', '/api/v1/namespaces/bench/configmaps', {
      metadata: { name: `warm-${i}` },
      data: { a: 'b' },
    });
    if (res.status !== 201) throw new Error(`warm-up failed: ${res.status} ${res.text}`);
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc/PID/stat (utime, stime in 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The authorizer's decision for the bench user's create, timed in process: the bootstrap policy, the same
 * bindings as the servers hold, request attributes built from the path as the server builds them.
 */
export async function decisionMicros(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-bench-rbac-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  try {
    const registry = new Registry({ storage });
    await ensureBootstrapPolicy(registry);
    const bindings = registry.byResource('rbac.authorization.k8s.io', 'rolebindings')!;
    const clusterBindings = registry.byResource('rbac.authorization.k8s.io', 'clusterrolebindings')!;
    const ref = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });
    await bindings.create('bench', {
      metadata: { name: 'bench-team-edit' },
      roleRef: ref('edit'),
      subjects: [{ kind: 'Group', name: 'bench-team' }],
    });
    for (let i = 0; i < 500; i++) {
      await bindings.create('bench', {
        metadata: { name: `other-${i}` },
        roleRef: ref('view'),
        subjects: [
          { kind: 'User', name: `user-${i}` },
          { kind: 'ServiceAccount', name: `sa-${i}` },
        ],
      });
    }
    for (let i = 0; i < 100; i++) {
      await clusterBindings.create(undefined, {
        metadata: { name: `other-${i}` },
        roleRef: ref('view'),
        subjects: [{ kind: 'Group', name: `group-${i}` }],
      });
    }
    const index = new RbacIndex(registry, storage);
    // edit is aggregated (from view, itself aggregated): a pass per level, as the controller would run them.
    const aggregator = new ClusterRoleAggregator(registry, storage, index);
    for (let pass = 0; pass < 3; pass++) await aggregator.aggregateAll();
    await index.start();
    const authorizer = new RbacAuthorizer(index);
    const user = { name: 'bench-user', uid: '1000', groups: ['bench-team', 'system:authenticated'] };
    const url = parseRequestTarget('/api/v1/namespaces/bench/secrets');
    const batches: number[] = [];
    const n = 100_000;
    for (let b = 0; b < 7; b++) {
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        const attrs = requestAttributes(user, 'POST', url, parseApiPath(url.pathname));
        if (!authorizer.authorize(attrs).allowed) throw new Error('the bench user is not allowed');
      }
      batches.push(((performance.now() - started) * 1000) / n);
    }
    index.stop();
    return Number(median(batches).toFixed(2));
  } finally {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
}
