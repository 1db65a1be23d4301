import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duplicateFields } from './duplicate-fields.ts';

const dups = (text: string) => duplicateFields(Buffer.from(text), JSON.parse(text));

describe('duplicateFields', () => {
  it('finds none in a body without repeated keys, whatever its values hold', () => {
    assert.deepEqual(dups('{"a":"x:y","b":{"c":"\\"d\\":1","e":[{"f":"g:h"}]},"i":"::"}'), []);
  });

  it('names each repetition by its path, at any depth, in list items by index', () => {
    const text = '{"a":1,"b":{"c":"x:y","c":2},"l":[{"k":1},{"k":1,"k":2}],"a":3}';
    assert.deepEqual(dups(text), ['b.c', 'l[1].k', 'a']);
  });

  it('reads keys as JSON strings: escaped spellings of one name are the same key', () => {
    assert.deepEqual(dups('{"name":"a","n\\u0061me":"b"}'), ['name']);
    assert.deepEqual(dups('{"q\\"":1,"q\\\\":2}'), []);
  });

  it('tolerates whitespace around colons and keys that contain colons or braces', () => {
    assert.deepEqual(dups('{ "a" : 1 , "{b:}" :\n 2, "a"\t: 3 }'), ['a']);
  });

  it('the same key in sibling objects is no repetition', () => {
    assert.deepEqual(dups('{"x":{"k":1},"y":{"k":2},"z":[{"k":1},{"k":2}]}'), []);
  });
});
