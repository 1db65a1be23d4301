import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeContinueToken, encodeContinueToken } from './continue.ts';
import { StatusError } from './status.ts';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
const token = (body: object | string): string => b64(typeof body === 'string' ? body : JSON.stringify(body));

describe('encodeContinueToken', () => {
  it('produces the same bytes as kube-apiserver', () => {
    // From upstream: EncodeContinue("/registry/foo\x00", "/registry/", 12345).
    assert.equal(
      encodeContinueToken(12345, 'foo\u0000'),
      'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDUsInN0YXJ0IjoiZm9vXHUwMDAwIn0',
    );
  });
  it('is unpadded base64url', () => {
    for (let n = 0; n < 8; n++) {
      const t = encodeContinueToken(1, `${'k'.repeat(n)}?>>\u0000`);
      assert.match(t, /^[A-Za-z0-9_-]+$/);
    }
  });
  it('escapes HTML characters as Go json.Marshal does', () => {
    const json = Buffer.from(encodeContinueToken(7, 'a<b>&c\u2028'), 'base64url').toString('utf8');
    assert.equal(json, '{"v":"meta.k8s.io/v1","rv":7,"start":"a\\u003cb\\u003e\\u0026c\\u2028"}');
  });
  it('refuses a non-integer resourceVersion', () => {
    assert.throws(() => encodeContinueToken(1.5, 'a'), TypeError);
    assert.throws(() => encodeContinueToken(Number.NaN, 'a'), TypeError);
  });
});

describe('decodeContinueToken: valid tokens', () => {
  const cases: { name: string; token: string; resourceVersion: number; startKey: string }[] = [
    {
      name: 'an encoded token',
      token: encodeContinueToken(42, 'ns/name\u0000'),
      resourceVersion: 42,
      startKey: 'ns/name\u0000',
    },
    {
      name: 'rv -1 (continue at latest)',
      token: encodeContinueToken(-1, 'b\u0000'),
      resourceVersion: -1,
      startKey: 'b\u0000',
    },
    {
      name: 'html characters',
      token: encodeContinueToken(3, 'a<b>&'),
      resourceVersion: 3,
      startKey: 'a<b>&',
    },
    {
      name: 'upstream literal',
      token: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDUsInN0YXJ0IjoiZm9vXHUwMDAwIn0',
      resourceVersion: 12345,
      startKey: 'foo\u0000',
    },
    // A leading slash is allowed and dropped: the key stays below the prefix.
    {
      name: 'rooted start key',
      token: token({ v: 'meta.k8s.io/v1', rv: 5, start: '/ns/a' }),
      resourceVersion: 5,
      startKey: 'ns/a',
    },
    {
      name: 'the prefix itself',
      token: token({ v: 'meta.k8s.io/v1', rv: 5, start: '/' }),
      resourceVersion: 5,
      startKey: '',
    },
    {
      name: 'dots inside a segment',
      token: token({ v: 'meta.k8s.io/v1', rv: 5, start: 'a..b/.c' }),
      resourceVersion: 5,
      startKey: 'a..b/.c',
    },
    {
      name: 'line breaks in the base64 are ignored, as Go does',
      token: `${encodeContinueToken(9, 'x').slice(0, 10)}\r\n${encodeContinueToken(9, 'x').slice(10)}`,
      resourceVersion: 9,
      startKey: 'x',
    },
    {
      name: 'unknown JSON fields are ignored',
      token: token({ v: 'meta.k8s.io/v1', rv: 8, start: 'k', extra: true }),
      resourceVersion: 8,
      startKey: 'k',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(decodeContinueToken(c.token), {
        resourceVersion: c.resourceVersion,
        startKey: c.startKey,
      });
    });
  }
  it('round-trips every kind of key', () => {
    for (const key of ['a', 'ns/name\u0000', 'ns/with space/x\u0000', 'ünï/✓\u0000', 'a"b\\c\u0000']) {
      for (const rv of [1, -1, 2 ** 40]) {
        assert.deepEqual(decodeContinueToken(encodeContinueToken(rv, key)), {
          resourceVersion: rv,
          startKey: key,
        });
      }
    }
  });
});

describe('decodeContinueToken: tampered tokens are 400 BadRequest', () => {
  const prefix = 'invalid continue token: continue key is not valid';
  const cases: { name: string; token: string; message: string | RegExp }[] = [
    {
      name: 'characters outside base64url',
      token: 'not base64!',
      message: `${prefix}: illegal base64 data at input byte 3`,
    },
    {
      name: 'standard base64 alphabet',
      token: 'ab+/',
      message: `${prefix}: illegal base64 data at input byte 2`,
    },
    { name: 'padding', token: `${b64('{"v":1}')}=`, message: /illegal base64 data at input byte \d+$/ },
    {
      name: 'a dangling base64 character',
      token: 'abcde',
      message: `${prefix}: illegal base64 data at input byte 4`,
    },
    { name: 'empty token', token: '', message: new RegExp(`^${prefix}: .+`) },
    { name: 'not JSON', token: b64('not json'), message: new RegExp(`^${prefix}: .+`) },
    {
      name: 'truncated JSON',
      token: encodeContinueToken(5, 'abc').slice(0, 20),
      message: new RegExp(`^${prefix}: .+`),
    },
    {
      name: 'a JSON array',
      token: token('[1,2]'),
      message: `${prefix}: json: cannot unmarshal array into continue token`,
    },
    {
      name: 'a JSON string',
      token: token('"x"'),
      message: `${prefix}: json: cannot unmarshal string into continue token`,
    },
    {
      name: 'JSON null (zero token: no version)',
      token: token('null'),
      message: `${prefix}: server does not recognize this encoded version ""`,
    },
    {
      name: 'another version',
      token: token({ v: 'meta.k8s.io/v2', rv: 1, start: 'a' }),
      message: `${prefix}: server does not recognize this encoded version "meta.k8s.io/v2"`,
    },
    {
      name: 'no version',
      token: token({ rv: 1, start: 'a' }),
      message: `${prefix}: server does not recognize this encoded version ""`,
    },
    { name: 'non-string version', token: token({ v: 1, rv: 1, start: 'a' }), message: /field v$/ },
    {
      name: 'rv 0',
      token: token({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }),
      message: `${prefix}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`,
    },
    {
      name: 'rv missing',
      token: token({ v: 'meta.k8s.io/v1', start: 'a' }),
      message: `${prefix}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`,
    },
    {
      name: 'rv as a string',
      token: token({ v: 'meta.k8s.io/v1', rv: '5', start: 'a' }),
      message: /field rv of type int64$/,
    },
    {
      name: 'fractional rv',
      token: token({ v: 'meta.k8s.io/v1', rv: 1.5, start: 'a' }),
      message: /field rv of type int64$/,
    },
    {
      name: 'rv beyond 2^53',
      token: token('{"v":"meta.k8s.io/v1","rv":18014398509481985,"start":"a"}'),
      message: /field rv/,
    },
    {
      name: 'empty start key',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: '' }),
      message: `${prefix}: encoded start key empty (version meta.k8s.io/v1)`,
    },
    {
      name: 'missing start key',
      token: token({ v: 'meta.k8s.io/v1', rv: 3 }),
      message: `${prefix}: encoded start key empty (version meta.k8s.io/v1)`,
    },
    {
      name: 'non-string start key',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: 5 }),
      message: /field start$/,
    },
    {
      name: 'parent traversal',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: '../secrets/x' }),
      message: `${prefix}: ../secrets/x`,
    },
    {
      name: 'traversal in the middle',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: 'a/../../b' }),
      message: `${prefix}: a/../../b`,
    },
    {
      name: 'rooted traversal',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: '/../x' }),
      message: `${prefix}: /../x`,
    },
    {
      name: 'a lone dot-dot',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: '..' }),
      message: `${prefix}: ..`,
    },
    { name: 'a lone dot', token: token({ v: 'meta.k8s.io/v1', rv: 3, start: '.' }), message: `${prefix}: .` },
    {
      name: 'a dot segment',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: 'a/./b' }),
      message: `${prefix}: a/./b`,
    },
    {
      name: 'a doubled slash',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: 'a//b' }),
      message: `${prefix}: a//b`,
    },
    {
      name: 'a trailing slash',
      token: token({ v: 'meta.k8s.io/v1', rv: 3, start: 'a/' }),
      message: `${prefix}: a/`,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.throws(
        () => decodeContinueToken(c.token),
        (err: unknown) => {
          assert.ok(err instanceof StatusError, `expected StatusError, got ${err}`);
          assert.equal(err.code, 400);
          assert.equal(err.reason, 'BadRequest');
          if (typeof c.message === 'string') assert.equal(err.message, c.message);
          else assert.match(err.message, c.message);
          assert.ok(err.message.startsWith('invalid continue token: '));
          return true;
        },
      );
    });
  }
});
