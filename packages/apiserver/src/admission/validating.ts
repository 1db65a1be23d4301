/**
 * The validating pass (kube-apiserver's validating dispatcher): every webhook that applies is called at
 * once; the first refusal or failure to arrive is the answer.
 */

import type { ResourceDefinition } from '../registry/resource.ts';
import type { AdmissionAttributes } from './attributes.ts';
import { callWebhook, type DispatchContext, webhookApplies } from './dispatch.ts';
import type { IndexedWebhook } from './webhook-index.ts';

export async function runValidatingWebhooks(
  hooks: IndexedWebhook[],
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  context: DispatchContext,
): Promise<void> {
  const calls = hooks.map(async (entry) => {
    const version = await webhookApplies(entry.hook, def, attrs, context);
    if (version !== undefined) await callWebhook(entry.hook, def, attrs, version, false, context);
  });
  // The first rejection wins; the others still run to their end (their warnings were already sent).
  await new Promise<void>((resolve, reject) => {
    let left = calls.length;
    if (left === 0) resolve();
    for (const call of calls) {
      call.then(() => {
        if (--left === 0) resolve();
      }, reject);
    }
  });
}
