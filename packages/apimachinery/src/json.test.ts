import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getOwn, isObject, jsonEqual, setOwn } from './json.ts';

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

describe('getOwn and setOwn', () => {
  it('read only own members, never inherited ones', () => {
    const object = JSON.parse('{"a": 1, "__proto__": {"b": 2}}') as Record<string, unknown>;
    assert.equal(getOwn(object, 'a'), 1);
    assert.deepEqual(getOwn(object, '__proto__'), { b: 2 });
    assert.equal(getOwn({}, 'toString'), undefined);
    assert.equal(getOwn({}, 'constructor'), undefined);
    assert.equal(getOwn({}, '__proto__'), undefined);
  });

  it('write `__proto__` as a plain member, leaving the prototype alone', () => {
    const object: Record<string, unknown> = {};
    setOwn(object, '__proto__', { polluted: true });
    setOwn(object, 'a', 1);
    assert.equal(Object.getPrototypeOf(object), Object.prototype);
    assert.equal((object as { polluted?: boolean }).polluted, undefined);
    assert.deepEqual(Object.keys(object), ['__proto__', 'a']);
    assert.equal(JSON.stringify(object), '{"__proto__":{"polluted":true},"a":1}');
    setOwn(object, '__proto__', 2);
    assert.equal(getOwn(object, '__proto__'), 2);
  });
});
