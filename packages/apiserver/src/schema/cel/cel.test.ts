import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError } from '@certkit/apimachinery';
import type { JSONSchemaProps } from '../types.ts';
import { compileValidationRules, CustomResourceRules } from './index.ts';

function rulesOf(spec: JSONSchemaProps): CustomResourceRules {
  return new CustomResourceRules({ type: 'object', properties: { spec } });
}

function check(rules: CustomResourceRules, spec: unknown, oldSpec?: unknown): string[] {
  const old = oldSpec === undefined ? undefined : { spec: oldSpec };
  return rules.validate({ spec }, old, []).map(formatFieldError);
}

function compileErrors(spec: JSONSchemaProps): string[] {
  return compileValidationRules({ type: 'object', properties: { spec } }, 'openAPIV3Schema').errors.map(
    formatFieldError,
  );
}

describe('CEL validation rules', () => {
  it("binds self to the node and reports kube's default message", () => {
    const rules = rulesOf({
      type: 'object',
      properties: { min: { type: 'integer' }, max: { type: 'integer' } },
      'x-kubernetes-validations': [{ rule: 'self.min <= self.max' }],
    });
    assert.deepEqual(check(rules, { min: 1, max: 2 }), []);
    assert.deepEqual(check(rules, { min: 3, max: 2 }), [
      'spec: Invalid value: "object": failed rule: self.min <= self.max',
    ]);
  });

  it('runs rules on list items and additionalProperties values with their paths', () => {
    const rules = rulesOf({
      type: 'object',
      properties: {
        names: {
          type: 'array',
          items: {
            type: 'string',
            'x-kubernetes-validations': [{ rule: 'self.startsWith("a")', message: 'must start with a' }],
          },
        },
        labels: {
          type: 'object',
          additionalProperties: {
            type: 'string',
            'x-kubernetes-validations': [{ rule: 'self.size() < 4', message: 'too long' }],
          },
        },
      },
    });
    assert.deepEqual(check(rules, { names: ['ab', 'b'], labels: { x: 'abcd', y: 'a' } }), [
      'spec.names[1]: Invalid value: "string": must start with a',
      'spec.labels[x]: Invalid value: "string": too long',
    ]);
  });

  it('types integers as int and numbers as double', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { count: { type: 'integer' }, ratio: { type: 'number' } },
      'x-kubernetes-validations': [{ rule: 'self.count + 1 == 3 && self.ratio > 0.5' }],
    });
    assert.deepEqual(check(rules, { count: 2, ratio: 1 }), []);
    assert.equal(check(rules, { count: 3, ratio: 1 }).length, 1);
  });

  it('evaluates has(), the macros and the Kubernetes list and regex functions', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { ports: { type: 'array', items: { type: 'integer' } }, host: { type: 'string' } },
      'x-kubernetes-validations': [
        { rule: '!has(self.host) || self.host.find("[0-9]+") == "12"', message: 'find' },
        { rule: 'self.ports.isSorted() && self.ports.sum() == 6 && self.ports.max() == 3', message: 'lists' },
        { rule: 'self.ports.all(p, p > 0) && self.ports.exists_one(p, p == 2)', message: 'macros' },
        { rule: 'self.ports.map(p, p * 2).filter(p, p > 2).size() == 2', message: 'map' },
      ],
    });
    assert.deepEqual(check(rules, { ports: [1, 2, 3], host: 'ab12' }), []);
    assert.deepEqual(check(rules, { ports: [3, 2, 1], host: 'ab34' }), [
      'spec: Invalid value: "object": find',
      'spec: Invalid value: "object": lists',
    ]);
  });

  it('reads date-time and duration strings as timestamps and durations', () => {
    const rules = rulesOf({
      type: 'object',
      properties: {
        notBefore: { type: 'string', format: 'date-time' },
        notAfter: { type: 'string', format: 'date-time' },
        renewBefore: { type: 'string', format: 'duration' },
      },
      'x-kubernetes-validations': [
        { rule: 'self.notAfter > self.notBefore', message: 'notAfter must follow notBefore' },
        { rule: 'self.renewBefore < duration("24h")', message: 'renewBefore under a day' },
      ],
    });
    assert.deepEqual(
      check(rules, {
        notBefore: '2026-01-01T00:00:00Z',
        notAfter: '2026-02-01T00:00:00Z',
        renewBefore: '1h',
      }),
      [],
    );
    assert.deepEqual(
      check(rules, {
        notBefore: '2026-03-01T00:00:00Z',
        notAfter: '2026-02-01T00:00:00Z',
        renewBefore: '48h',
      }),
      [
        'spec: Invalid value: "object": notAfter must follow notBefore',
        'spec: Invalid value: "object": renewBefore under a day',
      ],
    );
    // A rule on the node itself sees a timestamp: string methods do not compile there, as in kube.
    const leaf = compileErrors({
      type: 'object',
      properties: {
        at: {
          type: 'string',
          format: 'date-time',
          'x-kubernetes-validations': [{ rule: 'self.startsWith("2")' }],
        },
      },
    });
    assert.equal(leaf.length, 1);
    assert.ok(
      leaf[0]!.endsWith(
        "compilation failed: ERROR: <input>:1:1: found no matching overload for 'google.protobuf.Timestamp.startsWith(string)'",
      ),
      leaf[0],
    );
  });

  it('runs transition rules only on update, with oldSelf bound to the old value', () => {
    const rules = rulesOf({
      type: 'object',
      properties: {
        mode: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }],
        },
      },
    });
    assert.deepEqual(check(rules, { mode: 'a' }), []);
    assert.deepEqual(check(rules, { mode: 'a' }, { mode: 'a' }), []);
    assert.deepEqual(check(rules, { mode: 'b' }, { mode: 'a' }), [
      'spec.mode: Invalid value: "string": mode is immutable',
    ]);
    // No old value at the path (the field is new): the transition rule does not run.
    assert.deepEqual(check(rules, { mode: 'b' }, {}), []);
  });

  it('gives optionalOldSelf rules an optional oldSelf, also on create', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { n: { type: 'integer' } },
      'x-kubernetes-validations': [
        {
          rule: 'oldSelf.hasValue() ? self.n >= oldSelf.value().n : self.n == 0',
          optionalOldSelf: true,
          message: 'starts at 0 and grows',
        },
      ],
    });
    assert.deepEqual(check(rules, { n: 0 }), []);
    assert.deepEqual(check(rules, { n: 1 }), ['spec: Invalid value: "object": starts at 0 and grows']);
    assert.deepEqual(check(rules, { n: 1 }, { n: 2 }), [
      'spec: Invalid value: "object": starts at 0 and grows',
    ]);
    assert.deepEqual(check(rules, { n: 3 }, { n: 2 }), []);
  });

  it('correlates list-type=map items by key, not atomic list items', () => {
    const item: JSONSchemaProps = {
      type: 'object',
      properties: { name: { type: 'string' }, port: { type: 'integer' } },
      'x-kubernetes-validations': [{ rule: 'self.port == oldSelf.port', message: 'port is immutable' }],
    };
    const keyed = rulesOf({
      type: 'object',
      properties: {
        l: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: item,
        },
      },
    });
    const atomic = rulesOf({ type: 'object', properties: { l: { type: 'array', items: item } } });
    const before = {
      l: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2 },
      ],
    };
    const after = {
      l: [
        { name: 'b', port: 3 },
        { name: 'a', port: 1 },
      ],
    };
    assert.deepEqual(check(keyed, after, before), ['spec.l[0]: Invalid value: "object": port is immutable']);
    assert.deepEqual(check(atomic, after, before), []);
  });

  it('ratchets: an unchanged value is not re-checked on update', () => {
    const rules = rulesOf({
      type: 'object',
      properties: {
        a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() < 3' }] },
        b: { type: 'string' },
      },
    });
    assert.deepEqual(check(rules, { a: 'long', b: 'x' }, { a: 'long', b: 'y' }), []);
    assert.equal(check(rules, { a: 'longer' }, { a: 'long' }).length, 1);
  });

  it('uses messageExpression, and message when messageExpression fails', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { n: { type: 'integer' } },
      'x-kubernetes-validations': [
        { rule: 'self.n < 10', messageExpression: '"n is " + string(self.n) + ", above 9"' },
        { rule: 'self.n < 5', message: 'static', messageExpression: 'string(self.n / 0)' },
      ],
    });
    assert.deepEqual(check(rules, { n: 12 }), [
      'spec: Invalid value: "object": n is 12, above 9',
      'spec: Invalid value: "object": static',
    ]);
  });

  it('reports each reason as kube does, at fieldPath', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { x: { type: 'string' } },
      'x-kubernetes-validations': [
        { rule: 'false', message: 'forbidden', reason: 'FieldValueForbidden', fieldPath: '.x' },
        { rule: 'false', message: 'required', reason: 'FieldValueRequired' },
        { rule: 'false', message: 'duplicate', reason: 'FieldValueDuplicate', fieldPath: "['x']" },
        { rule: 'false', message: 'invalid', reason: 'FieldValueInvalid' },
      ],
    });
    assert.deepEqual(check(rules, { x: 'v' }), [
      'spec.x: Forbidden: forbidden',
      'spec: Required value: required',
      'spec.[\'x\']: Duplicate value: "object"',
      'spec: Invalid value: "object": invalid',
    ]);
  });

  it("skips the rules after blocking schema errors, with kube's message", () => {
    const rules = rulesOf({ type: 'object', 'x-kubernetes-validations': [{ rule: 'false' }] });
    const errors = rules.validate({ spec: {} }, undefined, [
      { type: 'FieldValueTypeInvalid', field: 'spec.a' },
    ]);
    assert.deepEqual(errors.map(formatFieldError), [
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('refuses rules that do not compile, with the CRD path', () => {
    const errors = compileErrors({
      type: 'object',
      properties: { n: { type: 'integer' } },
      'x-kubernetes-validations': [{ rule: 'self.n +' }, { rule: 'self.n + 1 == "a"' }, { rule: '"a"' }],
    });
    assert.deepEqual(errors, [
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.n +", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Unexpected token: EOF',
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.n + 1 == \\"a\\"", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: no such overload: int == string',
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule: Invalid value: apiextensions.ValidationRule{Rule:"\\"a\\"", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool',
    ]);
  });

  it('refuses rules that select fields the schema does not have, as cel-go does', () => {
    const errors = compileErrors({
      type: 'object',
      properties: {
        size: { type: 'integer' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
      'x-kubernetes-validations': [
        { rule: 'self.size > 0 && self.labels.anything != ""' },
        { rule: 'self.sise > 0' },
        { rule: 'true', messageExpression: 'self.nope' },
      ],
    });
    assert.deepEqual(
      errors.map((e) => e.replace(/Invalid value: apiextensions\.ValidationRule\{.*\}: /, '')),
      [
        "openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:5: undefined field 'sise'",
        "openAPIV3Schema.properties[spec].x-kubernetes-validations[2].messageExpression: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'",
      ],
    );
  });

  it('names properties as kube escapes them, and treats null properties as absent', () => {
    const rules = rulesOf({
      type: 'object',
      properties: {
        'max-size': { type: 'integer' },
        namespace: { type: 'string' },
        optional: { type: 'string', nullable: true },
      },
      'x-kubernetes-validations': [
        { rule: 'self.max__dash__size < 10', message: 'dash' },
        { rule: 'self.__namespace__ != "kube-system"', message: 'keyword' },
        { rule: '!has(self.optional)', message: 'null is absent' },
      ],
    });
    assert.deepEqual(check(rules, { 'max-size': 3, namespace: 'default', optional: null }), []);
    assert.deepEqual(check(rules, { 'max-size': 30, namespace: 'kube-system', optional: 'x' }), [
      'spec: Invalid value: "object": dash',
      'spec: Invalid value: "object": keyword',
      'spec: Invalid value: "object": null is absent',
    ]);
  });

  it('refuses bad reasons, fieldPaths and optionalOldSelf without oldSelf', () => {
    const errors = compileErrors({
      type: 'object',
      properties: { n: { type: 'integer' } },
      'x-kubernetes-validations': [
        { rule: 'true', reason: 'Nope' },
        { rule: 'true', fieldPath: '.absent' },
        { rule: 'true', optionalOldSelf: true },
      ],
    });
    assert.deepEqual(errors, [
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[1].fieldPath: Invalid value: ".absent": fieldPath must be a valid path',
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[2].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule',
    ]);
  });

  it('refuses rules whose estimated cost exceeds the limits, and accepts them once bounded', () => {
    const unbounded: JSONSchemaProps = {
      type: 'object',
      properties: { l: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a != b || a.matches("^x+$")))' }],
    };
    assert.match(
      compileErrors(unbounded)[0]!,
      /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of [\d.]+x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength/,
    );
    const bounded = structuredClone(unbounded);
    bounded.properties!.l!.maxItems = 10;
    bounded.properties!.l!.items!.maxLength = 20;
    assert.deepEqual(compileErrors(bounded), []);
  });

  it('stops at the runtime per-call cost limit', () => {
    const rules = rulesOf({
      type: 'object',
      properties: { l: { type: 'array', maxItems: 2000, items: { type: 'integer' } } },
      'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.exists(b, a == b))' }, { rule: 'false' }],
    });
    assert.deepEqual(check(rules, { l: [1, 2] }), ['spec: Invalid value: "object": failed rule: false']);
    const errors = check(rules, { l: Array.from({ length: 1500 }, (_, i) => i) });
    assert.deepEqual(errors, [
      'spec: Invalid value: "object": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(a, self.l.exists(b, a == b))',
    ]);
  });

  it('stops when a write runs out of the runtime cost budget, and only meters when the estimate could', () => {
    // Each rule costs about 640,000 on 400 items (under the per-call limit); sixteen of them pass the
    // per-write budget of 10,000,000 at the sixteenth.
    const rule = 'self.l.all(a, self.l.exists(b, a == b))';
    const rules = rulesOf({
      type: 'object',
      properties: { l: { type: 'array', maxItems: 400, items: { type: 'integer' } } },
      'x-kubernetes-validations': Array.from({ length: 16 }, () => ({ rule })),
    });
    assert.deepEqual(check(rules, { l: [1, 2, 3] }), []);
    assert.deepEqual(check(rules, { l: Array.from({ length: 400 }, (_, i) => i) }), [
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    // Bounded so that the estimate of the whole version fits the budget: nothing to meter, nothing refused.
    const small = rulesOf({
      type: 'object',
      properties: { l: { type: 'array', maxItems: 50, items: { type: 'integer' } } },
      'x-kubernetes-validations': Array.from({ length: 16 }, () => ({ rule })),
    });
    assert.deepEqual(check(small, { l: Array.from({ length: 50 }, (_, i) => i) }), []);
  });
});
