/**
 * The defaults kube-apiserver gives admissionregistration.k8s.io/v1 webhooks when a configuration is written
 * (pkg/apis/admissionregistration/v1 defaults): stored, so that clients read back what the chain applies.
 */

import type { StoredObject } from '@certkit/apimachinery';
import type { Webhook } from './webhook-types.ts';

/** The default timeout of a webhook call, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 10;

export function defaultWebhookConfiguration(obj: StoredObject, mutating: boolean): void {
  const webhooks = obj.webhooks;
  if (!Array.isArray(webhooks)) return;
  for (const hook of webhooks as Webhook[]) {
    if (hook === null || typeof hook !== 'object') continue;
    hook.failurePolicy ??= 'Fail';
    hook.matchPolicy ??= 'Equivalent';
    hook.namespaceSelector ??= {};
    hook.objectSelector ??= {};
    hook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
    if (mutating) hook.reinvocationPolicy ??= 'Never';
    for (const rule of hook.rules ?? []) {
      if (rule !== null && typeof rule === 'object') rule.scope ??= '*';
    }
    const service = hook.clientConfig?.service;
    if (service !== null && typeof service === 'object') service.port ??= 443;
  }
}
