import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFieldSelector } from './fields.ts';
import { parseLabelSelector } from './labels.ts';
import { isWatchRequested, type ListVerb, listOptionsToQuery, parseListOptions } from './listoptions.ts';
import { StatusError } from './status.ts';

const q = (text: string): URLSearchParams => new URLSearchParams(text);

function expectStatus(fn: () => unknown, code: number, check: (err: StatusError) => void = () => {}): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected StatusError, got ${err}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.reason, code === 422 ? 'Invalid' : 'BadRequest');
    check(err);
    return true;
  });
}

describe('parseListOptions: decoding', () => {
  it('defaults when nothing is given', () => {
    const opts = parseListOptions(q(''), 'list');
    assert.equal(opts.resourceVersion, '');
    assert.equal(opts.resourceVersionMatch, '');
    assert.equal(opts.limit, 0);
    assert.equal(opts.continue, '');
    assert.equal(opts.labelSelector.empty, true);
    assert.equal(opts.fieldSelector.empty, true);
    assert.equal(opts.allowWatchBookmarks, false);
    assert.equal(opts.sendInitialEvents, undefined);
    assert.equal(opts.timeoutSeconds, undefined);
  });

  it('reads every list parameter', () => {
    const opts = parseListOptions(
      q(
        'resourceVersion=123&resourceVersionMatch=NotOlderThan&limit=500&labelSelector=app%3Dweb,tier!%3Ddb&fieldSelector=metadata.name%3Dfoo&timeoutSeconds=30',
      ),
      'list',
    );
    assert.equal(opts.resourceVersion, '123');
    assert.equal(opts.resourceVersionMatch, 'NotOlderThan');
    assert.equal(opts.limit, 500);
    assert.equal(opts.labelSelector.toString(), 'app=web,tier!=db');
    assert.equal(opts.fieldSelector.requiresExactMatch('metadata.name'), 'foo');
    assert.equal(opts.timeoutSeconds, 30);
  });

  it('reads every watch parameter', () => {
    const opts = parseListOptions(
      q(
        'watch=1&resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=300&sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
      ),
      'watch',
    );
    assert.equal(opts.resourceVersion, '7');
    assert.equal(opts.allowWatchBookmarks, true);
    assert.equal(opts.timeoutSeconds, 300);
    assert.equal(opts.sendInitialEvents, true);
    assert.equal(opts.resourceVersionMatch, 'NotOlderThan');
  });

  const bools: { value: string; want: boolean }[] = [
    { value: 'true', want: true },
    { value: '1', want: true },
    { value: '', want: true },
    { value: 'yes', want: true },
    { value: 'false', want: false },
    { value: 'FALSE', want: false },
    { value: '0', want: false },
  ];
  for (const { value, want } of bools) {
    it(`reads allowWatchBookmarks=${value} as ${want}, as Go's bool conversion`, () => {
      assert.equal(parseListOptions(q(`allowWatchBookmarks=${value}`), 'watch').allowWatchBookmarks, want);
    });
    it(`isWatchRequested(watch=${value}) is ${want}`, () =>
      assert.equal(isWatchRequested(q(`watch=${value}`)), want));
  }
  it('isWatchRequested is false without the parameter, true for a bare ?watch', () => {
    assert.equal(isWatchRequested(q('')), false);
    assert.equal(isWatchRequested(q('watch')), true);
    assert.equal(isWatchRequested(q('watch=false&watch=true')), false, 'the first value counts');
  });

  const integers: { value: string; want: number }[] = [
    { value: '0', want: 0 },
    { value: '500', want: 500 },
    { value: '+5', want: 5 },
    { value: '007', want: 7 },
    { value: '9223372036854775807', want: Number.MAX_SAFE_INTEGER },
  ];
  for (const { value, want } of integers) {
    it(`reads limit=${value} and timeoutSeconds=${value} as ${want}`, () => {
      const opts = parseListOptions(
        q(`limit=${encodeURIComponent(value)}&timeoutSeconds=${encodeURIComponent(value)}`),
        'list',
      );
      assert.equal(opts.limit, want);
      assert.equal(opts.timeoutSeconds, want);
    });
  }
  // strconv.ParseInt takes a sign: a negative limit is no limit (kube pages only for limit > 0), a negative
  // timeout is kept (the watch then ends at once).
  for (const value of ['-1', '-9223372036854775808']) {
    it(`reads limit=${value} as no limit and keeps timeoutSeconds=${value}`, () => {
      const opts = parseListOptions(q(`limit=${value}&timeoutSeconds=${value}`), 'list');
      assert.equal(opts.limit, 0);
      assert.ok(opts.timeoutSeconds! < 0);
    });
  }
  const badIntegers: { value: string; problem: string }[] = [
    { value: 'abc', problem: 'invalid syntax' },
    { value: '1.5', problem: 'invalid syntax' },
    { value: '', problem: 'invalid syntax' },
    { value: ' 5', problem: 'invalid syntax' },
    { value: '1e3', problem: 'invalid syntax' },
    { value: '+', problem: 'invalid syntax' },
    { value: '9223372036854775808', problem: 'value out of range' },
    { value: '-9223372036854775809', problem: 'value out of range' },
  ];
  for (const name of ['limit', 'timeoutSeconds']) {
    for (const { value, problem } of badIntegers) {
      it(`rejects ${name}=${JSON.stringify(value)} with 400 as strconv.ParseInt words it`, () =>
        expectStatus(
          () => parseListOptions(q(`${name}=${encodeURIComponent(value)}`), 'list'),
          400,
          (err) =>
            assert.equal(err.message, `strconv.ParseInt: parsing ${JSON.stringify(value)}: ${problem}`),
        ));
    }
  }
  it('quotes a control character as Go does (\\x01, not \\u0001)', () =>
    expectStatus(
      () => parseListOptions(q('limit=%01'), 'list'),
      400,
      (err) => assert.equal(err.message, 'strconv.ParseInt: parsing "\\x01": invalid syntax'),
    ));

  it('rejects a bad label selector with 400', () =>
    expectStatus(
      () => parseListOptions(q('labelSelector=x%20in%20(a'), 'list'),
      400,
      (err) => assert.equal(err.message, "unable to parse requirement: found '', expected: ',' or ')'"),
    ));
  it('rejects a bad field selector with 400', () =>
    expectStatus(
      () => parseListOptions(q('fieldSelector=x'), 'watch'),
      400,
      (err) => assert.equal(err.message, "invalid selector: 'x'; can't understand 'x'"),
    ));
  it('decoding errors come before validation errors', () =>
    expectStatus(() => parseListOptions(q('labelSelector=!&resourceVersionMatch=Exact'), 'list'), 400));
});

interface ValidationCase {
  name: string;
  verb: ListVerb;
  query: string;
  /** The causes expected on the 422, as field + reason + message; absent when the request is valid. */
  causes?: { field: string; reason: string; message: string }[];
}

const forbidden = (field: string, detail: string) => ({
  field,
  reason: 'FieldValueForbidden',
  message: `Forbidden: ${detail}`,
});

describe('parseListOptions: ListOptions validation (422 Invalid)', () => {
  const cases: ValidationCase[] = [
    {
      name: 'list with match NotOlderThan and RV',
      verb: 'list',
      query: 'resourceVersion=5&resourceVersionMatch=NotOlderThan',
    },
    {
      name: 'list with match NotOlderThan and RV 0',
      verb: 'list',
      query: 'resourceVersion=0&resourceVersionMatch=NotOlderThan',
    },
    {
      name: 'list with match Exact and RV',
      verb: 'list',
      query: 'resourceVersion=5&resourceVersionMatch=Exact',
    },
    {
      name: 'list: match without resourceVersion',
      verb: 'list',
      query: 'resourceVersionMatch=NotOlderThan',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      ],
    },
    {
      name: 'list: match with continue',
      verb: 'list',
      query: 'resourceVersion=0&resourceVersionMatch=NotOlderThan&continue=abc',
      causes: [
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      ],
    },
    {
      name: 'list: Exact with RV 0',
      verb: 'list',
      query: 'resourceVersion=0&resourceVersionMatch=Exact',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      ],
    },
    {
      name: 'list: unknown match',
      verb: 'list',
      query: 'resourceVersion=5&resourceVersionMatch=Latest',
      causes: [
        {
          field: 'resourceVersionMatch',
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "Latest": supported values: "Exact", "NotOlderThan", ""',
        },
      ],
    },
    {
      name: 'list: sendInitialEvents=true',
      verb: 'list',
      query: 'sendInitialEvents=true',
      causes: [forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')],
    },
    {
      name: 'list: sendInitialEvents=false',
      verb: 'list',
      query: 'sendInitialEvents=false',
      causes: [forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')],
    },
    {
      name: 'list: several problems at once',
      verb: 'list',
      query: 'resourceVersionMatch=Exact&continue=abc&sendInitialEvents=true',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
        forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'),
      ],
    },
    { name: 'watch with nothing', verb: 'watch', query: '' },
    {
      name: 'watch from an RV with bookmarks',
      verb: 'watch',
      query: 'resourceVersion=10&allowWatchBookmarks=true',
    },
    {
      name: 'watch-list as client-go sends it',
      verb: 'watch',
      query:
        'sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=',
    },
    {
      name: 'watch with sendInitialEvents=false and NotOlderThan',
      verb: 'watch',
      query: 'sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=5',
    },
    {
      name: 'watch: sendInitialEvents=true without match',
      verb: 'watch',
      query: 'sendInitialEvents=true',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      ],
    },
    {
      name: 'watch: match without sendInitialEvents',
      verb: 'watch',
      query: 'resourceVersionMatch=NotOlderThan&resourceVersion=5',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      ],
    },
    {
      name: 'watch: sendInitialEvents=false without match',
      verb: 'watch',
      query: 'sendInitialEvents=false',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      ],
    },
    {
      name: 'watch: sendInitialEvents with Exact',
      verb: 'watch',
      query: 'sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=5',
      causes: [
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
        {
          field: 'resourceVersionMatch',
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "Exact": supported values: "NotOlderThan"',
        },
      ],
    },
    {
      name: 'watch: match with continue',
      verb: 'watch',
      query: 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=abc',
      causes: [
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      ],
    },
    {
      name: 'list: the largest uint64 resourceVersion',
      verb: 'list',
      query: 'resourceVersion=18446744073709551615',
    },
  ];

  for (const c of cases) {
    if (!c.causes) {
      it(`accepts ${c.name}`, () => {
        parseListOptions(q(c.query), c.verb);
      });
      continue;
    }
    const causes = c.causes;
    it(`rejects ${c.name}`, () =>
      expectStatus(
        () => parseListOptions(q(c.query), c.verb),
        422,
        (err) => {
          assert.equal(err.status.details?.kind, 'ListOptions');
          assert.equal(err.status.details?.group, 'meta.k8s.io');
          assert.equal(err.status.details?.name, '');
          assert.deepEqual(err.status.details?.causes, causes);
          assert.ok(err.message.startsWith('ListOptions.meta.k8s.io "" is invalid: '), err.message);
        },
      ));
  }

  it('words the message as kube-apiserver does', () =>
    expectStatus(
      () => parseListOptions(q('resourceVersionMatch=NotOlderThan'), 'list'),
      422,
      (err) =>
        assert.equal(
          err.message,
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
    ));

  it('keeps NotOlderThan on a watch-list', () => {
    const opts = parseListOptions(
      q('sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0'),
      'watch',
    );
    assert.equal(opts.sendInitialEvents, true);
    assert.equal(opts.resourceVersionMatch, 'NotOlderThan');
  });

  it('leaves a plain watch without sendInitialEvents (defaulting is the caller’s)', () => {
    const opts = parseListOptions(q('resourceVersion=0'), 'watch');
    assert.equal(opts.sendInitialEvents, undefined);
    assert.equal(opts.resourceVersionMatch, '');
  });
});

describe('parseListOptions: continue with resourceVersion', () => {
  for (const rv of ['', '0']) {
    it(`accepts continue with resourceVersion=${JSON.stringify(rv)}`, () => {
      const opts = parseListOptions(q(`continue=tok&resourceVersion=${rv}`), 'list');
      assert.equal(opts.continue, 'tok');
    });
  }
  it('rejects continue with resourceVersion=5 with 400', () =>
    expectStatus(
      () => parseListOptions(q('continue=tok&resourceVersion=5&limit=10'), 'list'),
      400,
      (err) => assert.equal(err.message, 'specifying resource version is not allowed when using continue'),
    ));
  it('refuses a non-numeric resourceVersion with continue as etcd does, before the continue rule', () =>
    expectStatus(
      () => parseListOptions(q('continue=tok&resourceVersion=abc&limit=10'), 'list'),
      400,
      (err) =>
        assert.equal(
          err.message,
          'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
        ),
    ));
  it('leaves a continue on a watch alone', () => {
    assert.equal(parseListOptions(q('continue=tok&resourceVersion=5'), 'watch').continue, 'tok');
  });
});

describe('parseListOptions: get', () => {
  it('reads only resourceVersion', () => {
    const opts = parseListOptions(
      q('resourceVersion=12&labelSelector=!!!&limit=-1&sendInitialEvents=true'),
      'get',
    );
    assert.equal(opts.resourceVersion, '12');
    assert.equal(opts.labelSelector.empty, true);
    assert.equal(opts.limit, 0);
    assert.equal(opts.sendInitialEvents, undefined);
  });
});

/**
 * A resourceVersion that is not a uint64: where the watch cache serves the read, kube-apiserver answers its
 * storage.InvalidError as a bare 422 (message = the field error, no details); where etcd serves a list, 400.
 */
describe('parseListOptions: non-numeric resourceVersion', () => {
  const invalid = (rv: string, problem = 'invalid syntax') =>
    `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${problem}`;
  const cached: { verb: ListVerb; query: string; rv: string; problem?: string }[] = [
    { verb: 'get', query: 'resourceVersion=x', rv: 'x' },
    { verb: 'list', query: 'resourceVersion=abc', rv: 'abc' },
    { verb: 'list', query: 'resourceVersion=-1', rv: '-1' },
    { verb: 'list', query: 'resourceVersion=abc&resourceVersionMatch=NotOlderThan', rv: 'abc' },
    { verb: 'list', query: 'resourceVersion=abc&limit=0', rv: 'abc' },
    {
      verb: 'list',
      query: 'resourceVersion=18446744073709551616',
      rv: '18446744073709551616',
      problem: 'value out of range',
    },
    { verb: 'watch', query: 'resourceVersion=1.5', rv: '1.5' },
  ];
  for (const c of cached) {
    it(`${c.verb} ?${c.query}: 422 with the bare field error`, () =>
      expectStatus(
        () => parseListOptions(q(c.query), c.verb),
        422,
        (err) => {
          assert.equal(err.message, invalid(c.rv, c.problem));
          assert.equal(err.status.details, undefined);
        },
      ));
  }
  for (const query of ['resourceVersion=abc&limit=5', 'resourceVersion=abc&resourceVersionMatch=Exact']) {
    it(`list ?${query} (served by etcd): 400 invalid resource version`, () =>
      expectStatus(
        () => parseListOptions(q(query), 'list'),
        400,
        (err) => assert.equal(err.message, `invalid resource version: ${invalid('abc')}`),
      ));
  }
});

describe('listOptionsToQuery', () => {
  it('leaves out defaults', () => {
    assert.equal(listOptionsToQuery({}).toString(), '');
    assert.equal(
      listOptionsToQuery({
        limit: 0,
        continue: '',
        resourceVersion: '',
        allowWatchBookmarks: false,
      }).toString(),
      '',
    );
  });
  it('writes every parameter', () => {
    const query = listOptionsToQuery({
      watch: true,
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name=a\\,b',
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
      limit: 500,
      continue: 'tok',
      allowWatchBookmarks: true,
      sendInitialEvents: false,
      timeoutSeconds: 0,
    });
    assert.deepEqual(Object.fromEntries(query), {
      watch: 'true',
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name=a\\,b',
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
      limit: '500',
      continue: 'tok',
      allowWatchBookmarks: 'true',
      sendInitialEvents: 'false',
      timeoutSeconds: '0',
    });
  });
  it('accepts parsed selectors', () => {
    const query = listOptionsToQuery({
      labelSelector: parseLabelSelector('b=2,a in (y,x)'),
      fieldSelector: parseFieldSelector('f=a\\=b'),
    });
    assert.equal(query.get('labelSelector'), 'a in (x,y),b=2');
    assert.equal(query.get('fieldSelector'), 'f=a\\=b');
  });
  it('round-trips through parseListOptions', () => {
    const watch = {
      labelSelector: 'app=web,!legacy',
      fieldSelector: 'metadata.namespace=ns',
      resourceVersion: '42',
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan' as const,
      timeoutSeconds: 300,
    };
    const query = listOptionsToQuery({ ...watch, watch: true });
    assert.equal(isWatchRequested(query), true);
    const opts = parseListOptions(query, 'watch');
    assert.equal(opts.labelSelector.toString(), 'app=web,!legacy');
    assert.equal(opts.fieldSelector.toString(), watch.fieldSelector);
    assert.equal(opts.resourceVersion, '42');
    assert.equal(opts.allowWatchBookmarks, true);
    assert.equal(opts.sendInitialEvents, true);
    assert.equal(opts.resourceVersionMatch, 'NotOlderThan');
    assert.equal(opts.timeoutSeconds, 300);

    const list = parseListOptions(
      listOptionsToQuery({ limit: 500, continue: 'tok', resourceVersion: '0' }),
      'list',
    );
    assert.equal(list.limit, 500);
    assert.equal(list.continue, 'tok');
    assert.equal(list.resourceVersion, '0');
  });
});
