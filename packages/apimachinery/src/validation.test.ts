import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  labelValueErrors,
  qualifiedNameErrors,
} from './validation.ts';

const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('pkg/util/validation checks', () => {
  it('dns1123LabelErrors: a namespace-style label, upstream message with its doubled space', () => {
    assert.deepEqual(dns1123LabelErrors('my-name'), []);
    assert.deepEqual(dns1123LabelErrors('My_Name'), [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    assert.deepEqual(dns1123LabelErrors('a'.repeat(64)), ['must be no more than 63 characters']);
  });

  it('dns1123SubdomainErrors: dots allowed, 253 bytes at most (counted in UTF-8 bytes, as Go does)', () => {
    assert.deepEqual(dns1123SubdomainErrors('example.com'), []);
    assert.deepEqual(dns1123SubdomainErrors('-example.com'), [SUBDOMAIN_REGEX]);
    // 200 characters, 400 bytes: too long for Go's len() though short in UTF-16 units.
    assert.deepEqual(dns1123SubdomainErrors('é'.repeat(200)), [
      'must be no more than 253 characters',
      SUBDOMAIN_REGEX,
    ]);
  });

  it('qualifiedNameErrors: an optional subdomain prefix, and every problem of the name part', () => {
    assert.deepEqual(qualifiedNameErrors('example.com/MyName'), []);
    assert.deepEqual(qualifiedNameErrors('MyName'), []);
    // An empty name is reported as empty and as not matching, as upstream's checks do not stop at the first.
    assert.deepEqual(qualifiedNameErrors('example.com/'), ['name part must be non-empty', NAME_PART_REGEX]);
    assert.deepEqual(qualifiedNameErrors('/name'), ['prefix part must be non-empty']);
    assert.deepEqual(qualifiedNameErrors('Example.com/name'), [`prefix part ${SUBDOMAIN_REGEX}`]);
    assert.deepEqual(qualifiedNameErrors('a/b/c'), [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
  });

  it('labelValueErrors: empty is valid, 63 characters at most', () => {
    assert.deepEqual(labelValueErrors(''), []);
    assert.deepEqual(labelValueErrors('my_value'), []);
    assert.deepEqual(labelValueErrors('x'.repeat(64)), ['must be no more than 63 characters']);
    assert.equal(labelValueErrors('-x').length, 1);
  });
});
