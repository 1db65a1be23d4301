import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { writeResults } from './lib.ts';
import { staleBuilds } from '../scripts/build.ts';

/**
 * What an idle `certkit controller` on an empty cluster is made of, read from outside the process
 * (docs/adr/1130-idle-controller-bundle.md): RssFile and RssAnon, the resident pages per mapping
 * (/proc/PID/smaps: the node binary's code and read-only data, malloc's heap, anonymous mappings, where V8's
 * heap lives), and from inside through a module preloaded with --import, V8's heap spaces and the modules the
 * process loaded. Run as deploy/deployment.yaml runs it (bundled), and the same flags on the packages' dist/
 * files, after 20 s idle, once each; a bare node and a node with a TLS context as floors.
 *
 * Usage: npm run bench:idle-breakdown [-- --results=NAME]
 * RSS and mappings come from a run with nothing preloaded, V8's heap and the modules from a second run with the
 * recorder; bench:idle has the RSS figures over several interleaved rounds.
 */

const root = join(import.meta.dirname, '..');
const RESULTS =
  process.argv.find((a) => a.startsWith('--results='))?.slice('--results='.length) ?? 'idle-breakdown';
const SETTLE_MS = 20_000;
const MiB = 1024 * 1024;

/** Preloaded: records module URLs as they load; writes them, the built-ins and V8's heap spaces on SIGTERM. */
const RECORDER = `data:text/javascript,${encodeURIComponent(`
  import { registerHooks } from 'node:module';
  import { writeFileSync } from 'node:fs';
  import v8 from 'node:v8';
  const loaded = [];
  registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
  process.on('SIGTERM', () => {
    writeFileSync(process.env.BREAKDOWN_FILE, JSON.stringify({
      loaded, builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).length,
      spaces: v8.getHeapSpaceStatistics(), code: v8.getHeapCodeStatistics() }));
    process.exit(0);
  });
`)}`;

interface Variant {
  name: string;
  what: string;
  args(kubeconfig: string, record: boolean): string[];
  recorded: boolean;
}

const controller = (entry: string) => (kubeconfig: string, record: boolean) => [
  ...SHIPPED_CONTROLLER_NODE_ARGS,
  ...(record ? ['--import', RECORDER] : []),
  join(root, entry),
  'controller',
  '--kubeconfig',
  kubeconfig,
  '--leader-elect=false',
  '--metrics-bind-address=0',
];
const VARIANTS: Variant[] = [
  {
    name: 'bare-node',
    what: 'node -e "setInterval(() => {}, 1000)"',
    args: () => ['-e', 'setInterval(() => {}, 1000)'],
    recorded: false,
  },
  {
    name: 'tls-floor',
    what: 'node:https loaded and one TLS context made (tls.createSecureContext), what any HTTPS client has',
    args: () => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      '-e',
      "require('node:https'); require('node:tls').createSecureContext({}); setInterval(() => {}, 1000)",
    ],
    recorded: false,
  },
  {
    name: 'shipped',
    what: 'bin/certkit.js controller as deploy/deployment.yaml runs it (the controller bundle)',
    args: controller('packages/cli/bin/certkit.js'),
    recorded: true,
  },
  {
    name: 'shipped-unbundled',
    what: "the same flags running packages/cli/dist/main.js controller (the packages' dist/ files)",
    args: controller('packages/cli/dist/main.js'),
    recorded: true,
  },
];

interface Mapping {
  what: string;
  rss: number;
}

/** Resident KiB per kind of mapping, from /proc/PID/smaps. */
function mappings(smaps: string): Mapping[] {
  const byKind = new Map<string, number>();
  let kind = '';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const [, perms, path] = header;
      kind = path.endsWith('/bin/node')
        ? `node binary ${perms.includes('x') ? 'code' : perms.includes('w') ? 'data' : 'read-only data'}`
        : path.startsWith('/')
          ? 'shared libraries'
          : path === '[heap]'
            ? 'malloc heap ([heap])'
            : path === ''
              ? `anonymous ${perms}`
              : path;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byKind.set(kind, (byKind.get(kind) ?? 0) + Number(rss[1]) * 1024);
  }
  return [...byKind]
    .map(([what, rss]) => ({ what, rss }))
    .filter((m) => m.rss >= 0.1 * MiB)
    .sort((a, b) => b.rss - a.rss);
}

interface Recorded {
  loaded: string[];
  builtins: number;
  spaces: { space_name: string; space_size: number; space_used_size: number }[];
  code: { bytecode_and_metadata_size: number; external_script_source_size: number };
}

/** Groups module URLs by where they come from: a certkit package, an npm package, the bundle. */
function moduleOrigins(urls: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const url of urls) {
    const origin = url.includes('/controller-bundle/')
      ? 'certkit controller bundle'
      : url.includes('/node_modules/')
        ? (/\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? 'node_modules')
        : url.includes('/packages/')
          ? `certkit ${/\/packages\/([^/]+)/.exec(url)?.[1]}`
          : url.startsWith('node:')
            ? 'node: built-ins imported'
            : 'other';
    out[origin] = (out[origin] ?? 0) + 1;
  }
  return out;
}

if (staleBuilds().length > 0) throw new Error('stale or missing build: run npm run build');
const dir = await mkdtemp(join(tmpdir(), 'certkit-idle-breakdown-'));
const cluster = await startCluster();
interface Row {
  variant: string;
  what: string;
  rssMiB: number;
  rssFileMiB: number;
  rssAnonMiB: number;
  threads: number;
  mappings: { what: string; rssMiB: number }[];
  v8HeapSpacesMiB?: Record<string, number>;
  bytecodeMiB?: number;
  modules?: Record<string, number>;
  nodeBuiltins?: number;
}
const rows: Row[] = [];
const md: string[] = [];
try {
  for (const variant of VARIANTS) {
    // Once to fill the compile cache, then RSS and mappings read with nothing preloaded (the recorder's module
    // hook runs JavaScript for every module loaded, enough to wake V8's optimising compilers), then V8's heap
    // and the module list read by the recorder in a third run.
    let row: Row | undefined;
    for (const pass of variant.recorded ? ['warm', 'measure', 'record'] : ['warm', 'measure']) {
      const file = join(dir, `${variant.name}.json`);
      const child = spawn(process.execPath, variant.args(cluster.kubeconfigPath, pass === 'record'), {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          NODE_COMPILE_CACHE: join(dir, 'compile-cache'),
          BREAKDOWN_FILE: file,
          ...SHIPPED_CONTROLLER_ENV,
        },
      });
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      await Promise.race([new Promise((r) => setTimeout(r, pass === 'warm' ? 8_000 : SETTLE_MS)), exited]);
      if (child.exitCode !== null) throw new Error(`${variant.name} exited with ${child.exitCode}`);
      if (pass === 'warm') {
        child.kill('SIGTERM');
        await exited;
        continue;
      }
      if (pass === 'record') {
        child.kill('SIGTERM');
        await exited;
        const recorded = JSON.parse(await readFile(file, 'utf8')) as Recorded;
        row!.v8HeapSpacesMiB = Object.fromEntries(
          recorded.spaces
            .filter((s) => s.space_size > 0)
            .map((s) => [s.space_name, round(s.space_size / MiB, 2)]),
        );
        row!.bytecodeMiB = round(recorded.code.bytecode_and_metadata_size / MiB, 2);
        row!.modules = moduleOrigins(recorded.loaded);
        row!.nodeBuiltins = recorded.builtins;
        continue;
      }
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
      const maps = mappings(await readFile(`/proc/${child.pid}/smaps`, 'utf8'));
      child.kill('SIGTERM');
      await exited;
      row = {
        variant: variant.name,
        what: variant.what,
        rssMiB: round(kib('VmRSS') / MiB),
        rssFileMiB: round(kib('RssFile') / MiB),
        rssAnonMiB: round(kib('RssAnon') / MiB),
        threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1]),
        mappings: maps.map((m) => ({ what: m.what, rssMiB: round(m.rss / MiB) })),
      };
    }
    rows.push(row!);
    {
      const r = row!;
      md.push(
        `### ${r.variant}: ${r.what}`,
        '',
        `RSS ${r.rssMiB} MiB = RssFile ${r.rssFileMiB} + RssAnon ${r.rssAnonMiB}; ${r.threads} threads.`,
        '',
        '| resident | MiB |',
        '|---|---|',
        ...r.mappings.map((m) => `| ${m.what} | ${m.rssMiB} |`),
        ...(r.v8HeapSpacesMiB
          ? [
              '',
              `V8 heap spaces (MiB): ${Object.entries(r.v8HeapSpacesMiB)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')}; bytecode ${r.bytecodeMiB}.`,
              '',
              `Modules loaded: ${Object.entries(r.modules!)
                .sort((a, b) => b[1] - a[1])
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')}; Node built-ins ${r.nodeBuiltins}.`,
            ]
          : []),
        '',
      );
    }
  }
} finally {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
}
md.push(
  `MiB = 2²⁰ bytes; one reading each, ${SETTLE_MS / 1000} s after start, on an empty cluster (the cert-manager.io CRDs only).`,
);
await writeResults(RESULTS, { date: new Date().toISOString(), variants: rows }, md.join('\n'));
