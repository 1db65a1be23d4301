import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LruMap } from './lru.ts';

describe('LruMap', () => {
  it('keeps the most recently used entries, a read counting as a use', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.get('a'), 1);
    lru.set('c', 3);
    assert.equal(lru.has('b'), false, 'b was the least recently used');
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.get('c'), 3);
  });

  it('computes once per key, remembering undefined answers too', () => {
    const lru = new LruMap<string, string | undefined>(4);
    let calls = 0;
    const compute = (key: string) => {
      calls++;
      return key === 'ok' ? undefined : `bad ${key}`;
    };
    assert.equal(lru.getOrCompute('ok', compute), undefined);
    assert.equal(lru.getOrCompute('ok', compute), undefined);
    assert.equal(lru.getOrCompute('x', compute), 'bad x');
    assert.equal(lru.getOrCompute('x', compute), 'bad x');
    assert.equal(calls, 2);
  });

  it('counts its entries and empties on clear()', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    assert.equal(lru.size, 2);
    lru.clear();
    assert.equal(lru.size, 0);
    assert.equal(lru.has('c'), false);
  });
});
