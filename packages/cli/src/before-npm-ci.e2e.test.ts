/**
 * `npm start` and `npm test` in a checkout where `npm ci` has not run: one line saying to run it, instead of
 * the system node's stack trace on scripts/build.ts (ERR_UNKNOWN_FILE_EXTENSION) or "tsc: not found".
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repository = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('a checkout before npm ci', () => {
  for (const script of ['start', 'test']) {
    it(`npm ${script}: says to run npm ci first, and fails`, async () => {
      // What a clone has before `npm ci`: package.json and the scripts, no node_modules.
      const dir = await mkdtemp(join(tmpdir(), 'certkit-before-ci-'));
      try {
        await cp(join(repository, 'package.json'), join(dir, 'package.json'));
        await cp(join(repository, 'scripts'), join(dir, 'scripts'), { recursive: true });
        const result = await run('npm', [script], {
          cwd: dir,
          env: { ...process.env, npm_config_loglevel: 'error' },
        }).then(
          () => assert.fail(`npm ${script} succeeded without node_modules`),
          (err: { code: number; stderr: string }) => err,
        );
        assert.notEqual(result.code, 0);
        assert.match(
          result.stderr,
          /^certkit: the dependencies are not installed: run `npm ci` first \(npm ci && npm start\)$/m,
        );
        assert.doesNotMatch(result.stderr, /ERR_UNKNOWN_FILE_EXTENSION|not found/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
