import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HeapProfiler, Runtime } from 'node:inspector';
import type { SourceMapping } from 'node:module';

/**
 * Reads a sampling heap profile written by bench/heap-sampling-preload.ts and says where the sampled bytes were
 * allocated: by area of the code (the innermost frame in one of AREAS) and by function, frames mapped back to
 * the sources through the controller bundle's source maps. Docs/adr/1225 compares a `survivors` profile (what
 * was promoted) with an `all` one (everything allocated).
 *
 * Usage: npm run bench:heap-sampling-report -- PROFILE [--bundle=packages/cli/dist/controller-bundle]
 *        [--results=NAME] [--top=30]
 */

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const here = dirname(fileURLToPath(import.meta.url));
const profilePath = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (!profilePath) throw new Error('usage: npm run bench:heap-sampling-report -- PROFILE');
const bundle = flag('bundle') ?? join(here, '..', 'packages/cli/dist/controller-bundle');
const top = Number(flag('top') ?? 30);

/** Areas by source path (see areaOf). */
const AREAS: [string, RegExp][] = [
  ['heap profiler itself', /^node:inspector|heap-sampling-preload/],
  ['watch decoding', /client\/watch-stream/],
  ['HTTP/1 parser and pool', /client\/http1-/],
  ['client transport and resource client', /client\/(transport|resource-client)/],
  ['informers (reflector, stores, handlers)', /runtime\/src\/informers\//],
  ['cache transforms (string sharing, facts)', /cache-transforms|split-cache|secret-facts|metadata-stub/],
  ['work queues', /runtime\/src\/workqueue\//],
  ['Events', /controllers\/events\.ts/],
  ['metrics', /metrics/],
  ['PKI (DER, PEM, keys)', /certificates\/src\/pki\//],
  ['parse caches (LRU)', /lru\.ts|controllers\/parsed\.ts|weak-generations/],
  ['controller loop', /runtime\/src\/manager\//],
];

const maps = new Map<string, SourceMap | undefined>();
function sourceMap(url: string): SourceMap | undefined {
  const file = basename(url);
  if (!maps.has(file)) {
    const path = join(bundle, `${file}.map`);
    maps.set(file, existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : undefined);
  }
  return maps.get(file);
}

/** A frame as `function source:line`, through the bundle's source map when it has one. */
function frame(cf: Runtime.CallFrame): { name: string; source: string } {
  const found = cf.url ? sourceMap(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber) : undefined;
  const entry = found && 'originalSource' in found ? (found as SourceMapping) : undefined;
  if (entry?.originalSource) {
    // Sources are named relative to the bundle's directory (packages/cli/dist/controller-bundle); shown
    // relative to its checkout.
    const source = relative(resolve(bundle, '../../../..'), resolve(bundle, entry.originalSource));
    const name = (entry as { name?: string }).name ?? cf.functionName;
    return { name: `${name} ${source}:${entry.originalLine + 1}`, source };
  }
  return { name: `${cf.functionName || '(anonymous)'} ${cf.url}:${cf.lineNumber + 1}`, source: cf.url };
}

const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as HeapProfiler.SamplingHeapProfile;
const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
const add = (m: Map<string, number>, key: string, n: number) => m.set(key, (m.get(key) ?? 0) + n);

function walk(node: HeapProfiler.SamplingHeapProfileNode, stack: { name: string; source: string }[]): void {
  const here = [...stack, frame(node.callFrame)];
  if (node.selfSize > 0) {
    total += node.selfSize;
    add(byFunction, here.at(-1)!.name, node.selfSize);
    add(byArea, areaOf(here), node.selfSize);
  }
  for (const child of node.children) walk(child, here);
}
walk(profile.head, []);

/**
 * The area of the innermost frame of our own code (node's functions and V8's builtins are charged to the code
 * that called them); samples with none are the profiler's own or node's.
 */
function areaOf(stack: { source: string }[]): string {
  for (let i = stack.length - 1; i >= 0; i--) {
    const { source } = stack[i];
    const area = AREAS.find(([, pattern]) => pattern.test(source))?.[0];
    if (area) return area;
    if (source.startsWith('packages/')) return `other: ${source}`;
  }
  return 'other: node and V8';
}

const MB = 1e6;
const table = (title: string, m: Map<string, number>) => [
  `| ${title} | MB | share |`,
  '|---|---|---|',
  ...[...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `| ${k} | ${(v / MB).toFixed(1)} | ${((100 * v) / total).toFixed(1)}% |`),
];
const md = [
  `Sampled bytes: ${(total / MB).toFixed(1)} MB (${basename(profilePath)}).`,
  '',
  ...table('area (innermost frame of our code)', byArea),
  '',
  ...table('allocating function', byFunction),
  '',
].join('\n');
const results = flag('results');
if (results) writeFileSync(join(here, 'results', `${results}.md`), md);
process.stdout.write(md);
