import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinWithEscapeCsv } from './csv.ts';

describe('joinWithEscapeCsv', () => {
  it("quotes as Go's encoding/csv does", () => {
    assert.equal(joinWithEscapeCsv([]), '');
    assert.equal(joinWithEscapeCsv(['']), '');
    assert.equal(joinWithEscapeCsv(['a', 'b']), 'a,b');
    assert.equal(joinWithEscapeCsv(['a,b', 'c']), '"a,b",c');
    assert.equal(joinWithEscapeCsv(['say "hi"']), '"say ""hi"""');
    assert.equal(
      joinWithEscapeCsv([' lead', 'trail ', '\tx', '\u00a0nbsp']),
      '" lead",trail ,"\tx","\u00a0nbsp"',
    );
    assert.equal(joinWithEscapeCsv(['line\nbreak', 'cr\r']), '"line\nbreak","cr\r"');
    assert.equal(joinWithEscapeCsv(['\\.', '', 'x']), '"\\.",,x');
  });
});
