import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS, optimizingCompilerFlags } from './optimizing-compilers.ts';

/**
 * `enableOptimizingCompilers` in processes of their own, started with the node flags it is meant for, and
 * what V8 then does, as V8 reports it: `%GetOptimizationStatus` (with --allow-natives-syntax, which only
 * exposes that call) and `--trace-opt`'s line for each compilation.
 */

/**
 * The module, stripped of its types here: a process without a JIT has no WebAssembly, which Node's own type
 * stripping needs. It imports nothing but node:v8, so it runs from a data: URL.
 */
const MODULE = `data:text/javascript,${encodeURIComponent(
  stripTypeScriptTypes(readFileSync(new URL('./optimizing-compilers.ts', import.meta.url), 'utf8')),
)}`;

const run = (args: string[]) =>
  promisify(execFile)(process.execPath, args, {
    env: { ...process.env, NODE_OPTIONS: '' },
    maxBuffer: 64 * 1024 * 1024,
  }).then((r) => r.stdout);

/**
 * Runs a hot function before and after the call, and prints what V8 made of each (optimised by Maglev or
 * TurboFan: V8's OptimizationStatus kMaglevved 1 << 5, kTurboFanned 1 << 4) and the call's results.
 */
const STATUS_SCRIPT = `
  const { enableOptimizingCompilers } = await import(${JSON.stringify(MODULE)});
  const hot = (n) => { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; };
  const hot2 = (n) => { let s = 0; for (let i = 0; i < n; i++) s += (i * 5) % 11; return s; };
  const optimized = (f) => (%GetOptimizationStatus(f) & ((1 << 4) | (1 << 5))) !== 0;
  for (let k = 0; k < 300; k++) hot(20000);
  const before = optimized(hot);
  const first = enableOptimizingCompilers();
  const second = enableOptimizingCompilers();
  for (let k = 0; k < 300; k++) { hot(20000); hot2(20000); }
  console.log(JSON.stringify({ before, first, second, after: optimized(hot), fresh: optimized(hot2) }));
`;

async function status(nodeFlags: readonly string[]) {
  const stdout = await run([
    ...nodeFlags,
    '--allow-natives-syntax',
    '--input-type=module',
    '-e',
    STATUS_SCRIPT,
  ]);
  return JSON.parse(stdout) as Record<string, boolean>;
}

/**
 * 200 small functions, each called 1,000 times after the call (argv[1]: `switch` makes it, `maglev` sets
 * `--maglev --turbofan` instead): enough calls for
 * Maglev, not for TurboFan in a process started with the defaults. What tiering does shows in the counts.
 */
const TIERING_SCRIPT = `
  const { enableOptimizingCompilers } = await import(${JSON.stringify(MODULE)});
  if (process.argv[1] === 'switch') enableOptimizingCompilers();
  if (process.argv[1] === 'maglev') for (const f of ['--maglev', '--turbofan']) (await import('node:v8')).setFlagsFromString(f);
  const fns = Array.from({ length: 200 }, (_, i) =>
    new Function('a', 'let s = ' + i + '; for (let j = 0; j < 20; j++) s += (a * j + ' + i + ') % 7; return s;'));
  let t = 0;
  for (let k = 0; k < 1000; k++) for (const f of fns) t += f(k);
  if (t < 0) console.error(t);
`;

/** What --trace-opt reported: completed compilations by tier, and Maglev compilations on the main thread. */
async function tiering(nodeFlags: readonly string[], then: 'switch' | 'maglev' | 'nothing') {
  const trace = await run([...nodeFlags, '--trace-opt', '--input-type=module', '-e', TIERING_SCRIPT, then]);
  const count = (re: RegExp) => trace.split('\n').filter((l) => re.test(l)).length;
  return {
    maglev: count(/^\[completed compiling .*\(target MAGLEV\)/),
    turbofan: count(/^\[completed compiling .*\(target TURBOFAN_JS\)/),
    maglevOnMainThread: count(/^\[compiling method .*\(target MAGLEV\).*kSynchronous/),
  };
}

describe('enableOptimizingCompilers', () => {
  it('in a process started with them held back, nothing is optimised until it is called', async () => {
    assert.deepEqual(await status(DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS), {
      before: false,
      first: true,
      second: false,
      after: true,
      fresh: true,
    });
  });

  it('then tiers code up as a process started with the defaults does', async () => {
    const defaults = await tiering([], 'nothing');
    const deferred = await tiering(DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS, 'switch');
    // The premise: Maglev takes all 200, TurboFan (nearly) none at this many calls.
    assert.ok(defaults.maglev >= 200 && defaults.turbofan <= 5, JSON.stringify(defaults));
    assert.ok(deferred.maglev >= 200, JSON.stringify(deferred));
    assert.ok(Math.abs(deferred.turbofan - defaults.turbofan) <= 5, JSON.stringify({ defaults, deferred }));
    assert.equal(deferred.maglevOnMainThread, 0);
    // Why Maglev is held back by its filter and not --no-maglev: turned on later, it compiles on the main
    // thread and TurboFan takes nearly every function. Should a Node upgrade change that, this says so.
    const noMaglev = await tiering(['--no-maglev', '--no-turbofan'], 'maglev');
    assert.ok(noMaglev.turbofan >= 100 && noMaglev.maglevOnMainThread >= 100, JSON.stringify(noMaglev));
  });

  it('does nothing in a process started with the compilers on', async () => {
    assert.deepEqual(await status([]), {
      before: true,
      first: false,
      second: false,
      after: true,
      fresh: true,
    });
  });

  it('leaves them off in a process started with them off for good', async () => {
    for (const flags of [
      ['--no-opt', '--no-maglev'],
      ['--no-maglev', '--no-turbofan'],
    ]) {
      assert.deepEqual(await status(flags), {
        before: false,
        first: false,
        second: false,
        after: false,
        fresh: false,
      });
    }
  });

  it('does nothing without a JIT, where turning them on would crash V8', async () => {
    for (const flag of ['--jitless', '--lite-mode']) {
      assert.deepEqual(await status([...DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS, flag]), {
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
        '--no-turbofan',
        '--maglev-filter=-*',
        '--no-maglev',
        '--no_opt',
        '--maglev=false',
        '--lite-mode',
        '--jitless',
        '--optimize-for-size',
        '--maglev-inlining',
      ]),
      [
        '--no-turbofan',
        '--maglev-filter=-*',
        '--no-maglev',
        '--no_opt',
        '--maglev=false',
        '--lite-mode',
        '--jitless',
      ],
    );
  });
});
