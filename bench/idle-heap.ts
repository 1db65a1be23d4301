import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { writeResults } from './lib.ts';
import { staleBuilds } from '../scripts/build.ts';

/**
 * What the V8 heap of an idle `certkit controller` holds, by where it comes from (docs/adr/1132): one heap
 * snapshot of the controller bundle as deploy/deployment.yaml runs it (its flags and environment, a JSON
 * kubeconfig as a pod has no YAML to read, metrics off), 20 s after start on an empty cluster. Self sizes
 * by kind of object; compiled code and function records (SharedFunctionInfo with its bytecode, scope info and
 * feedback metadata) by script, and inside the bundle by source file through the bundle's source maps; the
 * largest strings. Self sizes, not retained ones: each byte counts once. External strings (Node's built-ins'
 * source, which lives in the binary) are listed apart: they are not V8 heap pages.
 *
 * Usage: npm run bench:idle-heap [-- --results=NAME --keep=FILE (also keep the snapshot)]
 */

const root = join(import.meta.dirname, '..');
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const RESULTS = flag('results') ?? 'idle-heap';
const KEEP = flag('keep');
const SETTLE_MS = 20_000;
const KB = 1024;

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[]];
      edge_fields: string[];
      edge_types: [string[]];
      location_fields: string[];
    };
  };
  nodes: number[];
  edges: number[];
  locations: number[];
  strings: string[];
}

/** Runs the bundled controller, writes a heap snapshot after SETTLE_MS and returns its path. */
async function takeSnapshot(dir: string): Promise<string> {
  const cluster = await startCluster();
  try {
    const kubeconfig = join(dir, 'kubeconfig.json');
    await writeFile(kubeconfig, JSON.stringify(parseYaml(await readFile(cluster.kubeconfigPath, 'utf8'))));
    const child = spawn(
      process.execPath,
      [
        ...SHIPPED_CONTROLLER_NODE_ARGS,
        '--heapsnapshot-signal=SIGUSR2',
        join(root, 'packages/cli/bin/certkit.js'),
        'controller',
        '--kubeconfig',
        kubeconfig,
        '--leader-elect=false',
        '--metrics-bind-address=0',
      ],
      // NODE_OPTIONS cleared: the npm script sets the `source` condition there (.npmrc), which would run the
      // TypeScript sources instead of the bundle.
      { cwd: dir, env: { ...process.env, NODE_OPTIONS: '', ...SHIPPED_CONTROLLER_ENV }, stdio: 'ignore' },
    );
    try {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      child.kill('SIGUSR2');
      // The snapshot is written by the controller's main thread; done once its size stops changing.
      let last = -1;
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        const file = (await readdir(dir)).find((f) => f.endsWith('.heapsnapshot'));
        if (!file) continue;
        const size = (await stat(join(dir, file))).size;
        if (size > 0 && size === last) return join(dir, file);
        last = size;
      }
    } finally {
      child.kill('SIGTERM');
    }
  } finally {
    await cluster.stop();
  }
}

/** Where a script comes from: a Node built-in, an npm package, or (for the bundle) its chunk. */
function scriptGroup(name: string): string {
  if (name.startsWith('node:')) return "Node's built-ins";
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(name);
  if (pkg) return `npm: ${pkg[1]}`;
  return name;
}

/** The bundle's source file for a position in one of its chunks, read from the chunk's source map. */
class BundleSources {
  readonly #maps = new Map<string, SourceMap | undefined>();
  async load(chunkUrl: string): Promise<void> {
    if (this.#maps.has(chunkUrl)) return;
    const file = `${new URL(chunkUrl).pathname}.map`;
    this.#maps.set(
      chunkUrl,
      await readFile(file, 'utf8').then(
        (t) => new SourceMap(JSON.parse(t)),
        () => undefined,
      ),
    );
  }
  file(chunkUrl: string, line: number, column: number): string {
    const entry = this.#maps.get(chunkUrl)?.findEntry(line, column);
    const source = entry && 'originalSource' in entry ? entry.originalSource : undefined;
    if (!source) return `${chunkUrl.split('/').pop()} (no mapping)`;
    // `../../../runtime/src/client/transport.ts` → `runtime/src/client/transport.ts`, folder only.
    return source
      .replace(/^(?:\.\.\/)+/, '')
      .replace(/^(?:file:\/\/)?.*?\/packages\//, '')
      .replace(/\/[^/]*$/, '');
  }
}

function top(map: Map<string, number>, n: number): { what: string; kb: number }[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([what, bytes]) => ({ what, kb: round(bytes / KB) }));
}

async function analyse(file: string) {
  const s = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const { meta } = s.snapshot;
  const N = meta.node_fields.length;
  const E = meta.edge_fields.length;
  const [fType, fName, fSize, fEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  );
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
  const types = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const count = s.nodes.length / N;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i] + s.nodes[i * N + fEdges];
  const type = (i: number) => types[s.nodes[i * N + fType]];
  const name = (i: number) => s.strings[s.nodes[i * N + fName]];
  const size = (i: number) => s.nodes[i * N + fSize];
  /** Named (non-element) edges of node i. */
  function* edges(i: number): Generator<[string, string, number]> {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e++) {
      const t = edgeTypes[s.edges[e * E + eType]];
      const n = t === 'element' || t === 'hidden' ? '' : s.strings[s.edges[e * E + eName]];
      yield [t, n, s.edges[e * E + eTo] / N];
    }
  }
  const edge = (i: number, label: string) => {
    for (const [, n, to] of edges(i)) if (n === label) return to;
    return undefined;
  };

  // Self sizes by kind, external strings apart.
  const externalStrings = new Set<number>();
  for (let i = 0; i < count; i++) {
    if (type(i) === 'synthetic' && name(i) === '(External strings)') {
      for (const [, , to] of edges(i)) externalStrings.add(to);
    }
  }
  const byKind = new Map<string, number>();
  let heap = 0;
  let external = 0;
  for (let i = 0; i < count; i++) {
    if (externalStrings.has(i)) {
      external += size(i);
      continue;
    }
    heap += size(i);
    const kind =
      type(i) === 'code' || type(i) === 'hidden' || type(i) === 'native' ? `${type(i)}: ${name(i)}` : type(i);
    byKind.set(kind, (byKind.get(kind) ?? 0) + size(i));
  }

  // A function record owns what only it uses: bytecode, scope info, feedback metadata, and their parts.
  const owned = new Set<number>();
  const OWN = new Set([
    'function_data',
    'scope_info',
    'feedback_metadata',
    'trusted_function_data',
    'untrusted_function_data',
    'outer_scope_info_or_feedback_metadata',
  ]);
  const own = (sfi: number): number => {
    let bytes = size(sfi);
    owned.add(sfi);
    for (const [, n, to] of edges(sfi)) {
      if (!OWN.has(n) || owned.has(to) || type(to) !== 'code') continue;
      owned.add(to);
      bytes += size(to);
      for (const [t2, , to2] of edges(to)) {
        if (t2 === 'weak' || owned.has(to2) || type(to2) !== 'code' || name(to2) === 'system / Script')
          continue;
        owned.add(to2);
        bytes += size(to2);
      }
    }
    return bytes;
  };
  const bundle = new BundleSources();
  const byScript = new Map<string, number>();
  const byBundleFolder = new Map<string, number>();
  // Closures carry a position in their script, which the bundle's source map turns into a source file.
  const positions = new Map<number, [number, number]>();
  const L = meta.location_fields.length;
  for (let k = 0; k < s.locations.length; k += L)
    positions.set(s.locations[k] / N, [s.locations[k + 2], s.locations[k + 3]]);
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes);
  for (let i = 0; i < count; i++) {
    if (type(i) !== 'closure') continue;
    const sfi = edge(i, 'shared');
    if (sfi === undefined || owned.has(sfi)) continue;
    const script = edge(sfi, 'script');
    if (script === undefined) continue;
    const scriptName = name(script);
    const bytes = own(sfi);
    const inBundle = scriptName.includes('/controller-bundle/');
    add(byScript, inBundle ? "certkit's controller bundle" : scriptGroup(scriptName), bytes);
    const at = positions.get(i);
    if (inBundle && at) {
      await bundle.load(scriptName);
      add(byBundleFolder, bundle.file(scriptName, at[0], at[1]), bytes);
    }
  }
  // Function records that no closure reaches: declared but never instantiated.
  for (let i = 0; i < count; i++) {
    if (owned.has(i) || type(i) !== 'code') continue;
    const script = edge(i, 'script');
    if (script === undefined || name(i) === 'system / Script') continue;
    const scriptName = name(script);
    const inBundle = scriptName.includes('/controller-bundle/');
    add(byScript, inBundle ? "certkit's controller bundle" : scriptGroup(scriptName), own(i));
  }

  // Strings over 16 KiB on the heap, named by what holds them (a script's source, mostly).
  const bigStrings: { kb: number; held: string; start: string }[] = [];
  const holders = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    for (const [, n, to] of edges(i))
      if (n === 'source' && type(i) === 'code') holders.set(to, `source of ${scriptGroup(name(i))}`);
  }
  for (let i = 0; i < count; i++) {
    if (!type(i).includes('string') || externalStrings.has(i) || size(i) < 16 * KB) continue;
    bigStrings.push({ kb: round(size(i) / KB), held: holders.get(i) ?? '?', start: name(i).slice(0, 60) });
  }
  bigStrings.sort((a, b) => b.kb - a.kb);
  return {
    heapKb: round(heap / KB),
    externalStringsKb: round(external / KB),
    byKind: top(byKind, 20),
    codeByScript: top(byScript, 12),
    codeByBundleFolder: top(byBundleFolder, 40),
    bigStrings: bigStrings.slice(0, 15),
  };
}

const stale = staleBuilds();
if (stale.length > 0) throw new Error(`stale build (${stale.join(', ')}): run npm run build first`);
const dir = await mkdtemp(join(tmpdir(), 'certkit-idle-heap-'));
try {
  const file = await takeSnapshot(dir);
  if (KEEP) await writeFile(KEEP, await readFile(file));
  const result = await analyse(file);
  const rows = (list: { what: string; kb: number }[]) =>
    list.map((r) => `| ${r.what} | ${r.kb} |`).join('\n');
  const table = [
    `V8 heap of the idle bundled controller (JSON kubeconfig, metrics off, 20 s after start): ${round(result.heapKb / KB)} MiB of self sizes on the heap, plus ${round(result.externalStringsKb / KB)} MiB of external strings (Node's built-ins' source, in the binary).`,
    '',
    '| kind of object | KiB |',
    '|---|---|',
    rows(result.byKind),
    '',
    '| compiled code and function records, by script | KiB |',
    '|---|---|',
    rows(result.codeByScript),
    '',
    "| the bundle's share, by source folder (through its source maps) | KiB |",
    '|---|---|',
    rows(result.codeByBundleFolder),
    '',
    '| strings over 16 KiB on the heap | KiB | held by |',
    '|---|---|---|',
    result.bigStrings
      .map((b) => `| \`${b.start.replace(/[\n|`]/g, ' ')}\` | ${b.kb} | ${b.held} |`)
      .join('\n'),
  ].join('\n');
  await writeResults(RESULTS, result, table);
} finally {
  await rm(dir, { recursive: true, force: true });
}
