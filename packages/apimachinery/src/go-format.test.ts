import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goQuote, goStringSlice, goUnicodeVerb, isGoPrintable } from './go-format.ts';
import { formatFieldError } from './status.ts';

/** Expected texts follow the rules of strconv.Quote, %#U and %#v of a []string, with Unicode categories as Go reads them. */

describe('goQuote (strconv.Quote)', () => {
  const cases: [string, string][] = [
    ['abc', '"abc"'],
    ['', '""'],
    ['say "hi"\\', '"say \\"hi\\"\\\\"'],
    ['\u0007\b\f\n\r\t\u000b', '"\\a\\b\\f\\n\\r\\t\\v"'],
    ['\u0001\u001f\u007f', '"\\x01\\x1f\\x7f"'],
    ['é日本', '"é日本"'],
    ['\u00a0\u2028\u200b', '"\\u00a0\\u2028\\u200b"'],
    ['\u{1f600}', '"\u{1f600}"'],
    ['\u{e0001}', '"\\U000e0001"'],
    ['\ud800', '"\\ufffd"'],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} → ${want}`, () => assert.equal(goQuote(input), want));
  }
});

describe('isGoPrintable (unicode.IsPrint)', () => {
  it('takes the ASCII space but no other space or control', () => {
    assert.equal(isGoPrintable(0x20), true);
    assert.equal(isGoPrintable(0x41), true);
    assert.equal(isGoPrintable(0x09), false);
    assert.equal(isGoPrintable(0xa0), false);
    assert.equal(isGoPrintable(0x3000), false);
  });
});

describe('goUnicodeVerb (%#U)', () => {
  it('adds the quoted character only when printable', () => {
    assert.equal(goUnicodeVerb(0x1), 'U+0001');
    assert.equal(goUnicodeVerb(0x41), "U+0041 'A'");
    assert.equal(goUnicodeVerb(0x1f600), "U+1F600 '\u{1f600}'");
  });
});

describe('field errors print values as field.Error does', () => {
  it('a string with %q', () =>
    assert.equal(
      formatFieldError({ type: 'FieldValueInvalid', field: 'f', value: 'a\u0001', detail: 'd' }),
      'f: Invalid value: "a\\x01": d',
    ));
  it('a []string with %#v', () =>
    assert.equal(
      formatFieldError({
        type: 'FieldValueNotSupported',
        field: 'dryRun',
        value: goStringSlice(['All', 'Foo']),
        detail: 'supported values: "All"',
      }),
      'dryRun: Unsupported value: []string{"All", "Foo"}: supported values: "All"',
    ));
});
