import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

/**
 * The runtime as a controller loads it, in a fresh process: every module of its entry point imported, and
 * which of Node's own modules that brought in. node:http2 and undici cost ~14 MB of RSS (see node-http.ts);
 * an ESM `import … from 'node:http'` anywhere in the runtime brings them back.
 */

const run = promisify(execFile);
const entry = join(import.meta.dirname, '..', 'index.ts');

describe("the runtime's module footprint", () => {
  it('imports the whole runtime without loading node:http2 or undici', async () => {
    const script = `await import(${JSON.stringify(entry)});
      process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => /http2|undici/.test(m))));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.deepEqual(JSON.parse(stdout), []);
  });

  it('would see them: an ESM import of node:http loads node:http2', async () => {
    // The premise of the test above, so that it cannot pass for a reason that has gone away (a Node that no
    // longer does this would make the workaround in node-http.ts unnecessary).
    const script = `await import('node:http');
      process.stdout.write(JSON.stringify(process.moduleLoadList.some((m) => /http2/.test(m))));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.equal(JSON.parse(stdout), true);
  });
});
