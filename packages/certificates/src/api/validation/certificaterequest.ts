/**
 * CertificateRequest validation as cert-manager's webhook does it
 * (internal/apis/certmanager/validation/certificaterequest.go). A request is a signed statement by its
 * requester, so after creation its spec and its cert-manager annotations are frozen, and the approval
 * conditions, once set, can only ever be True and never change.
 */

import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '@certkit/apimachinery';
import { KEY_USAGES } from '../constants.ts';
import type { CertificateRequest, CertificateRequestCondition, CertificateRequestSpec } from '../types.ts';
import { certificateRequestError, truncatedRequest } from './csr.ts';
import { forbidden, invalid, required } from './errors.ts';
import { validateIssuerRef } from './certificate.ts';
import { appendErrors } from '@certkit/apimachinery';

const PROTECTED_ANNOTATION_PREFIXES = ['cert-manager.io', 'acme.cert-manager.io'];

function validateRequest(spec: CertificateRequestSpec, path: string): FieldError[] {
  if (!spec.request) return [required(`${path}.request`, 'must be specified')];
  const usages = spec.usages ?? [];
  const unknown = usages.filter((u) => !(KEY_USAGES as readonly string[]).includes(u));
  if (unknown.length > 0) {
    return [invalid(`${path}.usages`, usages, `unknown key usages: [${unknown.join(' ')}]`)];
  }
  const problem = certificateRequestError(spec.request);
  if (problem) return [invalid(`${path}.request`, truncatedRequest(spec.request), problem)];
  // Upstream also checks that the CSR's basic constraints and key usages agree with isCA and usages;
  // that needs the CSR's extensions parsed, which the signers (pki) do before signing anyway.
  return [];
}

export function validateCertificateRequestSpec(spec: CertificateRequestSpec, path = 'spec'): FieldError[] {
  return [...validateIssuerRef(spec.issuerRef, path), ...validateRequest(spec, path)];
}

/** Approved and Denied: at most one of each, only ever True, never both. */
export function validateApprovalConditions(
  conditions: CertificateRequestCondition[] | undefined,
  path = 'status.conditions',
): FieldError[] {
  const errors: FieldError[] = [];
  const approved = (conditions ?? []).filter((c) => c.type === 'Approved');
  const denied = (conditions ?? []).filter((c) => c.type === 'Denied');
  for (const [type, found] of [
    ['Approved', approved],
    ['Denied', denied],
  ] as const) {
    if (found.length === 0) continue;
    if (found.length > 1) {
      errors.push(forbidden(path, `multiple ${JSON.stringify(type)} conditions present`));
      continue;
    }
    if (found[0].status !== 'True') {
      errors.push(
        invalid(
          `${path}.${type}`,
          found[0].status,
          `${JSON.stringify(type)} condition may only be set to True`,
        ),
      );
    }
  }
  if (approved.length > 0 && denied.length > 0) {
    errors.push(forbidden(path, "both 'Denied' and 'Approved' conditions cannot coexist"));
  }
  return errors;
}

/** Go compares typed structs, where an absent field and its zero value are the same thing. */
function withoutZeroScalars(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeroScalars);
  if (typeof value !== 'object' || value === null) return value;
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === false || v === '' || v === null || v === undefined) continue;
    kept[k] = withoutZeroScalars(v);
  }
  return kept;
}

function conditionOf(cr: CertificateRequest, type: string): CertificateRequestCondition | undefined {
  return cr.status?.conditions?.find((c) => c.type === type);
}

/** cert-manager's annotations present on `a` must be present, unchanged, on `b`. */
function frozenAnnotationErrors(a: CertificateRequest, b: CertificateRequest): FieldError[] {
  const errors: FieldError[] = [];
  const mine = a.metadata?.annotations ?? {};
  const theirs = b.metadata?.annotations ?? {};
  for (const [k, v] of Object.entries(mine)) {
    if (!PROTECTED_ANNOTATION_PREFIXES.some((prefix) => k.startsWith(prefix))) continue;
    if (!Object.hasOwn(theirs, k) || theirs[k] !== v) {
      errors.push(
        forbidden(`metadata.annotations.${k}`, 'cannot change cert-manager annotation after creation'),
      );
    }
  }
  return errors;
}

/**
 * ValidateCertificateRequest (no `old`) or ValidateUpdateCertificateRequest (with `old`). On update only
 * immutability is checked, as upstream: the spec was validated when it was created and cannot change.
 */
export function validateCertificateRequest(cr: CertificateRequest, old?: CertificateRequest): FieldError[] {
  if (!old) {
    if (!cr.spec || typeof cr.spec !== 'object') return [required('spec')];
    return [...validateCertificateRequestSpec(cr.spec), ...validateApprovalConditions(cr.status?.conditions)];
  }
  const errors = [...frozenAnnotationErrors(old, cr), ...frozenAnnotationErrors(cr, old)];
  appendErrors(errors, validateCertificateRequestStatusUpdate(cr, old));
  if (!isDeepStrictEqual(withoutZeroScalars(old.spec), withoutZeroScalars(cr.spec)))
    errors.push(forbidden('spec', 'cannot change spec after creation'));
  return errors;
}

/**
 * ValidateUpdateCertificateRequestApprovalCondition: an Approved or Denied condition, once set, stays exactly
 * as it was (Go's DeepEqual of the typed condition, where an absent field equals its zero value), and the
 * new conditions pass validateApprovalConditions. All a status update can change that the webhook judges.
 */
export function validateCertificateRequestStatusUpdate(
  cr: CertificateRequest,
  old: CertificateRequest,
): FieldError[] {
  const errors: FieldError[] = [];
  const path = 'status.conditions';
  for (const type of ['Approved', 'Denied']) {
    const before = conditionOf(old, type);
    if (before && !isDeepStrictEqual(withoutZeroScalars(before), withoutZeroScalars(conditionOf(cr, type)))) {
      errors.push(forbidden(path, `'${type}' condition may not be modified once set`));
    }
  }
  appendErrors(errors, validateApprovalConditions(cr.status?.conditions, path));
  return errors;
}
