import assert from 'node:assert/strict';
import { createHash, type Hash } from 'node:crypto';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { trimMalloc } from './malloc-trim.ts';

describe('trimMalloc', () => {
  it("gives back malloc's free pages that free() left in the middle of the heap", async () => {
    // node:ffi loads at the first call; its ExperimentalWarning must not reach stderr among JSON log lines.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // OpenSSL's objects, as a burst of parses and signatures leaves them: ~100 MB of small native allocations
    // on the main arena's heap, interleaved with what stays.
    let hashes: Hash[] | undefined = Array.from({ length: 100_000 }, () => createHash('sha256').update('x'));
    const kept = createHash('sha256');
    hashes = undefined;
    // Collected, and their native memory freed (glibc keeps it: it is not at the top of the heap, or less
    // than the trim threshold).
    for (let i = 0; i < 3; i++) gc();
    const before = process.memoryUsage.rss();
    assert.equal(trimMalloc(), true, 'node:ffi and glibc are here, so malloc_trim ran');
    const after = process.memoryUsage.rss();
    assert.equal(hashes, undefined);
    assert.ok(
      before - after > 10e6,
      `RSS ${before} → ${after} bytes: the trim should give back the freed pages`,
    );
    assert.equal(kept.update('y').digest('hex').length, 64, 'what is still in use stays usable');
    assert.equal(trimMalloc(), true, 'a second call reuses the binding');
    await nextTurn();
    process.off('warning', onWarning);
    assert.deepEqual(
      warnings.map((w) => w.message),
      [],
      'loading node:ffi printed no ExperimentalWarning',
    );
  });
});
