import { randomBytes } from 'node:crypto';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, type ResourceClient } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import {
  type Cluster,
  createNamespace,
  type Measurement,
  type Probe,
  round,
  startCluster,
  startProbe,
} from './controller-lib.ts';
import { throughput, writeResults } from './lib.ts';
import { OUTSIDE_VARIANTS, outsideSeedScenario, outsideTable } from './memory-outside.ts';

/**
 * The controller's memory over Secrets it has nothing to do with (docs/adr/0010), with the split Secret cache
 * (--secrets-filtered-caching=true, the default) and without it (=false), side by side: both controllers run
 * at once against the same API server and see the same events.
 *
 * 1. The design document's scenario: 300 unrelated Secrets of ~1 MB created, then every one relabelled (as
 *    `kubectl label secret --all foo=bar`), then the controller restarted over them (the initial LIST).
 *    RSS growth against the same controller on an empty cluster: steady (after forced GCs settle) and peak
 *    (VmHWM, reset before each phase).
 * 2. 30,000 small unrelated Secrets: V8 heap growth per Secret, through the watch (created while the
 *    controller runs) and through the initial LIST (controller restarted).
 *
 * 3. Scenario 1 seen from outside (bench/memory-outside.ts): `certkit controller` itself, as shipped and
 *    otherwise, no forced GC, RSS read from /proc 8 s after each step. It differs from 1 because V8 resizes
 *    its young generation by itself: 1's forced GCs shrink it before every reading (docs/adr/1101).
 *
 * The controllers of 1 and 2 are bench/controller-probe.ts: `certkit controller` plus an IPC channel (forced
 * GC, /proc figures). Usage: npm run bench:memory [-- --big=300 --small=30000 --only=outside
 * --outside-variants=a,b]
 */

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const BIG = arg('big', 300);
const BIG_BYTES = 1_000_000;
const SMALL = arg('small', 30_000);
const MB = 1e6;
const MODES = [
  { name: 'filtered', flag: '--secrets-filtered-caching=true' },
  { name: 'unfiltered', flag: '--secrets-filtered-caching=false' },
] as const;
type Mode = (typeof MODES)[number]['name'];
const FLAGS = ['--kube-api-qps=-1'];

type SecretObject = Secret & KubeObject & { metadata: NonNullable<KubeObject['metadata']> };

function log(msg: string) {
  process.stderr.write(`[bench:memory] ${msg}\n`);
}

/** The Secret among `written` with the highest resourceVersion: once a cache has it, it has all of them. */
function newest(written: SecretObject[]): { key: string; resourceVersion: string } {
  let best = written[0];
  for (const s of written) {
    if (BigInt(s.metadata.resourceVersion!) > BigInt(best.metadata.resourceVersion!)) best = s;
  }
  return {
    key: `${best.metadata.namespace}/${best.metadata.name}`,
    resourceVersion: best.metadata.resourceVersion!,
  };
}

async function caughtUp(probes: Probe[], written: SecretObject[]): Promise<void> {
  const last = newest(written);
  const deadline = Date.now() + 300_000;
  for (const probe of probes) {
    while (!(await probe.request<{ seen: boolean }>('seen', last)).seen) {
      if (Date.now() > deadline)
        throw new Error(`a controller never saw ${last.key}@${last.resourceVersion}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function startProbes(cluster: Cluster): Promise<Record<Mode, Probe>> {
  const probes = {} as Record<Mode, Probe>;
  for (const mode of MODES) probes[mode.name] = startProbe(cluster.kubeconfigPath, [mode.flag, ...FLAGS]);
  for (const mode of MODES) await probes[mode.name].synced;
  return probes;
}

const measure = (probe: Probe) => probe.request<Measurement>('measure');
const resetPeak = (probe: Probe) => probe.request('reset-peak');
const mb = (mib: number) => round((mib * 1024 * 1024) / MB, 1);

const SETTLE_MS = 15_000;
const FIRST_SETTLE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Steady figures of every controller. A freshly started controller's anonymous RSS drops by ~7 MB once,
 * some 12–20 s after its caches synced, if it keeps collecting garbage meanwhile (pages given back; the V8
 * heap does not change), whatever it caches. So a first reading spends FIRST_SETTLE_MS measuring every two
 * seconds (forced GCs each time), a later one waits SETTLE_MS; then each measures a second apart until two
 * readings agree within 1 MB, at most five times. VmHWM in the result is the peak since the last reset-peak.
 */
async function steady(probes: Record<Mode, Probe>, first = false): Promise<Record<Mode, Measurement>> {
  if (first) {
    const until = Date.now() + FIRST_SETTLE_MS;
    while (Date.now() < until) {
      for (const mode of MODES) await measure(probes[mode.name]);
      await sleep(2_000);
    }
  } else {
    await sleep(SETTLE_MS);
  }
  const out = {} as Record<Mode, Measurement>;
  for (const mode of MODES) {
    let last = await measure(probes[mode.name]);
    for (let i = 0; i < 5; i++) {
      await sleep(1_000);
      const next = await measure(probes[mode.name]);
      const stable = Math.abs(next.rssMiB - last.rssMiB) < 1;
      last = next;
      if (stable) break;
    }
    out[mode.name] = last;
  }
  return out;
}

interface LargeResult {
  empty: { steadyRssMB: number; startupPeakMB: number; heapMB: number };
  create: { steadyGrowthMB: number; peakGrowthMB: number };
  relabel: { steadyGrowthMB: number; peakGrowthMB: number; rssMB: number };
  restart: { steadyGrowthMB: number; peakGrowthMB: number; rssMB: number; peakMB: number; syncMs: number };
  heapGrowthAfterRelabelMB: number;
}

async function largeSecrets(): Promise<Record<Mode, LargeResult>> {
  const cluster = await startCluster();
  try {
    await createNamespace(cluster, 'helm');
    const secrets: ResourceClient<SecretObject> = cluster.admin.resource<SecretObject>(builtins.secrets);
    let probes = await startProbes(cluster);
    const baseline = await steady(probes, true);
    const results = {} as Record<Mode, LargeResult>;
    for (const mode of MODES) {
      const b = baseline[mode.name];
      results[mode.name] = {
        empty: { steadyRssMB: mb(b.rssMiB), startupPeakMB: mb(b.hwmMiB), heapMB: round(b.heapUsed / MB) },
      } as LargeResult;
      await resetPeak(probes[mode.name]);
    }

    log(`creating ${BIG} Secrets of ${BIG_BYTES / MB} MB`);
    const created: SecretObject[] = [];
    const started = performance.now();
    await throughput(BIG, 4, async (i) => {
      created.push(
        await secrets.create('helm', {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `sh.helm.release.v1.app-${i}.v1`, labels: { owner: 'helm', name: `app-${i}` } },
          type: 'helm.sh/release.v1',
          // Random, as gzip'd Helm releases are: nothing can be shared or compressed away.
          data: { release: randomBytes(BIG_BYTES).toString('base64') },
        }),
      );
    });
    await caughtUp(Object.values(probes), created);
    log(`created in ${((performance.now() - started) / 1000).toFixed(1)} s; both controllers caught up`);
    let after = await steady(probes);
    for (const mode of MODES) {
      const m = after[mode.name];
      results[mode.name].create = {
        steadyGrowthMB: mb(m.rssMiB - baseline[mode.name].rssMiB),
        peakGrowthMB: mb(m.hwmMiB - baseline[mode.name].rssMiB),
      };
      await resetPeak(probes[mode.name]);
    }

    log(`relabelling all ${BIG} (kubectl label secret --all foo=bar)`);
    const relabelled: SecretObject[] = [];
    await throughput(BIG, 4, async (i) => {
      relabelled.push(
        await secrets.patch('helm', created[i].metadata.name!, 'merge', {
          metadata: { labels: { foo: 'bar' } },
        }),
      );
    });
    await caughtUp(Object.values(probes), relabelled);
    after = await steady(probes);
    for (const mode of MODES) {
      const m = after[mode.name];
      results[mode.name].relabel = {
        steadyGrowthMB: mb(m.rssMiB - baseline[mode.name].rssMiB),
        peakGrowthMB: mb(m.hwmMiB - baseline[mode.name].rssMiB),
        rssMB: mb(m.rssMiB),
      };
      results[mode.name].heapGrowthAfterRelabelMB = round((m.heapUsed - baseline[mode.name].heapUsed) / MB);
    }
    for (const probe of Object.values(probes)) await probe.exit();

    log('restarting both controllers over the Secrets (initial LIST)');
    probes = await startProbes(cluster);
    after = await steady(probes, true);
    for (const mode of MODES) {
      const m = after[mode.name];
      results[mode.name].restart = {
        steadyGrowthMB: mb(m.rssMiB - baseline[mode.name].rssMiB),
        // Start-up to start-up: against the same controller's start-up peak on the empty cluster.
        peakGrowthMB: mb(m.hwmMiB - baseline[mode.name].hwmMiB),
        rssMB: mb(m.rssMiB),
        peakMB: mb(m.hwmMiB),
        syncMs: await probes[mode.name].synced,
      };
    }
    for (const probe of Object.values(probes)) await probe.exit();
    return results;
  } finally {
    await cluster.stop();
  }
}

interface SmallResult {
  watch: { heapGrowthMB: number; bytesPerSecret: number; rssGrowthMB: number };
  list: { heapGrowthMB: number; bytesPerSecret: number; rssGrowthMB: number; syncMs: number };
}

async function smallSecrets(): Promise<Record<Mode, SmallResult>> {
  const cluster = await startCluster();
  try {
    await createNamespace(cluster, 'bulk');
    const secrets = cluster.admin.resource<SecretObject>(builtins.secrets);
    let probes = await startProbes(cluster);
    const baseline = await steady(probes, true);

    log(`creating ${SMALL} small Secrets`);
    let last: SecretObject | undefined;
    const started = performance.now();
    await throughput(SMALL, 16, async (i) => {
      const name = `app-config-${String(i).padStart(5, '0')}`;
      const s = await secrets.create('bulk', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          labels: { app: `app-${i % 300}`, 'app.kubernetes.io/managed-by': 'helm' },
          annotations: {
            'meta.helm.sh/release-name': `app-${i % 300}`,
            'meta.helm.sh/release-namespace': 'bulk',
          },
        },
        type: 'Opaque',
        data: {
          username: Buffer.from(`user-${i}`).toString('base64'),
          password: randomBytes(24).toString('base64'),
        },
      });
      if (!last || BigInt(s.metadata.resourceVersion!) > BigInt(last.metadata.resourceVersion!)) last = s;
    });
    await caughtUp(Object.values(probes), [last!]);
    log(`created in ${((performance.now() - started) / 1000).toFixed(1)} s; both controllers caught up`);
    const results = {} as Record<Mode, SmallResult>;
    let after = await steady(probes);
    for (const mode of MODES) {
      const m = after[mode.name];
      const growth = m.heapUsed - baseline[mode.name].heapUsed;
      results[mode.name] = {
        watch: {
          heapGrowthMB: round(growth / MB),
          bytesPerSecret: Math.round(growth / SMALL),
          rssGrowthMB: mb(m.rssMiB - baseline[mode.name].rssMiB),
        },
      } as SmallResult;
    }
    for (const probe of Object.values(probes)) await probe.exit();

    log('restarting both controllers over them (initial LIST)');
    probes = await startProbes(cluster);
    after = await steady(probes, true);
    for (const mode of MODES) {
      const m = after[mode.name];
      const growth = m.heapUsed - baseline[mode.name].heapUsed;
      results[mode.name].list = {
        heapGrowthMB: round(growth / MB),
        bytesPerSecret: Math.round(growth / SMALL),
        rssGrowthMB: mb(m.rssMiB - baseline[mode.name].rssMiB),
        syncMs: await probes[mode.name].synced,
      };
    }
    for (const probe of Object.values(probes)) await probe.exit();
    return results;
  } finally {
    await cluster.stop();
  }
}

// --only=outside: the outside-the-process measurement alone (bench/memory-outside.ts), written to
// bench/results/memory-outside.*; --outside-variants=a,b picks its variants (default: all of them).
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const variantNames = process.argv
  .find((a) => a.startsWith('--outside-variants='))
  ?.split('=')[1]
  ?.split(',');
const outsideVariants = OUTSIDE_VARIANTS.filter((v) => !variantNames || variantNames.includes(v.name));
const outside = await outsideSeedScenario(BIG, outsideVariants, log);
if (only === 'outside') {
  await writeResults(
    'memory-outside',
    { date: new Date().toISOString(), count: BIG, outside },
    outsideTable(BIG, outside),
  );
  process.exit(0);
}
const large = await largeSecrets();
const small = await smallSecrets();

const pass = (ok: boolean) => (ok ? '✓' : '✗');
const f = large.filtered;
const u = large.unfiltered;
const targets = {
  steadyGrowthUnder5MB:
    f.create.steadyGrowthMB < 5 && f.relabel.steadyGrowthMB < 5 && f.restart.steadyGrowthMB < 5,
  peakGrowthUnder10MB:
    f.create.peakGrowthMB < 10 && f.relabel.peakGrowthMB < 10 && f.restart.peakGrowthMB < 10,
  heapPerSmallSecretUnder500B:
    small.filtered.watch.bytesPerSecret < 500 && small.filtered.list.bytesPerSecret < 500,
};
const results = {
  date: new Date().toISOString(),
  controllerFlags: FLAGS,
  largeSecrets: { count: BIG, bytes: BIG_BYTES, ...large },
  smallSecrets: { count: SMALL, ...small },
  outside,
  targets,
  published: {
    source: 'cert-manager design/20221205-memory-management.md (kind cluster)',
    v1_11: { startupPeakMB: 1150, relabelPeakMB: 800, steadyMB: 700 },
    partialMetadataPrototype: { steadyMB: 27.5 },
  },
};

const table = [
  `| ${BIG} unrelated Secrets of ~1 MB (RSS, MB = 10⁶ bytes) | filtered (default) | unfiltered | target (filtered) | cert-manager, published |`,
  '|---|---|---|---|---|',
  `| empty cluster: steady RSS / start-up peak | ${f.empty.steadyRssMB} / ${f.empty.startupPeakMB} | ${u.empty.steadyRssMB} / ${u.empty.startupPeakMB} | — | — |`,
  `| create: steady growth | ${f.create.steadyGrowthMB} | ${u.create.steadyGrowthMB} | < 5 ${pass(f.create.steadyGrowthMB < 5)} | — |`,
  `| create: peak growth | ${f.create.peakGrowthMB} | ${u.create.peakGrowthMB} | < 10 ${pass(f.create.peakGrowthMB < 10)} | — |`,
  `| relabel all: steady growth | ${f.relabel.steadyGrowthMB} | ${u.relabel.steadyGrowthMB} | < 5 ${pass(f.relabel.steadyGrowthMB < 5)} | — |`,
  `| relabel all: peak growth | ${f.relabel.peakGrowthMB} | ${u.relabel.peakGrowthMB} | < 10 ${pass(f.relabel.peakGrowthMB < 10)} | — |`,
  `| relabel all: whole-process RSS after | ${f.relabel.rssMB} | ${u.relabel.rssMB} | — | v1.11 ~700 (spike 800); prototype 27.5 |`,
  `| restart over them: start-up peak growth | ${f.restart.peakGrowthMB} | ${u.restart.peakGrowthMB} | < 10 ${pass(f.restart.peakGrowthMB < 10)} | — |`,
  `| restart over them: whole-process start-up peak | ${f.restart.peakMB} | ${u.restart.peakMB} | — | v1.11 1150 |`,
  `| restart over them: steady growth | ${f.restart.steadyGrowthMB} | ${u.restart.steadyGrowthMB} | < 5 ${pass(f.restart.steadyGrowthMB < 5)} | — |`,
  `| restart over them: caches synced after | ${f.restart.syncMs} ms | ${u.restart.syncMs} ms | — | — |`,
  `| V8 heap growth after relabel | ${f.heapGrowthAfterRelabelMB} | ${u.heapGrowthAfterRelabelMB} | — | — |`,
  '',
  `| ${SMALL} small unrelated Secrets (V8 heap, after forced GC) | filtered (default) | unfiltered | target (filtered) |`,
  '|---|---|---|---|',
  `| created while running (watch): heap per Secret | ${small.filtered.watch.bytesPerSecret} B | ${small.unfiltered.watch.bytesPerSecret} B | < 500 B ${pass(small.filtered.watch.bytesPerSecret < 500)} |`,
  `| restarted over them (LIST): heap per Secret | ${small.filtered.list.bytesPerSecret} B | ${small.unfiltered.list.bytesPerSecret} B | < 500 B ${pass(small.filtered.list.bytesPerSecret < 500)} |`,
  `| heap growth (watch / LIST) | ${small.filtered.watch.heapGrowthMB} / ${small.filtered.list.heapGrowthMB} MB | ${small.unfiltered.watch.heapGrowthMB} / ${small.unfiltered.list.heapGrowthMB} MB | — |`,
  `| RSS growth (watch / LIST) | ${small.filtered.watch.rssGrowthMB} / ${small.filtered.list.rssGrowthMB} MB | ${small.unfiltered.watch.rssGrowthMB} / ${small.unfiltered.list.rssGrowthMB} MB | — |`,
  `| caches synced after restart | ${small.filtered.list.syncMs} ms | ${small.unfiltered.list.syncMs} ms | — |`,
  '',
  outsideTable(BIG, outside),
  '',
  'cert-manager (design doc, kind): 300 × ~1 MB Secrets, v1.11: 1.15 GB at start, 800 MB on relabel, ~700 MB',
  'steady; partial-metadata prototype: ~27.5 MB steady (whole process). Issue #4722: >30k Secrets, >8 GB.',
].join('\n');
await writeResults('memory', results, table);
