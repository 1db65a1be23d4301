import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countKeyColons, duplicateFields } from './duplicate-fields.ts';

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

  // The scan is skipped when the colons that follow a string are no more than the parsed members: these pin
  // that the skip never hides a repetition, whatever the values hold.
  it('finds a repetition in a body whose values hold many colons (timestamps, URLs)', () => {
    const condition = '{"type":"Ready","lastTransitionTime":"2026-11-26T15:43:00Z","message":"a: b: c"}';
    const text = `{"status":{"conditions":[${condition}],"notAfter":"2027-01-01T00:00:00Z","notAfter":"x"}}`;
    assert.deepEqual(dups(text), ['status.notAfter']);
    assert.deepEqual(dups(`{"u":"https://a:443/b","t":"00:00:00","u":"x"}`), ['u']);
  });

  it('finds a repetition whose colon is apart from its key, and one after a key ending in a backslash', () => {
    assert.deepEqual(dups('{"a" \n\t : 1, "b":"x:y:z", "a"\r\n:2}'), ['a']);
    assert.deepEqual(dups('{"k\\\\":1,"v":"\\":\\":","k\\\\":2}'), ['k\\']);
  });

  it('counts at least every member written in the text, however it is spaced', () => {
    const members = (value: unknown): number =>
      typeof value !== 'object' || value === null
        ? 0
        : Object.entries(value).reduce((n, [, v]) => n + (Array.isArray(value) ? 0 : 1) + members(v), 0);
    for (const text of [
      '{"a":1,"b":{"c":[{"d":"x:y"}]}}',
      '{ "a" :1 ,"b"\n:\t{ "c" : [ { "d" :"x:y" } ] } }',
      '{"a":"\\":","b":"2026-11-26T15:43:00Z"}',
    ]) {
      assert.ok(countKeyColons(text) >= members(JSON.parse(text)), text);
      assert.equal(countKeyColons(Buffer.from(text)), countKeyColons(text), text);
    }
    // A timestamp's colons follow digits: not counted, so a status body is not scanned for nothing.
    assert.equal(countKeyColons('{"t":"2026-11-26T15:43:00Z"}'), 1);
  });
});
