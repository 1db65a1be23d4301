import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { GroupHold } from './group-hold.ts';

function group(size: number): { writes: unknown[]; held: boolean } {
  return { writes: Array.from({ length: size }), held: false };
}

describe('GroupHold', () => {
  it('never holds a group after a group of one write: a write alone goes at once', () => {
    let released = 0;
    const hold = new GroupHold(64, 50, () => released++);
    assert.equal(hold.holds(group(1)), false, 'nothing committed yet');
    hold.committed(1);
    assert.equal(hold.holds(group(1)), false);
    assert.equal(hold.holds(group(3)), false);
    assert.equal([released, hold.held].join(), '0,0');
  });

  it('holds a group smaller than the last one once, and releases it when its time is up', async () => {
    let released = 0;
    const hold = new GroupHold(64, 20, () => released++);
    hold.committed(3);
    const g = group(1);
    assert.equal(hold.holds(g), true);
    assert.equal(g.held, true);
    // Asked again (another write joined, or a compaction wanted the writer): still held, by one timer.
    g.writes.push(undefined);
    assert.equal(hold.holds(g), true);
    await setTimeout(100);
    assert.equal(released, 1, 'released once, when its time was up');
    // The store asks again on release: a group is held only once, however small it still is.
    assert.equal(hold.holds(g), false);
    assert.equal(hold.held, 1);
  });

  it('lets a group go once it has as many writes as the last one, or maxWrites', async () => {
    let released = 0;
    const hold = new GroupHold(4, 30, () => released++);
    hold.committed(3);
    assert.equal(hold.holds(group(3)), false, 'as large as the last one already');
    const g = group(1);
    assert.equal(hold.holds(g), true);
    g.writes.push(undefined, undefined);
    assert.equal(hold.holds(g), false, 'filled up while held');
    // After a group of 100, a group waits for maxWrites (4), not for 100.
    hold.committed(100);
    const h = group(2);
    assert.equal(hold.holds(h), true);
    h.writes.push(undefined, undefined);
    assert.equal(hold.holds(h), false);
    await setTimeout(80);
    assert.equal(released, 0, 'each wait ended with its group: no late release');
  });

  it('holds nothing when its time is 0 or the group is empty, and cancel ends a wait without a release', async () => {
    let released = 0;
    const off = new GroupHold(64, 0, () => released++);
    off.committed(10);
    assert.equal(off.holds(group(1)), false);
    const hold = new GroupHold(64, 20, () => released++);
    hold.committed(10);
    assert.equal(hold.holds(group(0)), false, 'every write of it was refused: nothing to wait with');
    assert.equal(hold.holds(group(1)), true);
    hold.cancel();
    await setTimeout(60);
    assert.equal(released, 0);
  });
});
