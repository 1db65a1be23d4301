/**
 * Bundles the compiled `certkit` command into `packages/cli/dist/controller-bundle/` for `certkit controller`
 * (docs/adr/1130-idle-controller-bundle.md): the long-running process under a pod's memory limit.
 *
 * One ES module graph of a few dozen chunks instead of ~250 files: Node's module loader resolves, reads and
 * links each file, and that per-module work is what grows an idle controller (module records and namespaces
 * in V8's heap, and the loader's path functions run often enough to be optimised, which pages the optimising
 * compilers' code in). Minified, so the source text V8 keeps for lazy compilation is smaller, and ASCII only
 * (esbuild's default charset), so no source string needs two bytes per character.
 *
 * - Input is the build's `dist/*.js` (run after `tsc --build`), so the bundle is exactly the compiled code;
 *   esbuild follows their source maps, and the bundle's own maps point at the TypeScript sources.
 * - `splitting` keeps every dynamic `import()` a separate chunk: what `main.ts` and the runtime load lazily
 *   (the other commands, the ACME client's undici and jose, prom-client) stays lazy.
 * - npm dependencies stay external (resolved from node_modules as before; lazy ones stay unloaded), and so does
 *   `@certkit/apiserver`: the controller never loads it, and its SQLite writer is a worker file addressed by
 *   URL that a bundle would move.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** The workspace packages the bundle inlines: everything `certkit controller` runs of certkit's own code. */
const BUNDLED = ['apimachinery', 'runtime', 'certificates', 'cli'] as const;

export const CONTROLLER_BUNDLE_DIR = 'packages/cli/dist/controller-bundle';

/** Every npm dependency of the bundled packages, and the API server: left as imports for Node to resolve. */
function externals(root: string): string[] {
  const names = new Set<string>(['@certkit/apiserver']);
  for (const pkg of BUNDLED) {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const deps of [manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies])
      for (const name of Object.keys(deps ?? {}))
        if (!BUNDLED.some((bundled) => name === `@certkit/${bundled}`)) names.add(name);
  }
  return [...names].flatMap((name) => [name, `${name}/*`]);
}

/**
 * Node's built-in modules, imported by the bundle as objects whose exports load the module on first use
 * (docs/adr/1131-lazy-built-in-modules-in-the-controller-bundle.md).
 *
 * An ES `import { x } from 'node:util'` makes Node build the module's ES namespace, which reads every export,
 * lazy getters included: `util.diff`, `crypto.webcrypto`, `util`'s `MIMEType` and the worker modules behind
 * them all load, in every process. And every built-in the bundle names is loaded at start: `dgram` and `dns`
 * for the DNS-01 solver, `child_process` for exec credentials, `vm` for the memory release, which an idle
 * controller never runs. Instead each `node:*` import resolves to a small CommonJS module whose exports are
 * getters over `process.getBuiltinModule` (ADR 1101's pattern for node:http), so a built-in loads when the
 * code first touches one of its exports, and no namespace is ever built. The getters are the export names of
 * the Node that builds (`Object.keys`, the names an ES import of the built-in may use); the controller runs
 * on the same Node. esbuild's interop reads a CommonJS module's exports as property accesses at each use, so
 * a call costs one getter more, nothing next to what the built-ins do.
 */
const lazyBuiltins: Plugin = {
  name: 'lazy-node-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, namespace: 'lazy-builtin' }));
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
      const names = Object.keys(process.getBuiltinModule(args.path) as object);
      const id = JSON.stringify(args.path);
      return {
        loader: 'js',
        contents: [
          'let loaded;',
          `const load = () => (loaded ??= process.getBuiltinModule(${id}));`,
          // On a prototype, not the exports object: esbuild's interop copies a CommonJS module's own
          // properties into a new object for every module that imports it (a closure per export, ~0.7 MB of
          // heap over the bundle's imports); an object inheriting the getters gets none to copy.
          'const getters = {};',
          `for (const name of ${JSON.stringify(names)})`,
          '  Object.defineProperty(getters, name, { get: () => load()[name], enumerable: true });',
          'module.exports = Object.create(getters);',
        ].join('\n'),
      };
    });
  },
};

export async function bundleController(root: string): Promise<void> {
  const outdir = join(root, CONTROLLER_BUNDLE_DIR);
  // Chunk names carry content hashes: a rebuild would otherwise leave yesterday's chunks beside today's.
  await rm(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: { main: join(root, 'packages/cli/dist/main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22.13',
    // The compiled packages, not their sources: the `source` condition the repository's .npmrc sets for npm
    // scripts must not pull TypeScript into the bundle.
    conditions: ['default'],
    external: externals(root),
    minify: true,
    // Error messages and stack traces keep their names: certkit logs `err.name` and class names.
    keepNames: false,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [lazyBuiltins],
    // The bundle's code uses `performance` for performance.now() alone; Node's global loads node:perf_hooks
    // whole on first access (packages/cli/src/bundle-performance.ts, ADR 1131).
    inject: [join(root, 'packages/cli/dist/bundle-performance.js')],
  });
}
