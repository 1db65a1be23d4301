import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeFieldValue, everythingFields, type FieldRequirement, parseFieldSelector } from './fields.ts';
import { StatusError } from './status.ts';

describe('parseFieldSelector: valid input', () => {
  const cases: { input: string; canonical: string; requirements: FieldRequirement[] }[] = [
    { input: '', canonical: '', requirements: [] },
    { input: ',', canonical: '', requirements: [] },
    { input: 'a=b', canonical: 'a=b', requirements: [{ field: 'a', operator: '=', value: 'b' }] },
    // `==` means `=`, and is written back as `=`.
    { input: 'a==b', canonical: 'a=b', requirements: [{ field: 'a', operator: '=', value: 'b' }] },
    { input: 'a!=b', canonical: 'a!=b', requirements: [{ field: 'a', operator: '!=', value: 'b' }] },
    { input: 'a=', canonical: 'a=', requirements: [{ field: 'a', operator: '=', value: '' }] },
    { input: 'a!=', canonical: 'a!=', requirements: [{ field: 'a', operator: '!=', value: '' }] },
    {
      input: 'metadata.namespace!=kube-system,metadata.name=foo',
      canonical: 'metadata.name=foo,metadata.namespace!=kube-system',
      requirements: [
        { field: 'metadata.name', operator: '=', value: 'foo' },
        { field: 'metadata.namespace', operator: '!=', value: 'kube-system' },
      ],
    },
    {
      input: 'a=b,,c=d,',
      canonical: 'a=b,c=d',
      requirements: [
        { field: 'a', operator: '=', value: 'b' },
        { field: 'c', operator: '=', value: 'd' },
      ],
    },
    { input: 'a=x\\,y', canonical: 'a=x\\,y', requirements: [{ field: 'a', operator: '=', value: 'x,y' }] },
    { input: 'a=x\\=y', canonical: 'a=x\\=y', requirements: [{ field: 'a', operator: '=', value: 'x=y' }] },
    {
      input: 'a=x\\\\y',
      canonical: 'a=x\\\\y',
      requirements: [{ field: 'a', operator: '=', value: 'x\\y' }],
    },
    { input: 'a=x\\\\', canonical: 'a=x\\\\', requirements: [{ field: 'a', operator: '=', value: 'x\\' }] },
    {
      input: 'b=\\,,a!=\\=',
      canonical: 'a!=\\=,b=\\,',
      requirements: [
        { field: 'a', operator: '!=', value: '=' },
        { field: 'b', operator: '=', value: ',' },
      ],
    },
    // No trimming: spaces belong to the field name and the value, as upstream.
    { input: 'a = b', canonical: 'a = b', requirements: [{ field: 'a ', operator: '=', value: ' b' }] },
    // The field name is not validated by the parser (the resource decides which fields exist).
    { input: '=x', canonical: '=x', requirements: [{ field: '', operator: '=', value: 'x' }] },
    {
      input: 'spec.x!y=1',
      canonical: 'spec.x!y=1',
      requirements: [{ field: 'spec.x!y', operator: '=', value: '1' }],
    },
  ];
  for (const { input, canonical, requirements } of cases) {
    it(`parses ${JSON.stringify(input)}`, () => {
      const sel = parseFieldSelector(input);
      assert.deepEqual(
        sel.requirements.map((r) => ({ ...r })),
        requirements,
      );
      assert.equal(sel.toString(), canonical);
      assert.equal(sel.empty, requirements.length === 0);
    });
    it(`round-trips ${JSON.stringify(input)}`, () => {
      const again = parseFieldSelector(parseFieldSelector(input).toString());
      assert.equal(again.toString(), canonical);
      assert.deepEqual(
        again.requirements.map((r) => ({ ...r })),
        requirements,
      );
    });
  }
});

describe('parseFieldSelector: invalid input is 400 BadRequest', () => {
  const cases: { input: string; message: string }[] = [
    { input: 'x', message: "invalid selector: 'x'; can't understand 'x'" },
    { input: 'a=b,x', message: "invalid selector: 'a=b,x'; can't understand 'x'" },
    { input: 'a<5', message: "invalid selector: 'a<5'; can't understand 'a<5'" },
    { input: 'a in (b)', message: "invalid selector: 'a in (b)'; can't understand 'a in (b)'" },
    { input: 'a=b=c', message: 'invalid field selector: unescaped character in value: =' },
    { input: 'a===b', message: 'invalid field selector: unescaped character in value: =' },
    { input: 'a!==b', message: 'invalid field selector: unescaped character in value: =' },
    { input: 'a=x\\y', message: 'invalid field selector: invalid escape sequence: \\y' },
    { input: 'a=x\\', message: 'invalid field selector: invalid escape sequence: \\' },
  ];
  for (const { input, message } of cases) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.throws(
        () => parseFieldSelector(input),
        (err: unknown) =>
          err instanceof StatusError &&
          err.code === 400 &&
          err.reason === 'BadRequest' &&
          err.message === message,
      );
    });
  }
});

describe('FieldSelector.matches', () => {
  const fields = { 'metadata.name': 'foo', 'status.phase': 'Running', 'spec.nodeName': '', weird: 'x,y' };
  const cases: { selector: string; want: boolean }[] = [
    { selector: 'metadata.name=foo', want: true },
    { selector: 'metadata.name==foo', want: true },
    { selector: 'metadata.name=bar', want: false },
    { selector: 'metadata.name!=foo', want: false },
    { selector: 'metadata.name!=bar', want: true },
    { selector: 'spec.nodeName=', want: true },
    { selector: 'spec.nodeName!=', want: false },
    // A field missing from the set reads as '' (fields.Set.Get).
    { selector: 'missing=', want: true },
    { selector: 'missing=x', want: false },
    { selector: 'missing!=x', want: true },
    { selector: 'missing!=', want: false },
    { selector: 'constructor=', want: true },
    { selector: 'weird=x\\,y', want: true },
    { selector: 'metadata.name=foo,status.phase=Running', want: true },
    { selector: 'metadata.name=foo,status.phase!=Running', want: false },
    { selector: '', want: true },
  ];
  for (const { selector, want } of cases) {
    it(`${JSON.stringify(selector)} is ${want}`, () =>
      assert.equal(parseFieldSelector(selector).matches(fields), want));
  }
});

describe('FieldSelector.requiresExactMatch', () => {
  const cases: { selector: string; field: string; want: string | undefined }[] = [
    { selector: 'metadata.name=foo', field: 'metadata.name', want: 'foo' },
    { selector: 'metadata.name==foo', field: 'metadata.name', want: 'foo' },
    { selector: 'metadata.name!=foo', field: 'metadata.name', want: undefined },
    { selector: 'metadata.namespace=ns', field: 'metadata.name', want: undefined },
    { selector: 'metadata.namespace=ns,metadata.name=foo', field: 'metadata.name', want: 'foo' },
    { selector: 'a=', field: 'a', want: '' },
    { selector: 'a=2,a=1', field: 'a', want: '1' },
    { selector: 'a=x\\,y', field: 'a', want: 'x,y' },
    { selector: '', field: 'a', want: undefined },
  ];
  for (const { selector, field, want } of cases) {
    it(`${JSON.stringify(selector)} pins ${field} to ${JSON.stringify(want)}`, () =>
      assert.equal(parseFieldSelector(selector).requiresExactMatch(field), want));
  }
});

describe('escapeFieldValue', () => {
  it('escapes backslash, comma and equals', () => {
    assert.equal(escapeFieldValue('a,b=c\\d'), 'a\\,b\\=c\\\\d');
    assert.equal(escapeFieldValue('plain-value.1'), 'plain-value.1');
  });
  for (const value of ['', 'x', 'a,b', 'a=b', 'a\\b', '\\', ',,==\\\\', 'ünïcode ✓', 'a\\,b']) {
    it(`round-trips ${JSON.stringify(value)} through a selector`, () => {
      const sel = parseFieldSelector(`f=${escapeFieldValue(value)},g!=${escapeFieldValue(value)}`);
      assert.deepEqual(
        sel.requirements.map((r) => r.value),
        [value, value],
      );
      assert.deepEqual(parseFieldSelector(sel.toString()).requirements, sel.requirements);
    });
  }
});

describe('everythingFields', () => {
  it('is empty and matches anything', () => {
    assert.equal(everythingFields.empty, true);
    assert.equal(everythingFields.toString(), '');
    assert.equal(everythingFields.matches({}), true);
    assert.equal(everythingFields.requiresExactMatch('metadata.name'), undefined);
    assert.equal(parseFieldSelector(''), everythingFields);
  });
});
