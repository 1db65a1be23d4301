import { isConflict, isNotFound } from '@certkit/apimachinery';
import type { Result } from '@certkit/runtime';
import type {
  Certificate,
  CertificateCondition,
  CertificateConditionType,
  CertificateStatus,
  ConditionStatus,
} from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { jsonEqual } from '../../json-equal.ts';
import { LruMap } from '../../lru.ts';

/**
 * Certificate conditions and status writes, shared by every sub-controller. Conditions behave as cert-manager's
 * SetCertificateCondition: reason, message and observedGeneration always follow the latest write, while
 * lastTransitionTime only moves when the status flips. Status goes to the `status` subresource with the
 * resourceVersion the controller read, so a write based on a stale read fails with a conflict instead of
 * undoing someone else's.
 */

/**
 * Recent answers of formatTime, by second: readiness formats the same notBefore, notAfter and renewal times
 * at every reconcile, and toISOString costs more than the rest of a reconcile that changes nothing.
 */
const formatted = new LruMap<number, string>(1024);

/** metav1.Time on the wire: RFC 3339 in UTC, whole seconds. */
export function formatTime(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  return formatted.getOrCompute(second, () => `${date.toISOString().slice(0, 19)}Z`);
}

export function getCondition(
  cert: Certificate,
  type: CertificateConditionType,
): CertificateCondition | undefined {
  return cert.status?.conditions?.find((c) => c.type === type);
}

export function hasCondition(
  cert: Certificate,
  type: CertificateConditionType,
  status: ConditionStatus,
): boolean {
  return getCondition(cert, type)?.status === status;
}

export interface ConditionValue {
  type: CertificateConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Sets (or adds) a condition on `status` in place. */
export function setCondition(
  status: CertificateStatus,
  value: ConditionValue,
  generation: number | undefined,
  now: Date,
): void {
  const conditions = (status.conditions ??= []);
  const index = conditions.findIndex((c) => c.type === value.type);
  const previous = index >= 0 ? conditions[index] : undefined;
  const condition: CertificateCondition = {
    type: value.type,
    status: value.status,
    lastTransitionTime:
      previous?.status === value.status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : formatTime(now),
    reason: value.reason,
    message: value.message,
  };
  if (generation !== undefined) condition.observedGeneration = generation;
  if (index >= 0) conditions[index] = condition;
  else conditions.push(condition);
}

export function removeCondition(status: CertificateStatus, type: CertificateConditionType): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

/** Sets an optional status field, deleting it for undefined so that unchanged statuses compare equal. */
export function setField<K extends keyof CertificateStatus>(
  status: CertificateStatus,
  key: K,
  value: CertificateStatus[K] | undefined,
): void {
  if (value === undefined) delete status[key];
  else status[key] = value;
}

export type StatusWrite = 'unchanged' | 'written' | 'conflict' | 'gone';

/**
 * Applies `mutate` to a copy of the Certificate's status and PUTs it to the status subresource when it
 * changed. Conflicts and a Certificate gone meanwhile are answers, not errors: the informer will deliver the
 * newer object (or the deletion) and reconcile again.
 */
export async function updateStatus(
  ctx: ControllerContext,
  cert: Certificate,
  mutate: (status: CertificateStatus) => void,
  signal?: AbortSignal,
): Promise<StatusWrite> {
  // Mutations replace conditions rather than change them (setCondition, removeCondition), so copying the
  // status object and its conditions array is enough to leave the cached Certificate untouched.
  const current = cert.status ?? {};
  const status: CertificateStatus = {
    ...current,
    ...(current.conditions ? { conditions: [...current.conditions] } : {}),
  };
  mutate(status);
  if (jsonEqual(status, current)) return 'unchanged';
  const updated: Certificate = { ...cert, status };
  try {
    await ctx.certificateClient.update(updated, { subresource: 'status', signal });
    return 'written';
  } catch (err) {
    if (isConflict(err)) return 'conflict';
    if (isNotFound(err)) return 'gone';
    throw err;
  }
}

/** What a reconcile answers after a conflicting write: try again after the queue's backoff. */
export const REQUEUE: Result = { requeue: true };

/** The reconcile result for a status write: requeue on conflict, nothing otherwise. */
export function resultOf(write: StatusWrite): Result | undefined {
  return write === 'conflict' ? REQUEUE : undefined;
}
