import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkMarkdown, markdownFiles, treeFromPaths } from './check-doc-paths.ts';

const tree = treeFromPaths([
  'README.md',
  'docs/architecture.md',
  'docs/adr/README.md',
  'docs/adr/0010-split-secret-cache.md',
  'packages/apiserver/README.md',
  'packages/apiserver/src/http/handlers/patch.ts',
  'packages/apiserver/src/registry/generic/store.ts',
  'packages/certificates/src/controllers/certificates/readiness/readiness.ts',
  'packages/certificates/src/secrets/split-cache.e2e.test.ts',
  'bench/results/scale.md',
]);

describe('checkMarkdown', () => {
  it('passes paths that exist: rooted, relative to the package, in a section, links, commands', () => {
    const doc = [
      'See `packages/apiserver/src/http/handlers/patch.ts` and [ADR 0010](docs/adr/0010-split-secret-cache.md).',
      '```sh',
      'npx node --test packages/certificates/src/secrets/split-cache.e2e.test.ts',
      '```',
      'Globs and build output are not paths: `packages/*/src/**/*.test.ts`, `dist/index.js`, `/metrics`.',
    ].join('\n');
    assert.deepEqual(checkMarkdown('README.md', doc, tree), []);
    assert.deepEqual(
      checkMarkdown('packages/apiserver/README.md', 'The store is `registry/generic/store.ts`.', tree),
      [],
    );
    assert.deepEqual(
      checkMarkdown(
        'docs/architecture.md',
        '`controllers/certificates/` holds `readiness/readiness.ts`.',
        tree,
      ),
      [],
    );
    assert.deepEqual(checkMarkdown('docs/adr/README.md', '[0010](0010-split-secret-cache.md)', tree), []);
  });

  it('reports a path that is gone, with file:line', () => {
    const doc = 'Fine.\nThe patch handler is `packages/apiserver/src/http/patch.ts`.';
    assert.deepEqual(checkMarkdown('README.md', doc, tree), [
      'README.md:2: `packages/apiserver/src/http/patch.ts` does not exist',
    ]);
    assert.deepEqual(checkMarkdown('packages/apiserver/README.md', 'See `registry/store.ts`.', tree), [
      'packages/apiserver/README.md:1: `registry/store.ts` matches no file or folder of the repository',
    ]);
  });

  it('reports a dead link and a command naming a file that is gone', () => {
    const doc = '[ADR](adr/1001-acme-client-on-jose.md)\n`npx node --test packages/cli/src/gone.e2e.test.ts`';
    const problems = checkMarkdown('docs/architecture.md', doc, tree);
    assert.equal(problems.length, 2);
    assert.match(
      problems[0],
      /^docs\/architecture\.md:1: link \(adr\/1001-acme-client-on-jose\.md\) does not exist/,
    );
    assert.match(problems[1], /^docs\/architecture\.md:2: `packages\/cli\/src\/gone\.e2e\.test\.ts`/);
  });

  it('reports citations of files outside the repository', () => {
    const doc = 'From ../shared/DESIGN.md and research/acme.md, see [x](../../../seeds/a.md).';
    const problems = checkMarkdown('docs/adr/README.md', doc, tree);
    for (const what of ['../shared', 'research/', 'DESIGN.md', 'seeds/']) {
      assert.ok(
        problems.some((problem) => problem.includes(`cites ${what}`)),
        `${what} in ${problems.join('; ')}`,
      );
    }
    assert.ok(problems.some((problem) => problem.includes('leaves the repository')));
  });
});

describe('checkMarkdown, strict', () => {
  it('resolves a short path against the folders its section names, and the sections it is in', () => {
    const doc = [
      '## Certificates (`packages/certificates/src/controllers/certificates/`)',
      '### Readiness',
      '`readiness/readiness.ts`',
      '## Elsewhere',
      '`readiness/readiness.ts`',
    ].join('\n');
    assert.deepEqual(checkMarkdown('docs/architecture.md', doc, tree, true), [
      'docs/architecture.md:5: `readiness/readiness.ts` is found only by its ending, not beside the doc or in its section',
    ]);
  });
});

describe('checkMarkdown, module specifiers', () => {
  it('checks that a @certkit/… specifier names a module of that package', () => {
    const modules = treeFromPaths([
      'packages/testenv/package.json',
      'packages/testenv/src/bind/bind.ts',
      'packages/apimachinery/package.json',
    ]);
    const doc =
      '`@certkit/testenv/bind/bind`, `@certkit/apimachinery`, `@certkit/*`\n`@certkit/testenv/testing/bind`';
    assert.deepEqual(checkMarkdown('README.md', doc, modules), [
      'README.md:2: `@certkit/testenv/testing/bind`: no module packages/testenv/src/testing/bind.ts',
    ]);
  });
});

describe('checkMarkdown, anchors', () => {
  it("checks that a link's #anchor names a heading of the linked file, or of this one", () => {
    const architecture =
      "# Architecture\n### Where a PATCH goes\n### Where a Certificate's Ready is decided\n";
    const readDoc = (path: string) => (path === 'docs/architecture.md' ? architecture : undefined);
    const good = [
      '[patch](docs/architecture.md#where-a-patch-goes)',
      '[ready](docs/architecture.md#where-a-certificates-ready-is-decided)',
      '## Here',
      '[here](#here)',
    ].join('\n');
    assert.deepEqual(checkMarkdown('README.md', good, tree, false, readDoc), []);
    const bad = '[patch](docs/architecture.md#where-patch-goes)\n[x](#nowhere)';
    assert.deepEqual(checkMarkdown('README.md', bad, tree, false, readDoc), [
      'README.md:1: link (docs/architecture.md#where-patch-goes) names no heading of docs/architecture.md',
      'README.md:2: link (#nowhere) names no heading of this file',
    ]);
  });
});

describe('markdownFiles', () => {
  it('leaves out the generated benchmark reports', () => {
    assert.deepEqual(markdownFiles(['README.md', 'bench/results/scale.md', 'src/a.ts']), ['README.md']);
  });
});
