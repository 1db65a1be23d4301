import type { ConditionStatus, GenericIssuer, IssuerCondition } from '../../api/types.ts';

/**
 * Status conditions as cert-manager's apiutil.Set*Condition writes them: one condition per type, replaced in
 * place, keeping lastTransitionTime unless the status changes (so "Ready since" stays meaningful across
 * re-reconciles that only reword the message).
 */

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** metav1.Time on the wire: RFC 3339 at second precision. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

export function findCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** A new list with `condition` set; the list given is not changed (it may be a frozen cache object). */
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
      : rfc3339(now);
  const updated = { ...condition, lastTransitionTime } as C;
  if (index >= 0) list[index] = updated;
  else list.push(updated);
  return list;
}

export function issuerReadyCondition(issuer: GenericIssuer): IssuerCondition | undefined {
  return findCondition(issuer.status?.conditions, 'Ready');
}

/**
 * Ready=True for the issuer's current generation. cert-manager looks at type and status only; we also refuse a
 * Ready computed for an older spec (say, before secretName changed), since the issuer controller reconciles
 * the new generation at once and its readiness event then wakes the waiting requests.
 */
export function isIssuerReady(issuer: GenericIssuer): boolean {
  const ready = issuerReadyCondition(issuer);
  if (ready?.status !== 'True') return false;
  const generation = issuer.metadata?.generation;
  return (
    ready.observedGeneration === undefined ||
    generation === undefined ||
    ready.observedGeneration === generation
  );
}
