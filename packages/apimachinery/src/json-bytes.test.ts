import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as bytes from './json-bytes.ts';

describe('JSON structural character codes', () => {
  it('are the UTF-8 byte and the char code of each character', () => {
    const chars: Record<keyof typeof bytes, string> = {
      QUOTE: '"',
      BACKSLASH: '\\',
      OPEN_BRACE: '{',
      CLOSE_BRACE: '}',
      OPEN_BRACKET: '[',
      CLOSE_BRACKET: ']',
      COMMA: ',',
      COLON: ':',
    };
    for (const [name, char] of Object.entries(chars)) {
      const code = bytes[name as keyof typeof bytes];
      assert.deepEqual([...Buffer.from(char, 'utf8')], [code], name);
      assert.equal(char.charCodeAt(0), code, name);
    }
  });
});
