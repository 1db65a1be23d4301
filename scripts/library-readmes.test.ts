import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The "Entry points" of the library packages' READMEs (what a developer installing @certkit/runtime or
 * @certkit/apimachinery reads first) name only what the package exports: a class, type or function renamed
 * or never exported (`Store` for `Indexer`, once) fails here rather than in a user's editor. Text only: every
 * backticked name that starts with a capital letter, against the `export`ed declarations of the package's
 * sources. Names of other packages' types that the README mentions on purpose are listed per package.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Names declared with `export` (class, interface, type, function, const, enum) in the package's sources. */
function exportedNames(pkg: string): Set<string> {
  const names = new Set<string>();
  const src = join(root, 'packages', pkg, 'src');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    const declared =
      /^export (?:declare )?(?:abstract )?(?:class|interface|type|function\*?|const|let|enum) (\w+)/gm;
    for (const m of text.matchAll(declared)) names.add(m[1]);
    // `export { a, b as C } from './x.ts'` and `export type { … }`.
    for (const m of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
      for (const part of m[1].split(',')) {
        const name = part
          .trim()
          .replace(/^type /, '')
          .split(/\s+as\s+/)
          .at(-1);
        if (name) names.add(name);
      }
    }
  }
  return names;
}

/** Backticked names starting with a capital letter (a trailing `()` dropped) in the README's "Entry points". */
function entryPointNames(pkg: string): string[] {
  const readme = readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Entry points\n');
  assert.ok(start >= 0, `packages/${pkg}/README.md has no "Entry points" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...new Set([...section.matchAll(/`([A-Z][A-Za-z0-9_]*)(?:\(\))?`/g)].map((m) => m[1]))];
}

describe('the library READMEs name what the packages export', () => {
  const cases: [pkg: string, fromElsewhere: string[]][] = [
    // StatusError and MetricsRegistry are @certkit/apimachinery's (runtime re-exports the registry).
    ['runtime', ['StatusError', 'Status', 'MetricsRegistry']],
    // json-bytes' constants are exported by a module outside the index, named in its own paragraph.
    ['apimachinery', []],
  ];
  for (const [pkg, fromElsewhere] of cases) {
    it(`@certkit/${pkg}`, () => {
      const exported = exportedNames(pkg);
      const unknown = entryPointNames(pkg).filter((n) => !exported.has(n) && !fromElsewhere.includes(n));
      assert.deepEqual(unknown, [], `packages/${pkg}/README.md names what the package does not export`);
    });
  }
});
