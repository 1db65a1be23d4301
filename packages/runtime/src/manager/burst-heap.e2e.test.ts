import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

/**
 * `relaxHeapForBurst` and `restoreHeapAfterBurst` in processes of their own, started with the node flags they
 * are meant for, and what V8 then does as `--trace-gc` and `--trace-gc-verbose` report it: the factor its heap
 * controller grows the old generation by after each full collection, and whether those collections still
 * reduce memory (`Mark-Compact (reduce)`). The premise of docs/adr/1190 is that V8 reads
 * `--heap-growing-percent` each time it sets a limit; a Node whose V8 reads it only at start fails here.
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
const all = (factors: number[], f: number) => factors.length > 0 && factors.every((x) => x === f);

describe('relaxHeapForBurst: V8 reads the growing percent while the process runs', () => {
  it("started with --optimize-for-size: grown by 1.3 between the calls, by V8's minimal 1.1 before and after, every full collection reducing memory throughout", async () => {
    const {
      phases: [before, during, after],
      results,
    } = await phases([...START, '--optimize-for-size'], 'relax');
    assert.deepEqual(results, [
      { relaxed: true, again: false },
      { restored: true, again: false },
    ]);
    const seen = JSON.stringify({ before, during, after });
    for (const phase of [before!, during!, after!]) {
      assert.ok(phase.fullGcs > 0, seen);
      assert.equal(phase.reducing, phase.fullGcs, `every full collection reduces memory: ${seen}`);
    }
    assert.ok(all(before!.factors, 1.1), seen);
    assert.ok(all(during!.factors, 1.3), seen);
    assert.ok(all(after!.factors, 1.1), seen);
  });

  it("the same process without the call keeps V8's minimal factor throughout", async () => {
    const {
      phases: [, during],
      results,
    } = await phases([...START, '--optimize-for-size'], 'nothing');
    assert.deepEqual(results[1], { restored: false, again: false });
    assert.ok(all(during!.factors, 1.1), JSON.stringify(during));
  });

  it('does nothing in a process started without --optimize-for-size, or with a growing percent of its own', async () => {
    for (const flags of [START, [...START, '--optimize-for-size', '--heap-growing-percent=50']]) {
      const { phases: seen, results } = await phases(flags, 'relax');
      assert.deepEqual(results, [
        { relaxed: false, again: false },
        { restored: false, again: false },
      ]);
      assert.ok(
        seen.every((p) => p.factors.every((f) => f !== 1.3)),
        JSON.stringify(seen),
      );
    }
  });
});
