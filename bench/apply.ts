import { request } from 'node:https';
import { stringify as stringifyYaml } from 'yaml';
import { bulkCrd } from '../packages/testenv/src/apiserver/bulk-crd.ts';
import { Client, flag, median, type ServerProcess, startServerProcess, writeResults } from './lib.ts';

/**
 * Server-side apply at scale, against a real `certkit apiserver` over HTTPS: milliseconds per request for
 * a ConfigMap with 1k, 10k and 20k data keys, for its first apply (JSON body, as kubectl sends it, and the
 * same as a YAML body), a second apply changing one value, an update by another manager that changes every
 * value (all ownership moves) and an apply that then conflicts on every key (its 409 size is reported); and
 * the same for a custom resource whose spec.entries is a list-map (`x-kubernetes-list-type: map`) and whose
 * spec.tags is a set, with as many items. The ratio 20k/1k is near 20 when the cost is linear and near 400
 * when quadratic.
 *
 * While the largest first apply runs, /healthz is polled every 10 ms: the slowest answer shows whether the
 * server serves anything else meanwhile.
 *
 * With --baseline=DIR (another checkout whose node_modules/@certkit point into its own packages, e.g. the
 * code before this change) each round runs the baseline server, then this one, and the report gives the
 * ratio new/baseline per case (the custom resource up to --baseline-cr-max members only).
 *
 * Usage: npm run bench:apply [-- --sizes=1000,10000,20000 --rounds=3 --baseline=DIR --baseline-name=TEXT
 *        --baseline-cr-max=N]
 */

const SIZES = (flag('sizes') ?? '1000,10000,20000').split(',').map(Number);
const ROUNDS = Number(flag('rounds') ?? 3);
const BASELINE = flag('baseline');
/** What the baseline is, for the report (e.g. `main at 308c186`); its directory by default. */
const BASELINE_NAME = process.argv
  .find((a) => a.startsWith('--baseline-name='))
  ?.slice('--baseline-name='.length);
/**
 * Largest custom resource the baseline is run with: the quadratic code takes minutes per request for
 * 20,000 list items (80,000 field paths), so by default it runs the smallest size only.
 */
const BASELINE_CR_MAX = Number(flag('baseline-cr-max') ?? Math.min(...SIZES));
const NS = 'default';

function log(msg: string) {
  process.stderr.write(`[bench:apply] ${msg}\n`);
}

interface Answer {
  status: number;
  bytes: number;
  ms: number;
}

function send(
  server: ServerProcess,
  client: Client,
  method: string,
  path: string,
  body: string | undefined,
  contentType = 'application/json',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string> = {
      Authorization: `Bearer ${server.token}`,
      Accept: 'application/json',
    };
    if (body !== undefined) headers['Content-Type'] = contentType;
    const req = request(`${server.url}${path}`, { method, headers, agent: client.agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';

/** The request's ms, after checking its status (an apply that creates answers 200 or 201). */
function expect(answer: Answer, status: number | number[], what: string): number {
  const wanted = [status].flat();
  if (!wanted.includes(answer.status))
    throw new Error(`${what}: HTTP ${answer.status}, expected ${wanted.join(' or ')}`);
  return answer.ms;
}

const CREATED = [200, 201];

function configMap(name: string, n: number, value: (i: number) => string) {
  const data: Record<string, string> = {};
  for (let i = 0; i < n; i++) data[`key-${i}`] = value(i);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data };
}

const BULK_CRD = bulkCrd('bench.example.com');

function bulk(name: string, n: number, value: (i: number) => string) {
  return {
    apiVersion: 'bench.example.com/v1',
    kind: 'Bulk',
    metadata: { name, namespace: NS },
    spec: {
      entries: Array.from({ length: n }, (_, i) => ({ name: `entry-${i}`, value: value(i) })),
      tags: Array.from({ length: n }, (_, i) => `tag-${i}`),
    },
  };
}

type Case =
  | 'first apply'
  | 'first apply, YAML body'
  | 'second apply, one value changed'
  | 'update by another manager, every value'
  | 'conflicting apply, every key';
const CASES: Case[] = [
  'first apply',
  'first apply, YAML body',
  'second apply, one value changed',
  'update by another manager, every value',
  'conflicting apply, every key',
];
type Kind = 'ConfigMap data' | 'custom resource list-map + set';
const KINDS: Kind[] = ['ConfigMap data', 'custom resource list-map + set'];

interface Sample {
  variant: string;
  round: number;
  kind: Kind;
  size: number;
  case: Case;
  ms: number;
  /** Response size of the conflicting apply (the 409 Status). */
  bytes?: number;
}

interface Liveness {
  variant: string;
  round: number;
  size: number;
  applyMs: number;
  healthzAnswers: number;
  slowestHealthzMs: number;
}

/** One object of `kind` with `size` members through every case; returns ms per case. */
async function runCases(
  server: ServerProcess,
  client: Client,
  kind: Kind,
  size: number,
  id: string,
): Promise<{ case: Case; ms: number; bytes?: number }[]> {
  const isMap = kind === 'ConfigMap data';
  const base = isMap
    ? `/api/v1/namespaces/${NS}/configmaps`
    : `/apis/bench.example.com/v1/namespaces/${NS}/bulks`;
  const make = isMap ? configMap : bulk;
  const name = `obj-${id}`;
  const yamlName = `yaml-${id}`;
  const applyPath = (n: string, manager = 'bench') => `${base}/${n}?fieldManager=${manager}`;
  const out: { case: Case; ms: number; bytes?: number }[] = [];
  const original = make(name, size, (i) => `value-${i}`);
  out.push({
    case: 'first apply',
    ms: expect(
      await send(server, client, 'PATCH', applyPath(name), JSON.stringify(original), APPLY),
      CREATED,
      'first apply',
    ),
  });
  const yamlBody = stringifyYaml(make(yamlName, size, (i) => `value-${i}`));
  out.push({
    case: 'first apply, YAML body',
    ms: expect(
      await send(server, client, 'PATCH', applyPath(yamlName), yamlBody, APPLY),
      CREATED,
      'YAML apply',
    ),
  });
  const changed = make(name, size, (i) => (i === 0 ? 'changed' : `value-${i}`));
  out.push({
    case: 'second apply, one value changed',
    ms: expect(
      await send(server, client, 'PATCH', applyPath(name), JSON.stringify(changed), APPLY),
      200,
      'second apply',
    ),
  });
  const patch = isMap
    ? { data: configMap(name, size, (i) => `other-${i}`).data }
    : { spec: bulk(name, size, (i) => `other-${i}`).spec };
  out.push({
    case: 'update by another manager, every value',
    ms: expect(
      await send(server, client, 'PATCH', applyPath(name, 'other'), JSON.stringify(patch), MERGE),
      200,
      'update',
    ),
  });
  const conflict = await send(server, client, 'PATCH', applyPath(name), JSON.stringify(changed), APPLY);
  out.push({
    case: 'conflicting apply, every key',
    ms: expect(conflict, 409, 'conflicting apply'),
    bytes: conflict.bytes,
  });
  return out;
}

/** The largest ConfigMap's first apply with /healthz polled meanwhile. */
async function liveness(server: ServerProcess, client: Client, size: number, id: string) {
  const probe = new Client(server, 1);
  let done = false;
  let answers = 0;
  let slowest = 0;
  const polling = (async () => {
    while (!done) {
      const answer = await send(server, probe, 'GET', '/healthz', undefined);
      expect(answer, 200, '/healthz');
      answers++;
      slowest = Math.max(slowest, answer.ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await new Promise((r) => setTimeout(r, 50));
  const body = JSON.stringify(configMap(`live-${id}`, size, (i) => `value-${i}`));
  const answer = await send(
    server,
    client,
    'PATCH',
    `/api/v1/namespaces/${NS}/configmaps/live-${id}?fieldManager=bench`,
    body,
    APPLY,
  );
  done = true;
  await polling;
  probe.close();
  return {
    applyMs: expect(answer, CREATED, 'liveness apply'),
    healthzAnswers: answers,
    slowestHealthzMs: slowest,
  };
}

async function waitForResource(server: ServerProcess, client: Client, path: string) {
  for (let i = 0; i < 500; i++) {
    if ((await send(server, client, 'GET', path, undefined)).status === 200) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${path} never served`);
}

async function runOnce(variant: string, root: string | undefined, round: number) {
  const server = await startServerProcess(undefined, [], { root });
  const client = new Client(server, 4);
  const samples: Sample[] = [];
  try {
    expect(
      await send(
        server,
        client,
        'POST',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        JSON.stringify(BULK_CRD),
      ),
      201,
      'CRD',
    );
    await waitForResource(server, client, `/apis/bench.example.com/v1/namespaces/${NS}/bulks`);
    // Warm-up: the code paths once at a small size, so that compilation is not measured.
    for (const kind of KINDS) await runCases(server, client, kind, 50, `warm-${kind.length}`);
    for (const kind of KINDS) {
      for (const size of SIZES) {
        if (variant === 'baseline' && kind !== 'ConfigMap data' && size > BASELINE_CR_MAX) continue;
        const results = await runCases(server, client, kind, size, `${kind.length}-${size}`);
        for (const r of results) samples.push({ variant, round, kind, size, ...r });
        log(
          `round ${round} ${variant} ${kind} ${size}: ${results.map((r) => `${r.case} ${r.ms.toFixed(0)} ms`).join(', ')}`,
        );
      }
    }
    const size = Math.max(...SIZES);
    const live: Liveness = { variant, round, size, ...(await liveness(server, client, size, `${round}`)) };
    log(
      `round ${round} ${variant} liveness: apply ${live.applyMs.toFixed(0)} ms, ${live.healthzAnswers} /healthz answers meanwhile, slowest ${live.slowestHealthzMs.toFixed(0)} ms`,
    );
    return { samples, live };
  } finally {
    client.close();
    await server.stop();
  }
}

const variants: { name: string; root: string | undefined }[] = [
  ...(BASELINE ? [{ name: 'baseline', root: BASELINE }] : []),
  { name: 'new', root: undefined },
];
log(`sizes ${SIZES.join(', ')}, ${ROUNDS} rounds of ${variants.map((v) => v.name).join(', ')}`);
const samples: Sample[] = [];
const lives: Liveness[] = [];
for (let r = 1; r <= ROUNDS; r++) {
  for (const v of variants) {
    const run = await runOnce(v.name, v.root, r);
    samples.push(...run.samples);
    lives.push(run.live);
  }
}

/** One decimal; null where a variant did not run a size. */
const round1 = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10) / 10;
const cell = (x: number | null) => (x === null ? '—' : String(x));
const small = Math.min(...SIZES);
const large = Math.max(...SIZES);
const msOf = (variant: string, kind: Kind, size: number, c: Case): number | undefined => {
  const ms = samples
    .filter((s) => s.variant === variant && s.kind === kind && s.size === size && s.case === c)
    .map((s) => s.ms);
  return ms.length > 0 ? median(ms) : undefined;
};
const ratioOf = (a: number | undefined, b: number | undefined, digits: number) =>
  a === undefined || b === undefined ? null : Math.round((a / b) * 10 ** digits) / 10 ** digits;
const summary = variants.flatMap((v) =>
  KINDS.flatMap((kind) =>
    CASES.map((c) => {
      const ms = Object.fromEntries(SIZES.map((size) => [size, round1(msOf(v.name, kind, size, c))]));
      const conflictBytes = samples.find(
        (s) => s.variant === v.name && s.kind === kind && s.size === large && s.case === c,
      )?.bytes;
      return {
        variant: v.name,
        kind,
        case: c,
        ms,
        ratioLargeToSmall: ratioOf(msOf(v.name, kind, large, c), msOf(v.name, kind, small, c), 1),
        ...(conflictBytes !== undefined ? { responseBytesAtLargest: conflictBytes } : {}),
      };
    }),
  ),
);
const newToBaseline = BASELINE
  ? KINDS.flatMap((kind) =>
      CASES.map((c) => ({
        kind,
        case: c,
        ratios: Object.fromEntries(
          SIZES.map((size) => [
            size,
            ratioOf(msOf('new', kind, size, c), msOf('baseline', kind, size, c), 3),
          ]),
        ),
      })),
    )
  : undefined;
const liveSummary = variants.map((v) => {
  const mine = lives.filter((l) => l.variant === v.name);
  return {
    variant: v.name,
    size: large,
    applyMs: round1(median(mine.map((l) => l.applyMs))),
    healthzAnswers: median(mine.map((l) => l.healthzAnswers)),
    slowestHealthzMs: round1(Math.max(...mine.map((l) => l.slowestHealthzMs))),
  };
});

const results = {
  date: new Date().toISOString(),
  sizes: SIZES,
  rounds: ROUNDS,
  baseline: BASELINE ? (BASELINE_NAME ?? BASELINE) : undefined,
  summary,
  newToBaseline,
  liveness: liveSummary,
  samples,
  livenessSamples: lives,
};
const sizeCols = SIZES.map((s) => `${s / 1000}k ms`);
const table = [
  `Server-side apply over HTTPS, ms per request (median of ${ROUNDS} rounds); ratio ${large / 1000}k/${small / 1000}k: ~${large / small} is linear, ~${(large / small) ** 2} quadratic.`,
  '',
  `| variant | object | case | ${sizeCols.join(' | ')} | ${large / 1000}k/${small / 1000}k |`,
  `|---|---|---|${SIZES.map(() => '---|').join('')}---|`,
  ...summary.map(
    (s) =>
      `| ${s.variant} | ${s.kind} | ${s.case}${s.responseBytesAtLargest !== undefined ? ` (409 of ${s.responseBytesAtLargest} bytes at ${large / 1000}k)` : ''} | ${SIZES.map((size) => cell(s.ms[size])).join(' | ')} | ${cell(s.ratioLargeToSmall)} |`,
  ),
  '',
  ...(newToBaseline
    ? [
        `new / baseline (${BASELINE_NAME ?? BASELINE}), ms per request:`,
        '',
        '| new / baseline | object | case | ' + sizeCols.map((c) => c.replace(' ms', '')).join(' | ') + ' |',
        `|---|---|---|${SIZES.map(() => '---|').join('')}`,
        ...newToBaseline.map(
          (r) => `| | ${r.kind} | ${r.case} | ${SIZES.map((size) => cell(r.ratios[size])).join(' | ')} |`,
        ),
        '',
      ]
    : ['No --baseline given: this checkout only.', '']),
  `/healthz polled every 10 ms during a first apply of a ConfigMap with ${large / 1000}k keys (median apply, slowest /healthz over ${ROUNDS} rounds):`,
  '',
  '| variant | apply ms | /healthz answers meanwhile | slowest /healthz ms |',
  '|---|---|---|---|',
  ...liveSummary.map((l) => `| ${l.variant} | ${l.applyMs} | ${l.healthzAnswers} | ${l.slowestHealthzMs} |`),
].join('\n');
await writeResults('apply', results, table);
