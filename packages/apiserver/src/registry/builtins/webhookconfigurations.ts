/**
 * MutatingWebhookConfigurations and ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1,
 * cluster-scoped): defaulted and validated as kube-apiserver does (admission/configuration-*.ts); the
 * admission chain (admission/) reads them from their watch caches.
 */

import type { StoredObject } from '@certkit/apimachinery';
import { defaultWebhookConfiguration } from '../../admission/configuration-defaults.ts';
import { validateWebhookConfiguration } from '../../admission/configuration-validation.ts';
import {
  ADMISSIONREGISTRATION_GROUP,
  MUTATING_RESOURCE,
  VALIDATING_RESOURCE,
} from '../../admission/webhook-types.ts';
import { objectMetaSmp } from '../../patch/strategic-merge-patch.ts';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';

function webhookConfigurations(mutating: boolean) {
  const kind = mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  return builtin({
    group: ADMISSIONREGISTRATION_GROUP,
    resource: mutating ? MUTATING_RESOURCE : VALIDATING_RESOURCE,
    model: `V1${kind}`,
    singular: kind.toLowerCase(),
    kind,
    namespaced: false,
    categories: ['api-extensions'],
    // `webhooks` merges by name (patchStrategy:"merge" patchMergeKey:"name" on the Go type).
    strategicMerge: { ...objectMetaSmp, webhooks: { mergeKey: 'name' } },
    columns: [
      nameColumn,
      {
        name: 'Webhooks',
        type: 'integer',
        description: 'Webhooks is a list of webhooks and the affected resources and operations.',
      },
      ageColumn,
    ],
    cells: (obj: StoredObject, now: number) => [
      obj.metadata.name,
      Array.isArray(obj.webhooks) ? obj.webhooks.length : 0,
      age(obj, now),
    ],
    defaults: (obj) => defaultWebhookConfiguration(obj, mutating),
    validate: (obj) => validateWebhookConfiguration(obj, mutating),
  });
}

export const mutatingwebhookconfigurations = webhookConfigurations(true);
export const validatingwebhookconfigurations = webhookConfigurations(false);
