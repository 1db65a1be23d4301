import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * Every dependency with an install script is named in package.json's `allowScripts` (true: it runs; false: it
 * does not): npm 11.16 and later print an advisory on `npm ci` for each one that is not, the first thing a new
 * user reads, and npm 12 blocks them. esbuild was added without an entry once; this test names the next one.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('install scripts', () => {
  it('every locked package with an install script is reviewed in allowScripts', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean; link?: boolean }>;
    };
    const { allowScripts = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean | string>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript && !entry.link)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(withScripts.includes('node'), 'the node package (Node 26) has an install script');
    const unreviewed = withScripts.filter((name) => !Object.hasOwn(allowScripts, name));
    assert.deepEqual(unreviewed, [], 'add them to allowScripts in package.json (true runs the script)');
  });
});
