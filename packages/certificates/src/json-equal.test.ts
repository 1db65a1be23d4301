import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonEqual } from './json-equal.ts';

describe('jsonEqual', () => {
  it('compares JSON values deeply, in any key order', () => {
    const status = { revision: 2, conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1 }] };
    assert.equal(jsonEqual(status, structuredClone(status)), true);
    assert.equal(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }), true);
    assert.equal(jsonEqual([1, [2, { c: null }]], [1, [2, { c: null }]]), true);
  });

  it('tells apart any difference in value, type, length or keys', () => {
    assert.equal(jsonEqual({ a: 1 }, { a: 2 }), false);
    assert.equal(jsonEqual({ a: 1 }, { a: '1' }), false);
    assert.equal(jsonEqual([1, 2], [1, 2, 3]), false);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(jsonEqual({ a: 1, b: 2 }, { a: 1 }), false);
    assert.equal(jsonEqual([], {}), false);
    assert.equal(jsonEqual({}, []), false);
    assert.equal(jsonEqual(null, {}), false);
    assert.equal(jsonEqual({ a: null }, { a: undefined }), false);
    assert.equal(jsonEqual({ a: { b: [1] } }, { a: { b: [2] } }), false);
  });

  it('counts a property holding undefined as absent, as JSON does', () => {
    assert.equal(jsonEqual({ a: 1, b: undefined }, { a: 1 }), true);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: undefined }), true);
  });
});
