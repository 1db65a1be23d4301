/**
 * The AdmissionReview a webhook is sent (admission.k8s.io v1, or v1beta1 when that is all it lists) and the
 * checks its answer must pass (kube-apiserver's request/admissionreview.go, VerifyAdmissionResponse).
 */

import { randomUUID } from 'node:crypto';
import type { StoredObject } from '@certkit/apimachinery';
import type { AdmissionAttributes } from './attributes.ts';
import { ADMISSION_REVIEW_VERSIONS } from './webhook-types.ts';
import { InexactNumberError, parseJsonExact } from '../decode/exact-numbers.ts';

export interface ReviewTarget {
  group: string;
  /** The version the webhook is sent the object at (matchPolicy Equivalent may pick another). */
  version: string;
  resource: string;
  subresource: string;
  kind: string;
}

export interface AdmissionResult {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; [key: string]: unknown };
  /** The JSON patch operations, decoded (mutating webhooks only). */
  patch?: unknown;
  warnings: string[];
}

const OPTIONS_KIND: Record<string, string> = {
  CREATE: 'CreateOptions',
  UPDATE: 'UpdateOptions',
  DELETE: 'DeleteOptions',
  CONNECT: 'ConnectOptions',
};

/** The AdmissionReview version to send: the first the webhook lists that this server speaks. */
export function reviewVersion(listed: string[] | undefined): string | undefined {
  return (listed ?? []).find((v) => ADMISSION_REVIEW_VERSIONS.includes(v));
}

function atVersion(obj: StoredObject | undefined, apiVersion: string): StoredObject | undefined {
  return obj && obj.apiVersion !== apiVersion ? { ...obj, apiVersion } : obj;
}

export function buildReview(
  reviewApiVersion: string,
  attrs: AdmissionAttributes,
  target: ReviewTarget,
  requestResource: { group: string; version: string; resource: string },
): { uid: string; body: Record<string, unknown> } {
  const uid = randomUUID();
  const apiVersion = target.group ? `${target.group}/${target.version}` : target.version;
  const user = attrs.request.user;
  const request: Record<string, unknown> = {
    uid,
    kind: { group: target.group, version: target.version, kind: target.kind },
    resource: { group: target.group, version: target.version, resource: target.resource },
    requestKind: { group: requestResource.group, version: requestResource.version, kind: target.kind },
    requestResource,
    name: attrs.name,
    operation: attrs.operation,
    userInfo: {
      username: user?.name ?? '',
      ...(user?.uid ? { uid: user.uid } : {}),
      groups: user?.groups ?? [],
      ...(user?.extra && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
    },
    object: atVersion(attrs.object, apiVersion) ?? null,
    oldObject: atVersion(attrs.oldObject, apiVersion) ?? null,
    dryRun: attrs.request.dryRun,
    options: {
      kind: OPTIONS_KIND[attrs.operation],
      apiVersion: 'meta.k8s.io/v1',
      ...attrs.request.options,
    },
  };
  if (target.subresource) {
    request.subResource = target.subresource;
    request.requestSubResource = target.subresource;
  }
  if (attrs.namespace) request.namespace = attrs.namespace;
  return {
    uid,
    body: { apiVersion: `admission.k8s.io/${reviewApiVersion}`, kind: 'AdmissionReview', request },
  };
}

/** An answer a webhook should not have given; the chain treats it as a failed call (failurePolicy). */
export class InvalidResponseError extends Error {}

/** Checks a webhook's answer and decodes its patch; throws InvalidResponseError. */
export function verifyResponse(
  reviewApiVersion: string,
  uid: string,
  mutating: boolean,
  body: unknown,
): AdmissionResult {
  const review = body as { apiVersion?: string; kind?: string; response?: Record<string, unknown> } | null;
  const response = review?.response;
  if (!review || typeof review !== 'object' || !response || typeof response !== 'object')
    throw new InvalidResponseError('webhook response was absent');
  let patchType = typeof response.patchType === 'string' ? response.patchType : '';
  const patch = typeof response.patch === 'string' ? response.patch : '';
  if (reviewApiVersion === 'v1') {
    const gvk = `${review.apiVersion ?? ''}, Kind=${review.kind ?? ''}`;
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview')
      throw new InvalidResponseError(
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvk}`,
      );
    if (response.uid !== uid)
      throw new InvalidResponseError(`expected response.uid="${uid}", got "${String(response.uid ?? '')}"`);
  } else if (patch && !patchType) {
    // v1beta1 answers were never checked for uid and kind, and a patch without a type is a JSON patch.
    patchType = 'JSONPatch';
  }
  if (mutating) {
    if (!patchType && patch)
      throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
    if (patchType && !patch)
      throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
    if (patchType && patchType !== 'JSONPatch')
      throw new InvalidResponseError(
        `invalid webhook response: response.patchType=${patchType} is not supported`,
      );
  } else {
    if (patch) throw new InvalidResponseError('validating webhooks may not return response.patch');
    if (patchType) throw new InvalidResponseError('validating webhooks may not return response.patchType');
  }
  const warnings = Array.isArray(response.warnings)
    ? response.warnings.filter((w): w is string => typeof w === 'string')
    : [];
  const result: AdmissionResult = { allowed: response.allowed === true, warnings };
  if (response.status && typeof response.status === 'object')
    result.status = response.status as AdmissionResult['status'];
  if (patch) {
    try {
      result.patch = parseJsonExact(Buffer.from(patch, 'base64').toString('utf8'));
    } catch (err) {
      // A number the server would not store as written: refused as in a request body (ADR 0403).
      if (err instanceof InexactNumberError) throw new InvalidResponseError(`response.patch: ${err.message}`);
      throw new InvalidResponseError(`response.patch is not a JSON patch: ${(err as Error).message}`);
    }
  }
  return result;
}
