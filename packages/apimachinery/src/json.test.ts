import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isObject, jsonEqual } from './json.ts';

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

  it('counts own members only, so JSON naming `__proto__` or `constructor` is compared as data', () => {
    const parsed = JSON.parse('{"__proto__": {}, "constructor": {}}') as unknown;
    assert.equal(jsonEqual(parsed, { a: 1, b: 2 }), false);
    assert.equal(jsonEqual({ a: 1, b: 2 }, parsed), false);
    assert.equal(jsonEqual(JSON.parse('{"toString": {}}'), {}), false);
    assert.equal(jsonEqual(parsed, JSON.parse('{"constructor": {}, "__proto__": {}}')), true);
  });

  it('compares scalars by value and type', () => {
    assert.equal(jsonEqual('a', 'a'), true);
    assert.equal(jsonEqual(1, 1), true);
    assert.equal(jsonEqual(null, null), true);
    assert.equal(jsonEqual(1, '1'), false);
    assert.equal(jsonEqual(0, false), false);
    assert.equal(jsonEqual(null, undefined), false);
  });
});

describe('isObject', () => {
  it('is true of JSON objects only, not arrays or null', () => {
    assert.equal(isObject({}), true);
    assert.equal(isObject({ a: [1] }), true);
    assert.equal(isObject([]), false);
    assert.equal(isObject(null), false);
    assert.equal(isObject('a'), false);
    assert.equal(isObject(undefined), false);
  });
});
