import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asObject, asString } from './values.ts';

describe('issuer spec values', () => {
  it('asObject: a JSON object as it is, anything else as absent', () => {
    const object = { name: 'x' };
    assert.equal(asObject(object), object);
    for (const other of [undefined, null, 'x', 1, true, [], [{ name: 'x' }]]) {
      assert.equal(asObject(other), undefined, JSON.stringify(other));
    }
  });

  it('asString: a string as it is, anything else as ""', () => {
    assert.equal(asString('abc'), 'abc');
    for (const other of [undefined, null, 1, {}, ['a']])
      assert.equal(asString(other), '', JSON.stringify(other));
  });
});
