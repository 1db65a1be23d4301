import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryBool } from './query-bool.ts';

const read = (query: string, name = 'flag') => queryBool(new URLSearchParams(query), name);

describe('queryBool', () => {
  it('is undefined when the parameter is absent', () => {
    assert.equal(read(''), undefined);
    assert.equal(read('other=true'), undefined);
  });

  // Go's conversion compares with "0" and, case-insensitively, "false"; everything else is true.
  for (const value of ['0', 'false', 'False', 'FALSE', 'fAlSe', 'fal\u017fe']) {
    it(`reads ${JSON.stringify(value)} as false`, () =>
      assert.equal(read(`flag=${encodeURIComponent(value)}`), false));
  }
  for (const value of [
    '1',
    't',
    'T',
    'true',
    'True',
    'TRUE',
    'yes',
    'bogus',
    '',
    'f',
    'F',
    '00',
    ' false',
    'no',
  ]) {
    it(`reads ${JSON.stringify(value)} as true`, () =>
      assert.equal(read(`flag=${encodeURIComponent(value)}`), true));
  }

  it('reads a bare name (no "=") as true', () => assert.equal(read('flag'), true));

  it('takes the first of repeated values', () => {
    assert.equal(read('flag=false&flag=true'), false);
    assert.equal(read('flag=True&flag=0'), true);
  });
});
