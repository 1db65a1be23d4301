/**
 * secret-template-keys.ts: the secretTemplate keys of a Secret, from certkit's annotation or, on a Secret
 * cert-manager wrote, from the managedFields of its issuing controller's server-side apply.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { ManagedFieldsEntry } from 'kubernetes-types/meta/v1.d.ts';
import {
  adoptCertManagerTemplateKeys,
  certManagerTemplateKeys,
  readTemplateKeys,
  SECRET_TEMPLATE_KEYS_ANNOTATION,
} from './secret-template-keys.ts';

/** An entry as kube-apiserver records cert-manager's apply of a Secret with a secretTemplate. */
const certManagerApply: ManagedFieldsEntry = {
  manager: 'cert-manager-certificates-issuing',
  operation: 'Apply',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:data': { 'f:tls.crt': {}, 'f:tls.key': {} },
    'f:metadata': {
      'f:annotations': {
        'f:cert-manager.io/alt-names': {},
        'f:cert-manager.io/certificate-name': {},
        'f:example.com/owner': {},
      },
      'f:labels': { 'f:controller.cert-manager.io/fao': {}, 'f:tier': {}, 'f:team': {} },
    },
    'f:type': {},
  },
};
const someoneElse: ManagedFieldsEntry = {
  manager: 'kubectl-label',
  operation: 'Update',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:metadata': { 'f:labels': { 'f:mine': {} } } },
};

describe('secretTemplate keys', () => {
  it("reads cert-manager's applied labels and annotations, without the ones it sets on every Secret", () => {
    assert.deepEqual(certManagerTemplateKeys([someoneElse, certManagerApply]), {
      labels: ['team', 'tier'],
      annotations: ['example.com/owner'],
    });
    assert.equal(certManagerTemplateKeys([someoneElse]), undefined);
    assert.equal(certManagerTemplateKeys(undefined), undefined);
    // An Update by that manager (not an apply) or one of a subresource is not the issued Secret's apply.
    assert.equal(certManagerTemplateKeys([{ ...certManagerApply, operation: 'Update' }]), undefined);
    assert.equal(certManagerTemplateKeys([{ ...certManagerApply, subresource: 'status' }]), undefined);
  });

  it("prefers certkit's annotation, falls back to managedFields, else none", () => {
    const annotated: Secret = {
      metadata: {
        annotations: { [SECRET_TEMPLATE_KEYS_ANNOTATION]: '{"labels":["a"],"annotations":[]}' },
        managedFields: [certManagerApply],
      },
    };
    assert.deepEqual(readTemplateKeys(annotated), { labels: ['a'], annotations: [] });
    assert.deepEqual(readTemplateKeys({ metadata: { managedFields: [certManagerApply] } }), {
      labels: ['team', 'tier'],
      annotations: ['example.com/owner'],
    });
    assert.deepEqual(readTemplateKeys({ metadata: {} }), { labels: [], annotations: [] });
    assert.deepEqual(readTemplateKeys(undefined), { labels: [], annotations: [] });
  });

  it('writes what cert-manager owned as the annotation a cached Secret keeps, once and only when absent', () => {
    const secret: Secret = { metadata: { annotations: { x: 'y' }, managedFields: [certManagerApply] } };
    adoptCertManagerTemplateKeys(secret);
    assert.deepEqual(secret.metadata?.annotations, {
      x: 'y',
      [SECRET_TEMPLATE_KEYS_ANNOTATION]: '{"labels":["team","tier"],"annotations":["example.com/owner"]}',
    });
    const own: Secret = {
      metadata: {
        annotations: { [SECRET_TEMPLATE_KEYS_ANNOTATION]: '{}' },
        managedFields: [certManagerApply],
      },
    };
    adoptCertManagerTemplateKeys(own);
    assert.equal(own.metadata?.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION], '{}');
    // A Secret cert-manager applied without a template gets nothing.
    const plain: Secret = {
      metadata: {
        managedFields: [
          {
            ...certManagerApply,
            fieldsV1: { 'f:metadata': { 'f:labels': { 'f:controller.cert-manager.io/fao': {} } } },
          },
        ],
      },
    };
    adoptCertManagerTemplateKeys(plain);
    assert.equal(plain.metadata?.annotations, undefined);
  });
});
