import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';

/**
 * The two ways the code runs (docs/adr/1103-compiled-javascript-in-production.md): tests under the `source`
 * condition, which the repository's .npmrc puts in NODE_OPTIONS, and `certkit` processes over dist/.
 */

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/** Where a node process in `env` resolves a workspace package to. */
async function resolvedIn(env: NodeJS.ProcessEnv, specifier: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', `console.log(import.meta.resolve(${JSON.stringify(specifier)}))`],
    { cwd: here, env },
  );
  return stdout.trim();
}

describe('compiled and source resolution', () => {
  it('certkitEnv removes the source condition from NODE_OPTIONS, in each spelling, and keeps the rest', () => {
    const cases: [string, string][] = [
      ['--conditions=source', ''],
      ['--conditions source', ''],
      ['-C source', ''],
      [
        '--max-old-space-size=100 --conditions=source --trace-warnings',
        '--max-old-space-size=100 --trace-warnings',
      ],
      ['--conditions=sources --conditions=source-map', '--conditions=sources --conditions=source-map'],
    ];
    for (const [given, expected] of cases) {
      assert.equal(certkitEnv({ NODE_OPTIONS: given }).NODE_OPTIONS, expected, given);
    }
  });

  it('tests run the sources: this process’s environment resolves @certkit packages to src/*.ts', async () => {
    assert.match(await resolvedIn(process.env, '@certkit/runtime'), /\/packages\/runtime\/src\/index\.ts$/);
    assert.match(await resolvedIn(process.env, '@certkit/cli/main'), /\/packages\/cli\/src\/main\.ts$/);
  });

  it('certkit processes run the build: certkitEnv resolves them to dist/*.js', async () => {
    const env = certkitEnv();
    assert.match(await resolvedIn(env, '@certkit/runtime'), /\/packages\/runtime\/dist\/index\.js$/);
    assert.match(await resolvedIn(env, '@certkit/cli/main'), /\/packages\/cli\/dist\/main\.js$/);
  });

  it('bin/certkit.js runs under both: `certkit help` from dist/ and from src/ print the same', async () => {
    const compiled = await run(process.execPath, [CERTKIT_BIN, 'help'], { env: certkitEnv() });
    const source = await run(process.execPath, [CERTKIT_BIN, 'help'], { env: process.env });
    assert.match(compiled.stdout, /^usage: certkit <command>/);
    assert.equal(compiled.stdout, source.stdout);
  });
});
