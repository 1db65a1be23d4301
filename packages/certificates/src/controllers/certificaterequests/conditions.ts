import type { CertificateRequest } from '../../api/types.ts';
import { findCondition } from '../conditions.ts';

/** Reading a CertificateRequest's conditions as cert-manager's apiutil does. */

export const ConditionType = {
  Ready: 'Ready',
  InvalidRequest: 'InvalidRequest',
  Approved: 'Approved',
  Denied: 'Denied',
} as const;

export const ReadyReason = {
  Pending: 'Pending',
  Failed: 'Failed',
  Issued: 'Issued',
  Denied: 'Denied',
} as const;

function conditionIsTrue(cr: CertificateRequest, type: string): boolean {
  return findCondition(cr.status?.conditions, type)?.status === 'True';
}

export const isApproved = (cr: CertificateRequest): boolean => conditionIsTrue(cr, ConditionType.Approved);
export const isDenied = (cr: CertificateRequest): boolean => conditionIsTrue(cr, ConditionType.Denied);
export const isInvalidRequest = (cr: CertificateRequest): boolean =>
  conditionIsTrue(cr, ConditionType.InvalidRequest);

export function readyReason(cr: CertificateRequest): string | undefined {
  return findCondition(cr.status?.conditions, ConditionType.Ready)?.reason;
}

/** Issued, failed, denied or rejected as invalid: no controller acts on it again. */
export function isFinal(cr: CertificateRequest): boolean {
  const reason = readyReason(cr);
  return (
    reason === ReadyReason.Issued ||
    reason === ReadyReason.Failed ||
    reason === ReadyReason.Denied ||
    isDenied(cr) ||
    isInvalidRequest(cr)
  );
}
