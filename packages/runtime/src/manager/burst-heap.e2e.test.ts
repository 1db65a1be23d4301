import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

/**
 * `relaxHeapForBurst` and `restoreHeapAfterBurst` in processes of their own, started with the node flags they
 * are meant for, and what V8 then does as `--trace-gc` and `--trace-gc-verbose` report it: whether its full
 * collections reduce memory (`Mark-Compact (reduce)`) and the factor its heap controller grows the old
 * generation by. The premise of docs/adr/1190 is that V8 reads both flags while the process runs; a Node
 * whose V8 reads them only at start fails here.
 */

/** The module, stripped of its types: it imports nothing but node:v8, so it runs from a data: URL. */
const MODULE = `data:text/javascript,${encodeURIComponent(
  stripTypeScriptTypes(readFileSync(new URL('./burst-heap.ts', import.meta.url), 'utf8')),
)}`;

/**
 * Three phases of the same allocation (a retained heap of ~24 MB, then churn that promotes into it, enough
 * for several full collections each), with a marker line between them: before any call, after
 * `relaxHeapForBurst` (argv[1] `relax`; `nothing` makes no call), after `restoreHeapAfterBurst`.
 */
const SCRIPT = `
  const heap = await import(${JSON.stringify(MODULE)});
  const retained = [];
  const work = () => {
    for (let round = 0; round < 40; round++) {
      const batch = [];
      for (let i = 0; i < 20000; i++) batch.push({ i, s: 'x'.repeat(20) + i });
      retained.push(batch);
      if (retained.length > 12) retained.shift();
    }
  };
  const relax = process.argv[1] === 'relax';
  work();
  console.log('@@ ' + JSON.stringify({ relaxed: relax ? heap.relaxHeapForBurst() : false, again: relax ? heap.relaxHeapForBurst() : false }));
  work();
  console.log('@@ ' + JSON.stringify({ restored: heap.restoreHeapAfterBurst(), again: heap.restoreHeapAfterBurst() }));
  work();
`;

interface Phase {
  /** Full collections (mark-compacts) in the phase, and how many of them reduced memory. */
  fullGcs: number;
  reducing: number;
  /** The old generation's growing factors the heap controller reported (--trace-gc-verbose). */
  factors: number[];
}

async function phases(nodeFlags: readonly string[], then: 'relax' | 'nothing') {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeFlags, '--trace-gc', '--trace-gc-verbose', '--input-type=module', '-e', SCRIPT, then],
    { env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 256 * 1024 * 1024 },
  );
  const results: Record<string, unknown>[] = [];
  const out: Phase[] = [{ fullGcs: 0, reducing: 0, factors: [] }];
  for (const line of stdout.split('\n')) {
    if (line.startsWith('@@ ')) {
      results.push(JSON.parse(line.slice(3)) as Record<string, unknown>);
      out.push({ fullGcs: 0, reducing: 0, factors: [] });
      continue;
    }
    const phase = out.at(-1)!;
    if (/ms: (Incremental )?Mark-Compact/.test(line)) {
      phase.fullGcs++;
      if (/Mark-Compact \(reduce\)/.test(line)) phase.reducing++;
    }
    const factor = /\[HeapController\] factor ([\d.]+)/.exec(line);
    if (factor) phase.factors.push(Number(factor[1]));
  }
  return { phases: out, results };
}

const START = ['--max-semi-space-size=1'];

describe('relaxHeapForBurst: V8 reads the flags while the process runs', () => {
  it('a process started with --optimize-for-size: reducing collections before, growth of 1.2 without them during, both back after', async () => {
    const {
      phases: [before, during, after],
      results,
    } = await phases([...START, '--optimize-for-size'], 'relax');
    assert.deepEqual(results, [
      { relaxed: true, again: false },
      { restored: true, again: false },
    ]);
    assert.ok(
      before!.fullGcs > 0 && after!.fullGcs > 0 && during!.fullGcs > 0,
      JSON.stringify({ before, during, after }),
    );
    assert.equal(
      before!.reducing,
      before!.fullGcs,
      'optimize-for-size: every full collection reduces memory',
    );
    assert.equal(during!.reducing, 0, 'relaxed: none does');
    assert.ok(
      during!.factors.length > 0 && during!.factors.every((f) => f === 1.2),
      `factors ${during!.factors}`,
    );
    assert.equal(after!.reducing, after!.fullGcs, 'restored: every one reduces memory again');
    assert.ok(
      after!.factors.every((f) => f !== 1.2),
      `factors ${after!.factors}`,
    );
  });

  it('the same process without the call reduces memory throughout', async () => {
    const {
      phases: [, during],
      results,
    } = await phases([...START, '--optimize-for-size'], 'nothing');
    assert.deepEqual(results[1], { restored: false, again: false });
    assert.ok(during!.fullGcs > 0);
    assert.equal(during!.reducing, during!.fullGcs);
  });

  it('does nothing in a process started without --optimize-for-size', async () => {
    const { phases: all, results } = await phases(START, 'relax');
    assert.deepEqual(results, [
      { relaxed: false, again: false },
      { restored: false, again: false },
    ]);
    assert.ok(
      all.every((p) => p.factors.every((f) => f !== 1.2)),
      JSON.stringify(all),
    );
  });
});
