/**
 * Order and Challenge validation as cert-manager's webhook does it (internal/apis/acme/validation/order.go,
 * challenge.go): anything goes on create, since only the controller writes these; on update what the
 * ACME server decided (URLs, tokens, authorizations, the certificate) and what was ordered (the CSR) may
 * not change once set, and a Challenge's spec may not change at all.
 */

import type { FieldError } from '@certkit/apimachinery';
import type { Challenge, Order, OrderSpec, OrderStatus } from '../acme-types.ts';
import { forbidden, index } from './errors.ts';

const IMMUTABLE = 'field is immutable once set';

/** Go []byte equality of two base64 fields (absent = empty). */
function sameBytes(a: string | undefined, b: string | undefined): boolean {
  return Buffer.from(a ?? '', 'base64').equals(Buffer.from(b ?? '', 'base64'));
}

/** A string field that, once non-empty, must keep its value. */
function changed(old: unknown, now: unknown): boolean {
  return typeof old === 'string' && old !== '' && old !== now;
}

export function validateOrderSpecUpdate(old: OrderSpec, now: OrderSpec, path = 'spec'): FieldError[] {
  if (old?.request && !sameBytes(old.request, now?.request)) return [forbidden(`${path}.request`, IMMUTABLE)];
  return [];
}

export function validateOrderStatusUpdate(
  old: OrderStatus | undefined,
  now: OrderStatus | undefined,
  path = 'status',
): FieldError[] {
  const before = old ?? {};
  const after = now ?? {};
  const errors: FieldError[] = [];
  if (changed(before.url, after.url)) errors.push(forbidden(`${path}.url`, IMMUTABLE));
  if (changed(before.finalizeURL, after.finalizeURL))
    errors.push(forbidden(`${path}.finalizeURL`, IMMUTABLE));
  if (before.certificate && !sameBytes(before.certificate, after.certificate)) {
    errors.push(forbidden(`${path}.certificate`, IMMUTABLE));
  }
  const oldAuthzs = Array.isArray(before.authorizations) ? before.authorizations : [];
  if (oldAuthzs.length === 0) return errors;
  const newAuthzs = Array.isArray(after.authorizations) ? after.authorizations : [];
  const authzPath = `${path}.authorizations`;
  // Once the server's authorizations are recorded none may be added or removed.
  if (oldAuthzs.length !== newAuthzs.length) errors.push(forbidden(authzPath, IMMUTABLE));
  oldAuthzs.forEach((oldAuthz, i) => {
    const at = index(authzPath, i);
    const newAuthz = newAuthzs[i] ?? { url: '' };
    if (changed(oldAuthz.url, newAuthz.url)) errors.push(forbidden(`${at}.url`, IMMUTABLE));
    if (changed(oldAuthz.identifier, newAuthz.identifier))
      errors.push(forbidden(`${at}.identifier`, IMMUTABLE));
    // wildcard is a pointer upstream: any set value, false included, is fixed.
    if (typeof oldAuthz.wildcard === 'boolean' && oldAuthz.wildcard !== newAuthz.wildcard) {
      errors.push(forbidden(`${at}.wildcard`, IMMUTABLE));
    }
    if (changed(oldAuthz.initialState, newAuthz.initialState)) {
      errors.push(forbidden(`${at}.initialState`, IMMUTABLE));
    }
    const oldChallenges = Array.isArray(oldAuthz.challenges) ? oldAuthz.challenges : [];
    if (oldChallenges.length === 0) return;
    const newChallenges = Array.isArray(newAuthz.challenges) ? newAuthz.challenges : [];
    const challengesPath = `${at}.challenges`;
    if (oldChallenges.length !== newChallenges.length) errors.push(forbidden(challengesPath, IMMUTABLE));
    oldChallenges.forEach((oldChallenge, j) => {
      const cat = index(challengesPath, j);
      const newChallenge = newChallenges[j] ?? { url: '', type: '', token: '' };
      if (changed(oldChallenge.url, newChallenge.url)) errors.push(forbidden(`${cat}.url`, IMMUTABLE));
      if (changed(oldChallenge.type, newChallenge.type)) errors.push(forbidden(`${cat}.type`, IMMUTABLE));
      if (changed(oldChallenge.token, newChallenge.token)) errors.push(forbidden(`${cat}.token`, IMMUTABLE));
    });
  });
  return errors;
}

/** ValidateOrder / ValidateOrderUpdate: nothing on create; on update the spec and status rules above. */
export function validateOrder(order: Order, old?: Order): FieldError[] {
  if (!old) return [];
  return [
    ...validateOrderSpecUpdate(old.spec, order.spec),
    ...validateOrderStatusUpdate(old.status, order.status),
  ];
}

/**
 * A JSON value as Go would see it after decoding into the typed struct: absent, null, "" and false are all
 * the zero value, so `wildcard: false` and no wildcard are the same spec.
 */
function goValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(goValue);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = goValue((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
  if (value === null || value === '' || value === false) return undefined;
  return value;
}

/** ValidateChallenge / ValidateChallengeUpdate: nothing on create; the spec never changes afterwards. */
export function validateChallenge(challenge: Challenge, old?: Challenge): FieldError[] {
  if (!old) return [];
  if (JSON.stringify(goValue(old.spec)) === JSON.stringify(goValue(challenge.spec))) return [];
  return [forbidden('spec', 'challenge spec is immutable after creation')];
}
