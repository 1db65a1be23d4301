import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredObject } from '@certkit/apimachinery';
import { defaultWebhookConfiguration } from './configuration-defaults.ts';
import { validateWebhookConfiguration } from './configuration-validation.ts';

const valid = () => ({
  name: 'a.example.com',
  clientConfig: { url: 'https://example.com/validate' },
  rules: [
    { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'] },
  ],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
});

function errorsOf(webhooks: unknown[], mutating = false) {
  const obj = { metadata: { name: 'x' }, webhooks } as unknown as StoredObject;
  defaultWebhookConfiguration(obj, mutating);
  return validateWebhookConfiguration(obj, mutating).map((e) => `${e.field}: ${e.type}: ${e.detail ?? ''}`);
}

describe('webhook configuration validation', () => {
  it('accepts a valid webhook after defaulting', () => {
    assert.deepEqual(errorsOf([valid()]), []);
    assert.deepEqual(errorsOf([{ ...valid(), reinvocationPolicy: 'IfNeeded' }], true), []);
  });

  it('refuses the same webhook name twice', () => {
    assert.deepEqual(errorsOf([valid(), valid()]), ['webhooks[1].name: FieldValueDuplicate: ']);
  });

  it('requires exactly one of url and service', () => {
    const { clientConfig: _, ...without } = valid();
    assert.deepEqual(errorsOf([without]), [
      'webhooks[0].clientConfig: FieldValueRequired: exactly one of url or service is required',
    ]);
  });

  it('refuses a reinvocationPolicy it does not know on mutating webhooks', () => {
    assert.deepEqual(errorsOf([{ ...valid(), reinvocationPolicy: 'Always' }], true), [
      'webhooks[0].reinvocationPolicy: FieldValueNotSupported: supported values: "Never", "IfNeeded"',
    ]);
  });

  it('refuses resources that overlap with a wildcard', () => {
    const rules = [
      { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['pods/*', 'pods/status'] },
    ];
    assert.deepEqual(errorsOf([{ ...valid(), rules }]), [
      "webhooks[0].rules[0].resources[1]: FieldValueInvalid: if 'pods/*' is present, must not specify pods/status",
    ]);
  });

  it('refuses a service path with an empty segment and a selector with a bad operator', () => {
    const hook = {
      ...valid(),
      clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/a//b' } },
      objectSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] },
    };
    assert.deepEqual(errorsOf([hook]), [
      'webhooks[0].objectSelector: FieldValueInvalid: "Near" is not a valid label selector operator',
      'webhooks[0].clientConfig.service.path: FieldValueInvalid: segment[1] may not be empty',
    ]);
  });

  it('defaults what kube-apiserver defaults', () => {
    const obj = {
      metadata: { name: 'x' },
      webhooks: [{ ...valid(), clientConfig: { service: { name: 's', namespace: 'n' } } }],
    };
    defaultWebhookConfiguration(obj as unknown as StoredObject, true);
    const [hook] = obj.webhooks as Record<string, any>[];
    assert.equal(hook.failurePolicy, 'Fail');
    assert.equal(hook.matchPolicy, 'Equivalent');
    assert.equal(hook.timeoutSeconds, 10);
    assert.equal(hook.reinvocationPolicy, 'Never');
    assert.equal(hook.rules[0].scope, '*');
    assert.equal(hook.clientConfig.service.port, 443);
  });
});
