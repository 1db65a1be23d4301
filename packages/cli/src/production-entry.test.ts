import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMPILED_PACKAGES, recordBuilds, sourceDigest, staleBuilds } from '../../../scripts/build.ts';

/**
 * How certkit runs in production (docs/adr/1103-compiled-javascript-in-production.md): the compiled dist/
 * through bin/certkit.js, with the same node flags from `npm start` and the container image, and package
 * exports that give Node dist/ and the repository's tools (the `source` condition) the sources.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Manifest {
  scripts: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
}
const manifest = (path: string) => JSON.parse(read(path)) as Manifest;

describe('production entry points', () => {
  const start = manifest('package.json').scripts.start;
  const startFlags = /^NODE_OPTIONS= node((?: --[\w-]+(?:=\S+)?)*) packages\/cli\/bin\/certkit\.js up$/.exec(
    start,
  );

  it('npm start runs bin/certkit.js with NODE_OPTIONS cleared, so the .npmrc source condition does not apply', () => {
    assert.ok(startFlags, `package.json start: ${start}`);
  });

  it('the container image runs bin/certkit.js with the same node flags as npm start', () => {
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(read('deploy/Containerfile'));
    assert.ok(entrypoint, 'deploy/Containerfile has no ENTRYPOINT [...]');
    const flags = startFlags![1].split(' ').filter(Boolean);
    assert.deepEqual(JSON.parse(entrypoint[1]), ['node', ...flags, 'packages/cli/bin/certkit.js']);
  });

  it('bin/certkit.js loads the CLI by its package name, so export conditions pick dist/ or src/', () => {
    // A dynamic import, so that the compile cache is enabled before the CLI's modules load; `controller` takes
    // the bundle of the same main module (docs/adr/1130-idle-controller-bundle.md), and so does `cainjector`.
    const bin = read('packages/cli/bin/certkit.js');
    assert.match(
      bin,
      /^await import\(bundled \? '@certkit\/cli\/controller-bundle' : '@certkit\/cli\/main'\);$/m,
    );
    assert.match(
      bin,
      /^const bundled = process\.argv\[2\] === 'controller' \|\| process\.argv\[2\] === 'cainjector';$/m,
    );
  });

  it('the controller bundle export is main.ts as sources and types, the bundle built from it by default', () => {
    const { exports } = manifest('packages/cli/package.json');
    assert.deepEqual(exports['./controller-bundle'], {
      source: './src/main.ts',
      types: './dist/main.d.ts',
      default: './dist/controller-bundle/main.js',
    });
  });

  it('every compiled package exports source, then types, then default, each naming the same module', () => {
    for (const pkg of COMPILED_PACKAGES) {
      const { exports } = manifest(`packages/${pkg}/package.json`);
      assert.ok(Object.keys(exports).length > 0, pkg);
      for (const [subpath, target] of Object.entries(exports)) {
        // The one export whose build is not the module's own dist/ file (checked above).
        if (pkg === 'cli' && subpath === './controller-bundle') continue;
        assert.equal(typeof target, 'object', `${pkg} ${subpath}`);
        const conditions = target as Record<string, string>;
        // Node and TypeScript take the first condition that applies, in the object's order.
        assert.deepEqual(Object.keys(conditions), ['source', 'types', 'default'], `${pkg} ${subpath}`);
        const module = /^\.\/src\/(.+)\.ts$/.exec(conditions.source)?.[1];
        assert.ok(module, `${pkg} ${subpath}: source ${conditions.source}`);
        assert.equal(conditions.types, `./dist/${module}.d.ts`, `${pkg} ${subpath}`);
        assert.equal(conditions.default, `./dist/${module}.js`, `${pkg} ${subpath}`);
      }
    }
  });

  it('the build compiles every package production runs, and the build project references each', () => {
    const references = (JSON.parse(read('tsconfig.build.json')) as { references: { path: string }[] })
      .references;
    assert.deepEqual(
      references.map((r) => r.path),
      COMPILED_PACKAGES.map((p) => `packages/${p}/tsconfig.build.json`),
    );
  });
});

describe('staleBuilds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-build-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'tsconfig.build.base.json'), '{}');
  for (const pkg of COMPILED_PACKAGES) {
    mkdirSync(join(dir, 'packages', pkg, 'src', 'sub'), { recursive: true });
    mkdirSync(join(dir, 'packages', pkg, 'dist'));
    writeFileSync(join(dir, 'packages', pkg, 'package.json'), '{}');
    writeFileSync(join(dir, 'packages', pkg, 'tsconfig.build.json'), '{}');
    writeFileSync(join(dir, 'packages', pkg, 'src', 'index.ts'), `export const name = '${pkg}';\n`);
    writeFileSync(join(dir, 'packages', pkg, 'src', 'sub', 'deep.ts'), 'export const deep = 1;\n');
  }
  const build = () =>
    recordBuilds(
      COMPILED_PACKAGES.map((p) => [p, sourceDigest(p, dir)] as const),
      dir,
    );

  it('names every package that was never built', () => {
    assert.deepEqual(staleBuilds(dir), [...COMPILED_PACKAGES]);
  });

  it('names none right after a build', () => {
    build();
    assert.deepEqual(staleBuilds(dir), []);
  });

  it('names the package whose source changed, at any depth, and only it', () => {
    build();
    writeFileSync(join(dir, 'packages/runtime/src/sub/deep.ts'), 'export const deep = 2;\n');
    assert.deepEqual(staleBuilds(dir), ['runtime']);
  });

  it('names a package with a new, removed or renamed source file', () => {
    build();
    writeFileSync(join(dir, 'packages/apiserver/src/added.ts'), 'export {};\n');
    rmSync(join(dir, 'packages/certificates/src/sub/deep.ts'));
    assert.deepEqual(staleBuilds(dir), ['apiserver', 'certificates']);
  });

  it('names a package whose package.json changed (the runtime imports its own as JSON)', () => {
    build();
    writeFileSync(join(dir, 'packages/apimachinery/package.json'), '{"version":"0.2.0"}');
    assert.deepEqual(staleBuilds(dir), ['apimachinery']);
  });

  it('names every package when the shared compiler settings changed', () => {
    build();
    writeFileSync(join(dir, 'tsconfig.build.base.json'), '{"compilerOptions":{}}');
    assert.deepEqual(staleBuilds(dir), [...COMPILED_PACKAGES]);
  });

  it('ignores test files, which the build does not compile', () => {
    build();
    writeFileSync(join(dir, 'packages/cli/src/new.test.ts'), 'export {};\n');
    assert.deepEqual(staleBuilds(dir), []);
  });
});
