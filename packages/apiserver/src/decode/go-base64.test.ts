import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goBase64ErrorAt } from './go-base64.ts';

describe('goBase64ErrorAt', () => {
  it('reads what Go reads: padded standard base64, line breaks anywhere, bits past the last byte', () => {
    for (const ok of [
      '',
      'aGVsbG8=',
      'aGVsbG8h',
      'aGVs\nbG8=',
      'aGVsbG8=\r\n',
      'aGVsbG9=',
      'YQ==',
      'Y\nQ\n=\n=',
    ])
      assert.equal(goBase64ErrorAt(ok), undefined, JSON.stringify(ok));
  });

  it('reports the byte offset Go reports', () => {
    const cases: [string, number][] = [
      ['!!!!', 0], // not in the alphabet
      ['abc!', 3],
      ['admin', 4], // a final quantum of one character
      ['abcdef', 4], // a final quantum of two characters without padding
      ['abcdefg', 4], // three without padding
      ['a===', 1], // padding too early
      ['YQ=', 3], // "==" expected, the text ends
      ['YQ=a', 2], // "==" expected, something else follows
      ['YQ==YQ==', 4], // something after the padding
      ['aGVsbG8_', 7], // the URL alphabet is not the standard one
      ['é', 0],
    ];
    for (const [text, at] of cases) assert.equal(goBase64ErrorAt(text), at, JSON.stringify(text));
  });
});
