import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getHeapStatistics } from 'node:v8';
import { releaseMemory } from './release-memory.ts';

describe('releaseMemory', () => {
  it('collects garbage a burst left, without a gc global in the main context', () => {
    // Garbage a burst might leave: objects and strings no longer referenced.
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `item-${i}` }));
    const withGarbage = getHeapStatistics().used_heap_size;
    garbage = undefined;
    const released = releaseMemory();
    const after = getHeapStatistics().used_heap_size;
    assert.equal(garbage, undefined);
    assert.ok(
      after < withGarbage - 5e6,
      `used heap ${withGarbage} → ${after} bytes: the collection should free the ~10 MB dropped`,
    );
    assert.ok(released.cpuMs > 0 && released.rssBeforeBytes > 0 && released.rssAfterBytes > 0);
    assert.equal(released.mallocTrimmed, true, 'glibc gave back its free pages after the collection');
    assert.equal('gc' in globalThis, false, 'the gc extension stays in its own context');
    // A second call reuses the extension.
    assert.ok(releaseMemory().rssAfterBytes > 0);
  });
});
