import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { optimizingCompilerFlags } from './optimizing-compilers.ts';

/**
 * `enableOptimizingCompilers` in a process of its own, started with the node flags it is meant for: whether
 * V8 then optimises a hot function, as V8 itself reports it (`%GetOptimizationStatus`, with
 * --allow-natives-syntax, which only exposes that call).
 */

/**
 * The module, stripped of its types here: a process without a JIT has no WebAssembly, which Node's own type
 * stripping needs. It imports nothing but node:v8, so it runs from a data: URL.
 */
const MODULE = `data:text/javascript,${encodeURIComponent(
  stripTypeScriptTypes(readFileSync(new URL('./optimizing-compilers.ts', import.meta.url), 'utf8')),
)}`;

/**
 * Runs a hot function before and after the call, and prints what V8 made of each: V8's optimization status
 * bits (`kTurboFanned` 1 << 4, `kMaglevved` 1 << 5... : `optimized` is any optimizing tier) and the call's result.
 */
const SCRIPT = `
  const { enableOptimizingCompilers } = await import(${JSON.stringify(MODULE)});
  const hot = (n) => { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; };
  const hot2 = (n) => { let s = 0; for (let i = 0; i < n; i++) s += (i * 5) % 11; return s; };
  // V8's OptimizationStatus: kMaglevved (1 << 5) or kTurboFanned (1 << 4).
  const optimized = (f) => (%GetOptimizationStatus(f) & ((1 << 4) | (1 << 5))) !== 0;
  for (let k = 0; k < 300; k++) hot(20000);
  const before = optimized(hot);
  const first = enableOptimizingCompilers();
  const second = enableOptimizingCompilers();
  for (let k = 0; k < 300; k++) { hot(20000); hot2(20000); }
  console.log(JSON.stringify({ before, first, second, after: optimized(hot), fresh: optimized(hot2) }));
`;

async function run(nodeFlags: string[]) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeFlags, '--allow-natives-syntax', '--input-type=module', '-e', SCRIPT],
    { env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(stdout) as Record<string, boolean>;
}

describe('enableOptimizingCompilers', () => {
  it('in a process started with --no-maglev --no-turbofan, hot code is optimised once it is called', async () => {
    assert.deepEqual(await run(['--no-maglev', '--no-turbofan']), {
      before: false,
      first: true,
      second: false,
      after: true,
      fresh: true,
    });
  });

  it('the same after --no-opt --no-maglev (--opt is an alias of --turbofan)', async () => {
    const result = await run(['--no-opt', '--no-maglev']);
    assert.equal(result.before, false);
    assert.equal(result.after, true);
  });

  it('changes nothing in a process started with the compilers on', async () => {
    assert.deepEqual(await run([]), {
      before: true,
      first: true,
      second: false,
      after: true,
      fresh: true,
    });
  });

  it('does nothing without a JIT, where turning them on would crash V8', async () => {
    for (const flag of ['--jitless', '--lite-mode']) {
      assert.deepEqual(await run([flag]), {
        before: false,
        first: false,
        second: false,
        after: false,
        fresh: false,
      });
    }
  });
});

describe('optimizingCompilerFlags', () => {
  it('picks the flags that switch the compilers from node command lines', () => {
    assert.deepEqual(
      optimizingCompilerFlags([
        '--max-semi-space-size=1',
        '--no-maglev',
        '--no-turbofan',
        '--no_opt',
        '--maglev=false',
        '--lite-mode',
        '--jitless',
        '--optimize-for-size',
        '--maglev-inlining',
      ]),
      ['--no-maglev', '--no-turbofan', '--no_opt', '--maglev=false', '--lite-mode', '--jitless'],
    );
  });
});
