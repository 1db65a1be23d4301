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
    const hold = new GroupHold(8, 50, () => released++);
    assert.equal(hold.holds(group(1)), false, 'nothing committed yet');
    hold.committed(1);
    assert.equal(hold.holds(group(1)), false);
    assert.equal(hold.holds(group(3)), false);
    assert.equal(released, 0);
  });

  it('after a group of several writes, holds a small group once, and releases it when its time is up', async () => {
    let released = 0;
    const hold = new GroupHold(8, 20, () => released++);
    hold.committed(2);
    const g = group(1);
    assert.equal(hold.holds(g), true);
    assert.equal(g.held, true);
    // Asked again (another write joined, or another request wanted the writer): still held, one timer.
    g.writes.push(undefined);
    assert.equal(hold.holds(g), true);
    await setTimeout(100);
    assert.equal(released, 1, 'released once, when its time was up');
    // The store asks again on release: a group is held only once, however small it still is.
    assert.equal(hold.holds(g), false);
  });

  it('lets a group go as soon as it has enough writes, and does not hold a full one', async () => {
    let released = 0;
    const hold = new GroupHold(4, 30, () => released++);
    hold.committed(5);
    assert.equal(hold.holds(group(4)), false, 'full already');
    const g = group(2);
    assert.equal(hold.holds(g), true);
    g.writes.push(undefined, undefined);
    assert.equal(hold.holds(g), false, 'filled up while held');
    await setTimeout(60);
    assert.equal(released, 0, 'the wait ended with it: no late release');
  });

  it('holds nothing when its time is 0, and cancel ends a wait without a release', async () => {
    let released = 0;
    const off = new GroupHold(8, 0, () => released++);
    off.committed(10);
    assert.equal(off.holds(group(1)), false);
    const hold = new GroupHold(8, 20, () => released++);
    hold.committed(10);
    assert.equal(hold.holds(group(1)), true);
    hold.cancel();
    await setTimeout(60);
    assert.equal(released, 0);
  });
});
