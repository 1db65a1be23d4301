import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dnsSafeShorten } from './names.ts';

describe('dnsSafeShorten (DNSSafeShortenToNCharacters)', () => {
  const rows: [string, number, string][] = [
    ['short', 52, 'short'],
    ['a'.repeat(51), 52, 'a'.repeat(51)],
    // Exactly max characters is cut (Go checks len < max), which leaves it whole when it ends alphanumeric.
    ['a'.repeat(52), 52, 'a'.repeat(52)],
    [`${'a'.repeat(50)}-.bcd`, 52, 'a'.repeat(50)],
    [`${'a'.repeat(51)}.b`, 52, 'a'.repeat(51)],
    ['---', 2, ''],
    ['abc', 0, ''],
    ['abc', 5, 'abc'],
    ['abc-.def', 5, 'abc'],
    // Go counts bytes: 'é' is two, so the cut at 3 falls inside it and backs off to the last ASCII letter.
    ['aéb', 3, 'a'],
  ];
  for (const [name, max, want] of rows) {
    it(`${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…${name.slice(-6)}` : name)} to ${max}`, () => {
      assert.equal(dnsSafeShorten(name, max), want);
    });
  }
});
