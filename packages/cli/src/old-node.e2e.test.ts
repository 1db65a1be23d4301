/**
 * In a checkout, `packages/cli/bin/certkit.js` (or `node_modules/.bin/certkit`) run by an older system `node`
 * says what works: npx certkit, which runs the Node.js of the `node` devDependency. An installed certkit on an
 * old Node says only what it needs (installed-packages.e2e.test.ts).
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';
import { nodeBinary } from '@certkit/testenv/packaging/node-lines';

const run = promisify(execFile);

describe('certkit from a checkout on a Node.js too old for it', () => {
  it('refuses in one line that says to run npx certkit', async () => {
    // Node 20 from the node package (cached across runs in ~/.cache/certkit/node-lines).
    const node20 = await nodeBinary(20);
    const result = await run(node20, [CERTKIT_BIN, 'version'], { env: certkitEnv() }).then(
      () => assert.fail('certkit ran on Node 20'),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    const { stdout: version } = await run(node20, ['--version']);
    assert.equal(
      result.stderr,
      `certkit: needs Node.js 22.13 or later; this is ${version.trim()} (in this checkout, run npx certkit: ` +
        'it uses the Node.js of the node devDependency)\n',
    );
  });
});
