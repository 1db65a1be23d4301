/**
 * Who asked for a certificate, as cert-manager's webhook records it (its CertificateRequest identity admission
 * plugin). A CertificateRequest's `spec.username`, `spec.uid`, `spec.groups` and `spec.extra` name its
 * requester: issuers and approvers (approver-policy, the approval SubjectAccessReview) trust them to say who
 * asked, so a client never chooses them. On create they are overwritten with the authenticated (or
 * impersonated) user of the request; after that they never change.
 */

import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '@certkit/apimachinery';
import type { CertificateRequest } from '../types.ts';
import { forbidden } from './errors.ts';

/** The requester, as the API server's AdmissionReview `userInfo` gives it (structurally its UserInfo). */
export interface Requester {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/**
 * Mutation on create: the four fields become the requester's, whatever the client sent. `spec.extra` is
 * dropped when the requester has none, as upstream does (an empty map is not written).
 */
export function recordRequester(cr: CertificateRequest, user: Requester): void {
  const spec = (cr.spec ??= {} as CertificateRequest['spec']);
  spec.uid = user.uid ?? '';
  spec.username = user.name;
  spec.groups = [...user.groups];
  delete spec.extra;
  if (user.extra && Object.keys(user.extra).length > 0) {
    spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  }
}

/** Create: the four fields must be the requester's (a later mutating webhook may not forge them). */
export function validateRequesterOnCreate(cr: CertificateRequest, user: Requester): FieldError[] {
  const spec = cr.spec ?? ({} as CertificateRequest['spec']);
  const errors: FieldError[] = [];
  const wrong = (field: string) =>
    errors.push(forbidden(`spec.${field}`, `${field} identity must be that of the requester`));
  if ((spec.uid ?? '') !== (user.uid ?? '')) wrong('uid');
  if ((spec.username ?? '') !== user.name) wrong('username');
  if (!sameSet(spec.groups, user.groups)) wrong('groups');
  if (!sameExtra(spec.extra, user.extra)) wrong('extra');
  return errors;
}

/** Update: the four fields are immutable once set. */
export function validateRequesterOnUpdate(cr: CertificateRequest, old: CertificateRequest): FieldError[] {
  const now = cr.spec ?? ({} as CertificateRequest['spec']);
  const before = old.spec ?? ({} as CertificateRequest['spec']);
  const errors: FieldError[] = [];
  const changed = (field: string) =>
    errors.push(forbidden(`spec.${field}`, `${field} identity cannot be changed once set`));
  if ((now.uid ?? '') !== (before.uid ?? '')) changed('uid');
  if ((now.username ?? '') !== (before.username ?? '')) changed('username');
  if (!sameSet(now.groups, before.groups)) changed('groups');
  // Upstream compares the maps with Go's DeepEqual, where an absent map and an empty one differ; JSON
  // round trips here cannot tell a nil map from a missing field either, so absent and empty are one.
  if (!isDeepStrictEqual(nonEmpty(now.extra), nonEmpty(before.extra))) changed('extra');
  return errors;
}

/** Equal as unordered lists with repeats (cert-manager's util.EqualUnsorted). */
function sameSet(a: string[] | undefined, b: string[] | undefined): boolean {
  const x = [...(a ?? [])].sort();
  const y = [...(b ?? [])].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameExtra(
  a: Record<string, string[]> | undefined,
  b: Record<string, string[]> | undefined,
): boolean {
  const x = nonEmpty(a) ?? {};
  const y = nonEmpty(b) ?? {};
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  return keys.every((k) => Object.hasOwn(y, k) && sameSet(x[k], y[k]));
}

function nonEmpty(extra: Record<string, string[]> | undefined): Record<string, string[]> | undefined {
  return extra && Object.keys(extra).length > 0 ? extra : undefined;
}
