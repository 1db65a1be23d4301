import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

/**
 * The runtime as a controller loads it, in a fresh process: every module of its entry point imported, then
 * which modules that brought in. Each left out here is RSS that a controller would keep for its whole life:
 * node:http2 and undici ~14 MB (see node-http.ts), the YAML library ~5 MB (only a kubeconfig needs it).
 */

const run = promisify(execFile);
const entry = join(import.meta.dirname, '..', 'index.ts');

/** Runs `body` in a fresh ES module process after a hook that records every module URL loaded; returns its stdout. */
async function inFreshProcess(body: string): Promise<string> {
  const script = `import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    ${body}`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return stdout;
}

describe("the runtime's module footprint", () => {
  it('imports the whole runtime without loading node:http2, undici or the YAML library', async () => {
    const stdout = await inFreshProcess(`await import(${JSON.stringify(entry)});
      const builtins = process.moduleLoadList.filter((m) => /http2|undici/.test(m));
      const yaml = loaded.filter((url) => url.includes('/node_modules/yaml/'));
      process.stdout.write(JSON.stringify({ builtins, yaml, runtime: loaded.filter((u) => u.includes('/runtime/src/')).length }));`);
    const found = JSON.parse(stdout) as { builtins: string[]; yaml: string[]; runtime: number };
    assert.deepEqual(found.builtins, []);
    assert.deepEqual(found.yaml, []);
    assert.ok(found.runtime > 20, `the hook saw ${found.runtime} runtime modules`);
  });

  it('loads the YAML library once a kubeconfig is read', async () => {
    // The other half of the lazy import: it still happens, when it is needed.
    const stdout = await inFreshProcess(`const { mkdtempSync, writeFileSync } = await import('node:fs');
      const dir = mkdtempSync((await import('node:os')).tmpdir() + '/certkit-footprint-');
      const path = dir + '/kubeconfig';
      writeFileSync(path, 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: c\\n  cluster: {server: "https://127.0.0.1:1"}\\nusers:\\n- name: u\\n  user: {token: t}\\ncontexts:\\n- name: x\\n  context: {cluster: c, user: u}\\ncurrent-context: x\\n');
      const { loadKubeconfig } = await import(${JSON.stringify(entry)});
      const config = await loadKubeconfig({ path });
      (await import('node:fs')).rmSync(dir, { recursive: true });
      process.stdout.write(JSON.stringify({ server: config.server, yaml: loaded.some((url) => url.includes('/node_modules/yaml/')) }));`);
    assert.deepEqual(JSON.parse(stdout), { server: 'https://127.0.0.1:1', yaml: true });
  });

  it('would see http2: an ESM import of node:http loads it', async () => {
    // The premise of the first test, so that it cannot pass for a reason that has gone away (a Node that no
    // longer does this would make the workaround in node-http.ts unnecessary).
    const stdout = await inFreshProcess(`await import('node:http');
      process.stdout.write(JSON.stringify(process.moduleLoadList.some((m) => /http2/.test(m))));`);
    assert.equal(JSON.parse(stdout), true);
  });
});
