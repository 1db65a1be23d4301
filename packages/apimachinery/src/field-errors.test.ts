import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendErrors,
  duplicate,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
} from './field-errors.ts';
import { formatFieldError, MAX_REPORTED_FIELD_ERRORS, newInvalid } from './status.ts';

/** Each constructor as field.Error.Error() renders it in kube-apiserver's messages. */
describe('field.Error constructors', () => {
  const rows: [string, ReturnType<typeof required>, string][] = [
    ['Required', required('spec.name'), 'spec.name: Required value'],
    [
      'Required with detail',
      required('spec.url', 'exactly one of url or service is required'),
      'spec.url: Required value: exactly one of url or service is required',
    ],
    [
      'Invalid',
      invalid('spec.port', 0, 'must be between 1 and 65535, inclusive'),
      'spec.port: Invalid value: 0: must be between 1 and 65535, inclusive',
    ],
    ['Forbidden', forbidden('spec', 'may not be changed'), 'spec: Forbidden: may not be changed'],
    [
      'NotSupported',
      notSupported('spec.protocol', 'HTTP', ['SCTP', 'TCP', 1]),
      'spec.protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "1"',
    ],
    ['TooLong', tooLong('spec.commonName', 64), 'spec.commonName: Too long: may not be more than 64 bytes'],
    ['TooMany', tooMany('ports', 3, 2), 'ports: Too many: 3: must have at most 2 items'],
    [
      'Duplicate',
      duplicate('spec.dnsNames[1]', 'a.example'),
      'spec.dnsNames[1]: Duplicate value: "a.example"',
    ],
  ];
  for (const [name, error, message] of rows) {
    it(name, () => assert.equal(formatFieldError(error), message));
  }

  it('leaves out an empty detail, as a Required without one', () => {
    assert.deepEqual(required('spec.name', ''), { type: 'FieldValueRequired', field: 'spec.name' });
  });
});

describe('long lists of field errors', () => {
  const many = Array.from({ length: 200_000 }, (_, i) => invalid('metadata.labels', `${i}!`, 'bad'));

  it('appendErrors joins lists longer than a call takes arguments', () => {
    // push(...many) throws RangeError: Maximum call stack size exceeded.
    const list = appendErrors([required('metadata.name')], many);
    assert.equal(list.length, 200_001);
    assert.equal(list[200_000], many[199_999]);
  });

  it('newInvalid names the first MAX_REPORTED_FIELD_ERRORS and counts the rest', () => {
    const { status } = newInvalid('', 'ConfigMap', 'x', many);
    assert.equal(status.details?.causes?.length, MAX_REPORTED_FIELD_ERRORS);
    assert.equal(status.details?.causes?.[0].message, 'Invalid value: "0!": bad');
    assert.ok(
      status.message!.startsWith('ConfigMap "x" is invalid: [metadata.labels: Invalid value: "0!": bad, '),
    );
    assert.ok(status.message!.endsWith(`, and ${200_000 - MAX_REPORTED_FIELD_ERRORS} more errors]`));
    // At the bound, every error is named as before.
    const { status: all } = newInvalid('', 'ConfigMap', 'x', many.slice(0, MAX_REPORTED_FIELD_ERRORS));
    assert.equal(all.details?.causes?.length, MAX_REPORTED_FIELD_ERRORS);
    assert.ok(all.message!.endsWith(`metadata.labels: Invalid value: "999!": bad]`));
  });
});
