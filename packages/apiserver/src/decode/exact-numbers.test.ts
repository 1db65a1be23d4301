import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InexactNumberError, mayHoldInexactNumber, parseJsonExact } from './exact-numbers.ts';
import { parseYamlObject, parseYamlRequestBody } from './yaml-body.ts';
import { parseJsonBody } from '../http/respond.ts';
import { StatusError } from '@certkit/apimachinery';

function refusal(fn: () => unknown): InexactNumberError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InexactNumberError, String(err));
    return err;
  }
  assert.fail('expected an InexactNumberError');
}

test('a body without long number tokens skips the exact check', () => {
  assert.equal(mayHoldInexactNumber('{"spec":{"replicas":3,"uid":"5e123abc","big":123456789012345}}'), false);
  assert.equal(mayHoldInexactNumber('{"a":9007199254740993}'), true);
  assert.equal(mayHoldInexactNumber('{"a": [1, -12345678901234567]}'), true);
  assert.equal(mayHoldInexactNumber('{"a":1.5e400}'), true);
  assert.equal(mayHoldInexactNumber('a:\n- 12345678901234567\n'), true);
  assert.equal(mayHoldInexactNumber('12345678901234567'), true);
  // Within strings and names: a UID's hex, a hash, a base64 run.
  assert.equal(mayHoldInexactNumber('{"uid":"0b6f7c1e-2f1a-4d2e-9e123-6a3e5f7d8c9a","n":1}'), false);
  assert.equal(mayHoldInexactNumber('{"sha":"ab1234567890123456789","k":"x-9e999"}'), false);
});

test('an integer beyond ±(2^53 - 1) is refused with its field path', () => {
  const err = refusal(() => parseJsonExact('{"spec":{"items":[{"size":9007199254740993}]}}'));
  assert.equal(err.path, 'spec.items[0].size');
  assert.equal(
    err.message,
    'spec.items[0].size: Invalid value: 9007199254740993: must be within ±(2^53 - 1) (9007199254740991) to be stored exactly',
  );
  const status = err.status;
  assert.equal(status.code, 400);
  assert.equal(status.status.reason, 'BadRequest');
  assert.deepEqual(status.status.details?.causes?.[0]?.field, 'spec.items[0].size');
  assert.equal(refusal(() => parseJsonExact('{"a":-9223372036854775807}')).path, 'a');
});

test('a number beyond float64 is refused, not stored as null', () => {
  const err = refusal(() => parseJsonExact('{"spec":{"ratio":1e400}}'));
  assert.equal(err.path, 'spec.ratio');
  assert.match(err.message, /must be within the range of a float64/);
});

test('integers within ±(2^53 - 1) and floats in range are kept as written', () => {
  const text = '{"a":9007199254740991,"b":-9007199254740991,"c":1.5e300,"d":9007199254740993.0,"e":12}';
  const value = parseJsonExact(text) as Record<string, number>;
  assert.equal(value.a, Number.MAX_SAFE_INTEGER);
  assert.equal(value.b, Number.MIN_SAFE_INTEGER);
  assert.equal(value.c, 1.5e300);
  // A float token is a float64 in kube-apiserver too, rounded alike.
  assert.equal(value.d, 9007199254740992);
  // 2^60 is a float64 exactly, but would be written back as 1152921504606847000.
  assert.equal(refusal(() => parseJsonExact('{"b":1152921504606846976}')).path, 'b');
});

test('request bodies read as JSON or YAML refuse inexact numbers with a 400 naming the field', () => {
  for (const read of [
    () => parseJsonBody(Buffer.from('{"kind":"W","spec":{"n":9007199254740993}}')),
    () => parseYamlObject(Buffer.from('{"kind":"W","spec":{"n":9007199254740993}}')),
    () => parseYamlObject(Buffer.from('kind: W\nspec:\n  n: 9007199254740993\n')),
  ]) {
    assert.throws(read, (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 400);
      assert.match(err.message, /^spec\.n: Invalid value: 9007199254740993: must be within ±\(2\^53 - 1\)/);
      return true;
    });
  }
  const list = refusal(() =>
    parseYamlRequestBody(Buffer.from('spec:\n  list:\n  - 1\n  - 12345678901234567\n')),
  );
  assert.equal(list.path, 'spec.list[1]');
  assert.deepEqual(parseYamlRequestBody(Buffer.from('spec:\n  n: 9007199254740991\n')), {
    spec: { n: 9007199254740991 },
  });
});
