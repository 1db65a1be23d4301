import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  everythingLabels,
  exactLabelValue,
  type LabelRequirement,
  labelSelectorFromMeta,
  nothingLabels,
  parseLabelSelector,
} from './labels.ts';
import { StatusError } from './status.ts';

function assertBadRequest(fn: () => unknown, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected StatusError, got ${err}`);
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_RULE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('parseLabelSelector: valid input', () => {
  const cases: { input: string; canonical: string; requirements: LabelRequirement[] }[] = [
    { input: '', canonical: '', requirements: [] },
    { input: ' \t\r\n ', canonical: '', requirements: [] },
    { input: 'x=a', canonical: 'x=a', requirements: [{ key: 'x', operator: '=', values: ['a'] }] },
    { input: 'x==a', canonical: 'x==a', requirements: [{ key: 'x', operator: '==', values: ['a'] }] },
    { input: 'x!=a', canonical: 'x!=a', requirements: [{ key: 'x', operator: '!=', values: ['a'] }] },
    { input: 'x', canonical: 'x', requirements: [{ key: 'x', operator: 'exists', values: [] }] },
    { input: '!x', canonical: '!x', requirements: [{ key: 'x', operator: '!', values: [] }] },
    { input: ' ! x ', canonical: '!x', requirements: [{ key: 'x', operator: '!', values: [] }] },
    {
      input: 'x in (b,a,a)',
      canonical: 'x in (a,b)',
      requirements: [{ key: 'x', operator: 'in', values: ['a', 'b'] }],
    },
    { input: 'x in(a)', canonical: 'x in (a)', requirements: [{ key: 'x', operator: 'in', values: ['a'] }] },
    {
      input: 'x notin (a)',
      canonical: 'x notin (a)',
      requirements: [{ key: 'x', operator: 'notin', values: ['a'] }],
    },
    { input: 'x>1', canonical: 'x>1', requirements: [{ key: 'x', operator: 'gt', values: ['1'] }] },
    { input: 'x < 5', canonical: 'x<5', requirements: [{ key: 'x', operator: 'lt', values: ['5'] }] },
    {
      input: 'y=b,x=a',
      canonical: 'x=a,y=b',
      requirements: [
        { key: 'x', operator: '=', values: ['a'] },
        { key: 'y', operator: '=', values: ['b'] },
      ],
    },
    // Empty values are legal after `=` and inside sets (upstream: "The empty string is a valid VALUE").
    { input: 'x=', canonical: 'x=', requirements: [{ key: 'x', operator: '=', values: [''] }] },
    {
      input: 'x= ,z= ',
      canonical: 'x=,z=',
      requirements: [
        { key: 'x', operator: '=', values: [''] },
        { key: 'z', operator: '=', values: [''] },
      ],
    },
    { input: 'x in ()', canonical: 'x in ()', requirements: [{ key: 'x', operator: 'in', values: [''] }] },
    {
      input: 'x notin (,)',
      canonical: 'x notin ()',
      requirements: [{ key: 'x', operator: 'notin', values: [''] }],
    },
    {
      input: 'x in (a,,b)',
      canonical: 'x in (,a,b)',
      requirements: [{ key: 'x', operator: 'in', values: ['', 'a', 'b'] }],
    },
    {
      input: 'x in (a,)',
      canonical: 'x in (,a)',
      requirements: [{ key: 'x', operator: 'in', values: ['', 'a'] }],
    },
    {
      input: 'x in (,a)',
      canonical: 'x in (,a)',
      requirements: [{ key: 'x', operator: 'in', values: ['', 'a'] }],
    },
    // `in` and `notin` are identifiers wherever a key or value is expected.
    {
      input: 'in in (in,notin)',
      canonical: 'in in (in,notin)',
      requirements: [{ key: 'in', operator: 'in', values: ['in', 'notin'] }],
    },
    {
      input: 'notin=in',
      canonical: 'notin=in',
      requirements: [{ key: 'notin', operator: '=', values: ['in'] }],
    },
    {
      input: 'example.com/app=web',
      canonical: 'example.com/app=web',
      requirements: [{ key: 'example.com/app', operator: '=', values: ['web'] }],
    },
    {
      input: '\tx\n=\r\na ,\ty  in  ( b , c )',
      canonical: 'x=a,y in (b,c)',
      requirements: [
        { key: 'x', operator: '=', values: ['a'] },
        { key: 'y', operator: 'in', values: ['b', 'c'] },
      ],
    },
    // A NUL where a token would start reads as the end of input, as upstream's byte lexer does.
    { input: 'x=a \u0000 y=b', canonical: 'x=a', requirements: [{ key: 'x', operator: '=', values: ['a'] }] },
    {
      input: 'h<2,g>1,!f,e,d notin (e),c in (d),b!=c,a=b',
      canonical: 'a=b,b!=c,c in (d),d notin (e),e,!f,g>1,h<2',
      requirements: [
        { key: 'a', operator: '=', values: ['b'] },
        { key: 'b', operator: '!=', values: ['c'] },
        { key: 'c', operator: 'in', values: ['d'] },
        { key: 'd', operator: 'notin', values: ['e'] },
        { key: 'e', operator: 'exists', values: [] },
        { key: 'f', operator: '!', values: [] },
        { key: 'g', operator: 'gt', values: ['1'] },
        { key: 'h', operator: 'lt', values: ['2'] },
      ],
    },
    {
      input: `${'k'.repeat(63)}=${'v'.repeat(63)}`,
      canonical: `${'k'.repeat(63)}=${'v'.repeat(63)}`,
      requirements: [{ key: 'k'.repeat(63), operator: '=', values: ['v'.repeat(63)] }],
    },
  ];

  for (const { input, canonical, requirements } of cases) {
    it(`parses ${JSON.stringify(input)}`, () => {
      const sel = parseLabelSelector(input);
      assert.deepEqual(
        sel.requirements.map((r) => ({ ...r })),
        requirements,
      );
      assert.equal(sel.toString(), canonical);
      assert.equal(sel.empty, requirements.length === 0);
    });
    it(`round-trips ${JSON.stringify(input)}`, () => {
      const again = parseLabelSelector(parseLabelSelector(input).toString());
      assert.equal(again.toString(), canonical);
      assert.deepEqual(
        again.requirements.map((r) => ({ ...r })),
        requirements,
      );
    });
  }
});

describe('parseLabelSelector: invalid input is 400 BadRequest', () => {
  const cases: { input: string; message: string | RegExp }[] = [
    {
      input: 'x=a||y=b',
      message: `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_RULE}`,
    },
    { input: 'x==a==b', message: "found '==', expected: ',' or 'end of string'" },
    { input: '!x=a', message: "found '=', expected: ',' or 'end of string'" },
    { input: 'x=a b', message: "found 'b', expected: ',' or 'end of string'" },
    {
      input: 'x<a',
      message: `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
    },
    { input: 'x>', message: /^unable to parse requirement: values\[0\]: Invalid value: "": for 'Gt', 'Lt'/ },
    { input: 'x>1.5', message: /the value must be an integer/ },
    { input: 'x>99999999999999999999', message: /the value must be an integer/ },
    // A negative bound is an integer but not a valid label value.
    {
      input: 'x>-1',
      message: `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_RULE}`,
    },
    { input: 'x in (a', message: "unable to parse requirement: found '', expected: ',' or ')'" },
    { input: 'x in (a,', message: "unable to parse requirement: found '', expected: ',', or identifier" },
    { input: 'x in (', message: "unable to parse requirement: found '', expected: ',', ')' or identifier" },
    { input: 'x in a', message: "unable to parse requirement: found 'a' expected: '('" },
    { input: 'x in', message: "unable to parse requirement: found '' expected: '('" },
    { input: 'x notin', message: "unable to parse requirement: found '' expected: '('" },
    { input: 'x in (a b)', message: "unable to parse requirement: found 'b', expected: ',' or ')'" },
    {
      input: 'x in (=)',
      message: "unable to parse requirement: found '=', expected: ',', ')' or identifier",
    },
    { input: 'x in (,=)', message: "unable to parse requirement: found '=', expected: ',', or identifier" },
    {
      input: 'x in ((a))',
      message: "unable to parse requirement: found '(', expected: ',', ')' or identifier",
    },
    {
      input: 'x in (-a)',
      message: `unable to parse requirement: values[0][x]: Invalid value: "-a": ${VALUE_RULE}`,
    },
    { input: ',x', message: "found ',', expected: !, identifier, or 'end of string'" },
    { input: 'x,', message: "found '', expected: identifier after ','" },
    { input: 'x,,y', message: "found ',', expected: identifier after ','" },
    { input: '(x)', message: "found '(', expected: !, identifier, or 'end of string'" },
    { input: '=a', message: "found '=', expected: !, identifier, or 'end of string'" },
    {
      input: 'x y',
      message: "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
    },
    {
      input: 'x!',
      message: "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt",
    },
    { input: 'x=(', message: "unable to parse requirement: found '(', expected: identifier" },
    { input: 'x!==a', message: "unable to parse requirement: found '=', expected: identifier" },
    { input: '!', message: "unable to parse requirement: found '', expected: identifier" },
    { input: '!!x', message: "unable to parse requirement: found '!', expected: identifier" },
    { input: '-x', message: `unable to parse requirement: <nil>: Invalid value: "-x": ${NAME_RULE}` },
    { input: 'x_=a', message: `unable to parse requirement: <nil>: Invalid value: "x_": ${NAME_RULE}` },
    {
      input: 'x/',
      message: `unable to parse requirement: <nil>: Invalid value: "x/": name part must be non-empty; ${NAME_RULE}`,
    },
    { input: '/x', message: /<nil>: Invalid value: "\/x": prefix part must be non-empty$/ },
    {
      input: 'Example.com/x',
      message: /prefix part a lowercase RFC 1123 subdomain must consist of lower case/,
    },
    { input: `${'a'.repeat(254)}/x`, message: /prefix part must be no more than 253 characters/ },
    {
      input: 'a/b/c',
      message:
        /<nil>: Invalid value: "a\/b\/c": a qualified name must consist of .* with an optional DNS subdomain prefix/,
    },
    {
      input: `${'k'.repeat(64)}`,
      message: /Invalid value: "k{64}": name part must be no more than 63 characters$/,
    },
    {
      input: `x=${'v'.repeat(64)}`,
      message: /values\[0\]\[x\]: Invalid value: "v{64}": must be no more than 63 characters$/,
    },
    { input: 'x=a/b', message: /values\[0\]\[x\]: Invalid value: "a\/b": a valid label must be/ },
  ];

  for (const { input, message } of cases) {
    it(`rejects ${JSON.stringify(input)}`, () => assertBadRequest(() => parseLabelSelector(input), message));
  }
});

describe('LabelSelector.matches', () => {
  const labels = { a: '1', b: 'x', n: '10', e: '', big: '9223372036854775807' };
  const cases: { selector: string; on: Record<string, string> | undefined; want: boolean }[] = [
    { selector: 'a=1', on: labels, want: true },
    { selector: 'a==1', on: labels, want: true },
    { selector: 'a=2', on: labels, want: false },
    { selector: 'missing=1', on: labels, want: false },
    // `=` needs the key even when comparing with the empty value.
    { selector: 'missing=', on: labels, want: false },
    { selector: 'e=', on: labels, want: true },
    { selector: 'a!=1', on: labels, want: false },
    { selector: 'a!=2', on: labels, want: true },
    { selector: 'missing!=1', on: labels, want: true },
    { selector: 'a in (1,2)', on: labels, want: true },
    { selector: 'a in (2,3)', on: labels, want: false },
    { selector: 'missing in (1)', on: labels, want: false },
    { selector: 'e in ()', on: labels, want: true },
    { selector: 'a notin (1)', on: labels, want: false },
    { selector: 'a notin (2)', on: labels, want: true },
    { selector: 'missing notin (1)', on: labels, want: true },
    { selector: 'a', on: labels, want: true },
    { selector: 'e', on: labels, want: true },
    { selector: 'missing', on: labels, want: false },
    { selector: '!a', on: labels, want: false },
    { selector: '!missing', on: labels, want: true },
    { selector: 'n>9', on: labels, want: true },
    { selector: 'n>10', on: labels, want: false },
    { selector: 'n<11', on: labels, want: true },
    { selector: 'n<10', on: labels, want: false },
    // Integer, not string, comparison: "10" > "9" as numbers.
    { selector: 'n>9,n<100', on: labels, want: true },
    { selector: 'b>0', on: labels, want: false },
    { selector: 'b<0', on: labels, want: false },
    { selector: 'missing>0', on: labels, want: false },
    { selector: 'missing<0', on: labels, want: false },
    { selector: 'big>9223372036854775806', on: labels, want: true },
    { selector: 'big<9223372036854775807', on: labels, want: false },
    { selector: 'a=1,b=x', on: labels, want: true },
    { selector: 'a=1,b=y', on: labels, want: false },
    { selector: '', on: labels, want: true },
    { selector: '', on: undefined, want: true },
    { selector: 'missing!=1', on: undefined, want: true },
    { selector: 'missing notin (1)', on: undefined, want: true },
    { selector: '!missing', on: undefined, want: true },
    { selector: 'a', on: undefined, want: false },
    { selector: 'a=1', on: undefined, want: false },
    // Keys are own properties only: nothing is inherited from Object.prototype.
    { selector: 'constructor', on: {}, want: false },
    { selector: '!toString', on: {}, want: true },
  ];
  for (const { selector, on, want } of cases) {
    it(`${JSON.stringify(selector)} on ${JSON.stringify(on)} is ${want}`, () => {
      assert.equal(parseLabelSelector(selector).matches(on), want);
    });
  }
});

describe('LabelSelector.matches with many values', () => {
  // Values in every order of code units: digits, upper and lower case, dots, dashes, underscores, lengths.
  const values = ['b', 'B', 'a.b', 'a-b', 'a_b', '0', '10', '9', 'z9', 'Z', 'aa', 'a', 'ab-c.d_e'];
  for (let i = 0; i < 200; i++) values.push(`v${(i * 7919) % 1000}`);
  const list = values.join(',');
  it('in and notin find each value and no other, from a selector or matchExpressions', () => {
    const selectors = [
      [parseLabelSelector(`k in (${list})`), parseLabelSelector(`k notin (${list})`)],
      [
        labelSelectorFromMeta({ matchExpressions: [{ key: 'k', operator: 'In', values }] }),
        labelSelectorFromMeta({ matchExpressions: [{ key: 'k', operator: 'NotIn', values }] }),
      ],
    ];
    for (const [inSel, notInSel] of selectors) {
      for (const v of values) {
        assert.equal(inSel.matches({ k: v }), true, v);
        assert.equal(notInSel.matches({ k: v }), false, v);
      }
      for (const v of ['', 'c', 'A', 'a.c', '1', 'v1000', 'ab', 'b0', 'zz']) {
        assert.equal(inSel.matches({ k: v }), false, v);
        assert.equal(notInSel.matches({ k: v }), true, v);
      }
    }
  });
});

describe('everythingLabels and nothingLabels', () => {
  it('everything is empty and matches anything', () => {
    assert.equal(everythingLabels.empty, true);
    assert.equal(everythingLabels.toString(), '');
    assert.equal(everythingLabels.matches(undefined), true);
    assert.equal(everythingLabels.matches({ a: 'b' }), true);
    assert.equal(parseLabelSelector(''), everythingLabels);
  });
  it('nothing is not empty and matches nothing', () => {
    assert.equal(nothingLabels.empty, false);
    assert.deepEqual(nothingLabels.requirements, []);
    assert.equal(nothingLabels.matches(undefined), false);
    assert.equal(nothingLabels.matches({}), false);
    assert.equal(nothingLabels.matches({ a: 'b' }), false);
  });
});

describe('labelSelectorFromMeta', () => {
  const cases: {
    name: string;
    sel: Parameters<typeof labelSelectorFromMeta>[0];
    canonical: string;
    empty: boolean;
    matches: [Record<string, string> | undefined, boolean][];
  }[] = [
    { name: 'null selects nothing', sel: null, canonical: '', empty: false, matches: [[{}, false]] },
    {
      name: 'undefined selects nothing',
      sel: undefined,
      canonical: '',
      empty: false,
      matches: [[undefined, false]],
    },
    { name: '{} selects everything', sel: {}, canonical: '', empty: true, matches: [[undefined, true]] },
    {
      name: 'empty matchLabels/matchExpressions select everything',
      sel: { matchLabels: {}, matchExpressions: [] },
      canonical: '',
      empty: true,
      matches: [[{ a: 'b' }, true]],
    },
    {
      name: 'matchLabels become sorted equality requirements',
      sel: { matchLabels: { b: '2', a: '1' } },
      canonical: 'a=1,b=2',
      empty: false,
      matches: [
        [{ a: '1', b: '2', c: '3' }, true],
        [{ a: '1' }, false],
      ],
    },
    {
      name: 'each expression operator',
      sel: {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['fe', 'be'] },
          { key: 'env', operator: 'NotIn', values: ['prod'] },
          { key: 'team', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist', values: [] },
        ],
      },
      canonical: 'app=web,env notin (prod),!legacy,team,tier in (be,fe)',
      empty: false,
      matches: [
        [{ app: 'web', tier: 'fe', team: 'x' }, true],
        [{ app: 'web', tier: 'fe', team: 'x', env: 'prod' }, false],
        [{ app: 'web', tier: 'fe', team: 'x', legacy: '' }, false],
        [{ app: 'web', tier: 'db', team: 'x' }, false],
        [{ app: 'web', tier: 'fe' }, false],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const sel = labelSelectorFromMeta(c.sel);
      assert.equal(sel.toString(), c.canonical);
      assert.equal(sel.empty, c.empty);
      for (const [labels, want] of c.matches) assert.equal(sel.matches(labels), want, JSON.stringify(labels));
    });
  }

  const invalid: {
    name: string;
    sel: Parameters<typeof labelSelectorFromMeta>[0];
    message: string | RegExp;
  }[] = [
    {
      name: 'In without values',
      sel: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      message: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
    },
    {
      name: 'NotIn with values omitted',
      sel: { matchExpressions: [{ key: 'a', operator: 'NotIn' }] },
      message: /for 'in', 'notin' operators, values set can't be empty/,
    },
    {
      name: 'Exists with values',
      sel: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      message: 'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    },
    {
      name: 'unknown operator',
      sel: { matchExpressions: [{ key: 'a', operator: 'Gt' as 'In', values: ['1'] }] },
      message: '"Gt" is not a valid label selector operator',
    },
    {
      name: 'bad key',
      sel: { matchLabels: { '-a': 'x' } },
      message: /^key: Invalid value: "-a": name part must/,
    },
    {
      name: 'bad value',
      sel: { matchLabels: { a: '-x' } },
      message: /^values\[0\]\[a\]: Invalid value: "-x"/,
    },
    {
      name: 'several problems are aggregated',
      sel: { matchExpressions: [{ key: '-a', operator: 'In', values: [] }] },
      message: /^\[key: Invalid value: "-a": .*, values: Invalid value: \[\]: .*\]$/,
    },
  ];
  for (const c of invalid) {
    it(`rejects ${c.name} with 400`, () => assertBadRequest(() => labelSelectorFromMeta(c.sel), c.message));
  }
});

describe('exactLabelValue', () => {
  const cases: { selector: string; key: string; want: string | undefined }[] = [
    { selector: 'a=1', key: 'a', want: '1' },
    { selector: 'a==1', key: 'a', want: '1' },
    { selector: 'a in (1)', key: 'a', want: '1' },
    { selector: 'a in (1,2)', key: 'a', want: undefined },
    { selector: 'a!=1', key: 'a', want: undefined },
    { selector: 'a notin (1)', key: 'a', want: undefined },
    { selector: 'a', key: 'a', want: undefined },
    { selector: '!a', key: 'a', want: undefined },
    { selector: 'a>1', key: 'a', want: undefined },
    { selector: 'b=1', key: 'a', want: undefined },
    { selector: 'a=', key: 'a', want: '' },
    { selector: 'a!=x,a=y', key: 'a', want: 'y' },
    { selector: 'b=2,a=1', key: 'b', want: '2' },
    { selector: '', key: 'a', want: undefined },
  ];
  for (const { selector, key, want } of cases) {
    it(`${JSON.stringify(selector)} pins ${key} to ${JSON.stringify(want)}`, () => {
      assert.equal(exactLabelValue(parseLabelSelector(selector), key), want);
    });
  }
  it('nothing pins nothing', () => assert.equal(exactLabelValue(nothingLabels, 'a'), undefined));
  it('works on selectors from metav1', () =>
    assert.equal(exactLabelValue(labelSelectorFromMeta({ matchLabels: { app: 'web' } }), 'app'), 'web'));
});

describe('selectors are immutable', () => {
  it('requirements cannot be changed in place', () => {
    const sel = parseLabelSelector('a in (1,2)');
    assert.throws(() => {
      (sel.requirements as LabelRequirement[]).push({ key: 'b', operator: 'exists', values: [] });
    }, TypeError);
    assert.throws(() => {
      (sel.requirements[0] as { key: string }).key = 'z';
    }, TypeError);
    assert.equal(sel.toString(), 'a in (1,2)');
  });
});
