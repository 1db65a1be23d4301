import { formatTime } from '@certkit/apimachinery';
import type { ConditionStatus } from '../api/types.ts';

/**
 * Status conditions of every cert-manager kind (Certificate, CertificateRequest, Issuer, ClusterIssuer) as
 * cert-manager's apiutil.Set*Condition writes them: one condition per type, replaced where it stands, keeping
 * lastTransitionTime unless the status changes (so "Ready since" stays meaningful across re-reconciles that
 * only reword the message).
 */

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export function findCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * A new list with `condition` set: reason, message and observedGeneration are the ones given (one left out
 * is dropped), lastTransitionTime is `now` unless the status is unchanged. The list given is not changed,
 * since it may belong to an object in an informer's cache.
 */
export function setCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  condition: Omit<C, 'lastTransitionTime'>,
  now: Date,
): C[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === condition.type);
  const previous = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    previous && previous.status === condition.status && previous.lastTransitionTime
      ? previous.lastTransitionTime
      : formatTime(now);
  const updated = { ...condition, lastTransitionTime } as C;
  if (index >= 0) list[index] = updated;
  else list.push(updated);
  return list;
}
