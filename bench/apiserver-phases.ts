import { readFile } from 'node:fs/promises';
import { flag, writeResults } from './lib.ts';

/**
 * The API server's time per request phase, from a `--cpu-prof` profile (`npm run bench:issuance --
 * --apiserver-cpu-prof` or `npm run bench:apiserver-mix -- --cpu-prof=DIR`). No single function of the
 * server's is above about 1% of its CPU, so a table by function says little; this charges every sample to
 * the innermost phase on its stack (TLS and HTTP parsing, authentication, body decoding, validation,
 * storage, watch fan-out, the response…) and shows each phase's share of the samples that were neither idle
 * nor module loading. A sample in Node's own http, net or TLS code with no phase of ours on its stack is
 * Node's request plumbing. The profile samples wall time: a call that wakes another thread (a socket write,
 * a postMessage to the SQLite writer) is charged with the time the process then waited for a core, so the
 * shares of those rows are upper bounds (ADR 1160 measured them with perf).
 *
 * Usage: npm run bench:apiserver-phases -- --profile=FILE.cpuprofile [--baseline=FILE.cpuprofile --results=NAME]
 * (with --baseline, the two profiles side by side; --results writes bench/results/NAME.{json,md})
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Phases, innermost first wins; the patterns match `function file:line` of a frame. */
const PHASES: [string, RegExp][] = [
  ['garbage collection', /^\(garbage collector\)/],
  ['CSR signature check (cert-manager admission)', /validation\/csr\.ts|verifyOneShot|createPublicKey/],
  ['admission (other)', /admission|^admit /],
  ['validation (schemas, kinds)', /validate|\/schema\/|prune/],
  ['watch: write per watcher', /http\/watch\.ts/],
  ['watch cache: insert and dispatch', /\/watchcache\//],
  ['storage: messages to the SQLite writer', /sqlite-writer-client|^postMessage /],
  ['storage: commit delivery to followers', /storage\/delivery|#committed|#dispatch|^offer /],
  ['storage: reads (latest row, lists)', /\/storage\//],
  ['registry: encode stored JSON', /^encode .*store\.ts/],
  ['registry: decode stored JSON', /^decode .*store\.ts/],
  ['registry: strategy, defaults, managed fields', /\/registry\/|\/fieldmanager\//],
  [
    'request body: parse, typed decode, duplicates',
    /decodeObjectBody|field-validation|duplicate-fields|parseJsonBody|parseObjectBody|json-depth|go-decode/,
  ],
  ['authentication', /authenticat|\/security\//],
  ['authorization', /authoriz/],
  ['response write (headers, body, TLS)', /sendJson|respond\.ts/],
  ['in-process controllers (GC, Event TTL, RBAC index)', /apiserver\/src\/controllers\//],
  ['routing, metrics, request log', /\/http\/|\/handlers\/|metrics\.ts|log\.ts/],
];
const NODE_PLUMBING =
  /node:_http_|node:net|node:internal\/tls|node:internal\/streams|stream_base_commons|^writeUtf8String|^writev |^socketOnData|^parserOn/;
const STARTUP =
  /ModuleJob|compileSourceTextModule|stripTypeScript|loadCJSModule|wrapModuleLoad|compileForInternalLoader|importModuleDynamically/;
const IDLE = /^\((idle|program)\) /;

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${lineNumber + 1}`;
}

/** Milliseconds per phase, with `idle` and `startup` apart. */
export function phases(profile: Profile): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)),
  );
  const totals = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const stack: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      stack.push(frameName(nodes.get(cur)!));
    let phase: string | undefined;
    if (IDLE.test(stack[0])) phase = 'idle';
    else if (stack.some((f) => STARTUP.test(f))) phase = 'startup (module loading)';
    else {
      for (const frame of stack) {
        phase = PHASES.find(([, re]) => re.test(frame))?.[0];
        if (phase) break;
      }
      phase ??= stack.some((f) => NODE_PLUMBING.test(f)) ? "Node's HTTP, streams and TLS" : 'other';
    }
    totals.set(phase, (totals.get(phase) ?? 0) + micros / 1000);
  }
  return totals;
}

const busy = (t: Map<string, number>) =>
  [...t].filter(([k]) => k !== 'idle' && !k.startsWith('startup')).reduce((a, [, ms]) => a + ms, 0);

const profilePath = flag('profile');
if (!profilePath) throw new Error('--profile=FILE.cpuprofile is required');
const baselinePath = flag('baseline');
const after = phases(JSON.parse(await readFile(profilePath, 'utf8')) as Profile);
const before = baselinePath ? phases(JSON.parse(await readFile(baselinePath, 'utf8')) as Profile) : undefined;
const names = [...new Set([...(before?.keys() ?? []), ...after.keys()])]
  .filter((k) => k !== 'idle' && !k.startsWith('startup'))
  .sort((a, b) => (after.get(b) ?? 0) - (after.get(a) ?? 0));
const cell = (t: Map<string, number>, k: string) =>
  `${Math.round(t.get(k) ?? 0)} | ${(((t.get(k) ?? 0) / busy(t)) * 100).toFixed(1)}%`;
const table = [
  before
    ? '| phase (innermost on the stack) | baseline ms | share | ms | share |'
    : '| phase (innermost on the stack) | ms | share |',
  before ? '|---|---|---|---|---|' : '|---|---|---|',
  ...names.map((k) => `| ${k} | ${before ? `${cell(before, k)} | ` : ''}${cell(after, k)} |`),
  `| total, neither idle nor module loading | ${before ? `${Math.round(busy(before))} | | ` : ''}${Math.round(busy(after))} | |`,
].join('\n');
const results = flag('results');
if (!results) console.log(table);
else {
  await writeResults(
    results,
    {
      date: new Date().toISOString(),
      profile: profilePath,
      baseline: baselinePath,
      phasesMs: Object.fromEntries(after),
      baselinePhasesMs: before ? Object.fromEntries(before) : undefined,
    },
    table,
  );
}
