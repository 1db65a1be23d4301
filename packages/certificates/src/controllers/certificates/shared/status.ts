import { isConflict, isNotFound, jsonEqual } from '@certkit/apimachinery';
import type { Result } from '@certkit/runtime';
import type {
  Certificate,
  CertificateCondition,
  CertificateConditionType,
  CertificateStatus,
  ConditionStatus,
} from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { findCondition, setCondition } from '../../conditions.ts';
import { SupersededVersions } from './superseded-versions.ts';

/**
 * Certificate conditions and status writes, shared by every sub-controller. Conditions behave as cert-manager's
 * SetCertificateCondition: reason, message and observedGeneration always follow the latest write, while
 * lastTransitionTime only moves when the status flips. Status goes to the `status` subresource with the
 * resourceVersion the controller read, so a write based on a stale read fails with a conflict instead of
 * undoing someone else's.
 */

export function getCondition(
  cert: Certificate,
  type: CertificateConditionType,
): CertificateCondition | undefined {
  return findCondition(cert.status?.conditions, type);
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

/**
 * Sets (or adds) a condition of `status`, as cert-manager's apiutil.SetCertificateCondition: the shared
 * setCondition with observedGeneration from the Certificate read. `status` is the copy updateStatus hands
 * its mutation; its conditions list is replaced, not changed.
 */
export function setCertificateCondition(
  status: CertificateStatus,
  value: ConditionValue,
  generation: number | undefined,
  now: Date,
): void {
  // Picked one by one, so that whatever else the value object carries never reaches the API.
  const condition: Omit<CertificateCondition, 'lastTransitionTime'> = {
    type: value.type,
    status: value.status,
    reason: value.reason,
    message: value.message,
  };
  if (generation !== undefined) condition.observedGeneration = generation;
  status.conditions = setCondition(status.conditions, condition, now);
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

/** Per controller context, the versions its own status writes replaced (superseded-versions.ts). */
const supersededByContext = new WeakMap<ControllerContext, SupersededVersions>();

function supersededVersions(ctx: ControllerContext): SupersededVersions {
  let versions = supersededByContext.get(ctx);
  if (!versions) supersededByContext.set(ctx, (versions = new SupersededVersions()));
  return versions;
}

/**
 * Applies `mutate` to a copy of the Certificate's status and PUTs it to the status subresource when it
 * changed. Conflicts and a Certificate gone meanwhile are answers, not errors: the informer will deliver the
 * newer object (or the deletion) and reconcile again. A write based on a version another of this process's
 * writes already replaced is answered as the conflict it would be, without sending it (docs/adr/1150).
 */
export async function updateStatus(
  ctx: ControllerContext,
  cert: Certificate,
  mutate: (status: CertificateStatus) => void,
  signal?: AbortSignal,
): Promise<StatusWrite> {
  // Mutations replace conditions rather than change them (setCertificateCondition, removeCondition), so copying the
  // status object and its conditions array is enough to leave the cached Certificate untouched.
  const current = cert.status ?? {};
  const status: CertificateStatus = {
    ...current,
    ...(current.conditions ? { conditions: [...current.conditions] } : {}),
  };
  mutate(status);
  if (jsonEqual(status, current)) return 'unchanged';
  const versions = supersededVersions(ctx);
  const key = `${cert.metadata.namespace}/${cert.metadata.name}`;
  const from = cert.metadata.resourceVersion;
  // Only awaited when a write from the same version is in flight, so that checking and tracking are one step.
  const superseded = versions.isSuperseded(key, from);
  if (superseded === true || (superseded !== false && (await superseded))) return 'conflict';
  const updated: Certificate = { ...cert, status };
  let settle!: (superseded: boolean) => void;
  versions.track(key, from, new Promise((resolve) => (settle = resolve)));
  try {
    const written = await ctx.certificateClient.update(updated, { subresource: 'status', signal });
    settle(written.metadata.resourceVersion !== from);
    return 'written';
  } catch (err) {
    settle(false);
    if (isConflict(err)) return 'conflict';
    if (isNotFound(err)) return 'gone';
    throw err;
  }
}

/**
 * Whether `cert` is a version one of this process's own status writes has already replaced: the cache has
 * not caught up with the write yet, and that write's watch event will bring the Certificate back. Any status
 * write from this copy would be refused, and anything judged from it is already out of date (docs/adr/1015).
 */
export function replacedByOwnWrite(ctx: ControllerContext, cert: Certificate): boolean {
  const key = `${cert.metadata.namespace}/${cert.metadata.name}`;
  return supersededVersions(ctx).isKnownSuperseded(key, cert.metadata.resourceVersion);
}

/** What a reconcile answers after a conflicting write: try again after the queue's backoff. */
export const REQUEUE: Result = { requeue: true };

/** The reconcile result for a status write: requeue on conflict, nothing otherwise. */
export function resultOf(write: StatusWrite): Result | undefined {
  return write === 'conflict' ? REQUEUE : undefined;
}
