import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type LatestRow, LatestRows } from './latest-rows.ts';

const row = (id: number, chars: number): LatestRow => ({
  id,
  create_revision: id,
  deleted: 0,
  value: 'x'.repeat(chars),
});

describe('LatestRows', () => {
  it('keeps rows up to the length of their values, dropping the oldest written first', () => {
    const rows = new LatestRows(100);
    rows.set('a', row(1, 40));
    rows.set('b', row(2, 40));
    rows.set('a', row(3, 40)); // now b is the oldest
    rows.set('c', row(4, 40));
    assert.equal(rows.get('b'), undefined);
    assert.deepEqual([rows.get('a')?.id, rows.get('c')?.id], [3, 4]);
  });

  it('replaces a key in place, counting only its new value', () => {
    const rows = new LatestRows(100);
    rows.set('a', row(1, 60));
    rows.set('a', row(2, 30));
    rows.set('b', row(3, 60));
    assert.deepEqual([rows.get('a')?.id, rows.get('b')?.id], [2, 3]);
    rows.delete('a');
    rows.set('c', row(4, 40));
    assert.deepEqual([rows.get('a'), rows.get('b')?.id, rows.get('c')?.id], [undefined, 3, 4]);
  });

  it('evicts in the order rows were set, however often keys were rewritten or deleted in between', () => {
    const rows = new LatestRows(1000);
    for (let i = 0; i < 10_000; i++) rows.set(`hot-${i % 3}`, row(i, 10));
    for (let i = 0; i < 50; i++) {
      rows.set(`k-${i}`, row(100_000 + i, 10));
      if (i % 2 === 0) rows.delete(`k-${i}`);
    }
    assert.deepEqual(
      ['hot-0', 'hot-1', 'hot-2', 'k-1', 'k-2'].map((k) => rows.get(k)?.id),
      [9999, 9997, 9998, 100_001, undefined],
    );
    // 3 hot rows and 25 others (280 characters); 75 rows of 10 more make 1030: the 3 oldest go, the hot ones.
    for (let i = 0; i < 75; i++) rows.set(`n-${i}`, row(200_000 + i, 10));
    assert.deepEqual(
      ['hot-0', 'hot-1', 'hot-2', 'k-1', 'n-74'].map((k) => rows.get(k)?.id),
      [undefined, undefined, undefined, 100_001, 200_074],
    );
  });

  it('never keeps a value longer than the whole bound', () => {
    const rows = new LatestRows(10);
    rows.set('a', row(1, 5));
    rows.set('big', row(2, 11));
    assert.deepEqual([rows.get('a')?.id, rows.get('big')], [1, undefined]);
    rows.clear();
    assert.equal(rows.get('a'), undefined);
  });
});
