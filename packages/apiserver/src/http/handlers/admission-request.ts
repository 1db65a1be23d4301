/**
 * What the admission webhooks need to know of a write request (admission/attributes.ts RequestAdmission):
 * built only while some webhook configuration exists, so that other writes carry nothing for them.
 */

import type { RequestAdmission } from '../../admission/attributes.ts';
import { requestUser } from '../../security/user.ts';
import { addWarnings } from '../warning-header.ts';
import type { VerbRequest } from './verb-request.ts';

export function requestAdmission(
  verb: VerbRequest,
  options: { dryRun: boolean; fieldManager?: string; propagationPolicy?: string },
): RequestAdmission | undefined {
  if (!verb.store.context.webhooks?.active) return undefined;
  const sent: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'dryRun') {
      if (value) sent.dryRun = ['All'];
    } else if (key === 'fieldManager' || key === 'propagationPolicy') {
      if (value !== undefined && value !== '') sent[key] = value;
    }
  }
  return {
    user: requestUser(verb.req),
    version: verb.request.version,
    subresource: verb.subresource,
    dryRun: options.dryRun,
    options: sent,
    warn: (messages) => addWarnings(verb.res, messages),
  };
}
