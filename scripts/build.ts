/**
 * Compiles the product packages' TypeScript sources into JavaScript and declarations in `packages/NAME/dist/`
 * (docs/adr/1103-compiled-javascript-in-production.md): what `npm start`, `bin/certkit.js` and the container
 * image run. Tests, typecheck and lint run the sources through the `source` export condition and need no build.
 *
 * The compiler is TypeScript 7's `tsc` in build mode over `tsconfig.build.json` (one project per package,
 * referencing the packages it imports, so each is checked against its dependencies' declarations and rebuilt
 * only when something it depends on changed). After it, each package's `dist/.source-digest` records a digest
 * of the sources it was built from; `staleBuilds()` compares it with the sources as they are now, so that a
 * test running the compiled CLI fails loudly instead of running yesterday's code.
 *
 * Usage: `npm run build` (run by `npm ci` through `prepare`), or `node scripts/build.ts --check`, which exits 1
 * naming each package whose `dist/` is missing or older than its sources.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { globSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleController } from './bundle-controller.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The packages production runs, in build order; testenv is test support and runs from its sources only. */
export const COMPILED_PACKAGES = ['apimachinery', 'runtime', 'apiserver', 'certificates', 'cli'] as const;

const DIGEST_FILE = '.source-digest';

/**
 * A digest of everything a package's `dist/` is made from: its non-test sources (paths and contents), its
 * package.json (the runtime imports it as JSON) and the compiler settings.
 */
export function sourceDigest(pkg: string, root = ROOT): string {
  const dir = join(root, 'packages', pkg);
  const hash = createHash('sha256');
  const inputs = [
    ...globSync('src/**/*.ts', { cwd: dir }).filter((file) => !file.endsWith('.test.ts')),
    'package.json',
    'tsconfig.build.json',
  ].sort();
  for (const file of inputs)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(dir, file)))
      .update('\0');
  hash.update(readFileSync(join(root, 'tsconfig.build.base.json')));
  // The controller bundle (scripts/bundle-controller.ts) is part of cli's build: a change to how it is made
  // rebuilds it.
  if (pkg === 'cli') hash.update(readFileSync(new URL('./bundle-controller.ts', import.meta.url)));
  return hash.digest('hex');
}

/** What the last build recorded for a package, or undefined when it has no (finished) build. */
function builtDigest(pkg: string, root: string): string | undefined {
  try {
    return readFileSync(join(root, 'packages', pkg, 'dist', DIGEST_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The packages whose `dist/` is missing or was built from other sources than the ones checked out now. */
export function staleBuilds(root = ROOT): string[] {
  return COMPILED_PACKAGES.filter((pkg) => builtDigest(pkg, root) !== sourceDigest(pkg, root));
}

/** Records, for each package, the digest of the sources its dist/ was just built from. */
export function recordBuilds(digests: (readonly [string, string])[], root = ROOT): void {
  for (const [pkg, digest] of digests)
    writeFileSync(join(root, 'packages', pkg, 'dist', DIGEST_FILE), `${digest}\n`);
}

async function build(): Promise<void> {
  // The package exports no path to its binary; its package.json is exported, and the binary sits beside it.
  const tsc = join(
    dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')),
    'bin/tsc',
  );
  const started = performance.now();
  // The digests are taken before compiling: a source edited while tsc runs leaves its package stale.
  const digests = COMPILED_PACKAGES.map((pkg) => [pkg, sourceDigest(pkg)] as const);
  execFileSync(process.execPath, [tsc, '--build', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  await bundleController(ROOT);
  recordBuilds(digests);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `built ${COMPILED_PACKAGES.map((p) => `packages/${p}/dist`).join(', ')} in ${seconds} s\n`,
  );
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const stale = staleBuilds();
    if (stale.length > 0) {
      process.stderr.write(
        `stale or missing build: ${stale.map((p) => `packages/${p}/dist`).join(', ')}; run \`npm run build\`\n`,
      );
      process.exit(1);
    }
  } else {
    await build();
  }
}
