/**
 * The metadata.resourceVersion a write carries, judged as kube-apiserver's store judges it: storage parses it
 * as a uint64 (APIObjectVersioner.ObjectResourceVersion), so "007" names revision 7 and "0" names none.
 *
 * Where kube-apiserver answers a 500 because that parse failed, or because its etcd3 store refuses a version on
 * create, the answer here is a 422 Invalid on `metadata.resourceVersion` with the same words (ADR 0410): a
 * client's mistake is a 4xx, and the text it would search for stays the same.
 */

import {
  GoSyntax,
  goQuote,
  newConflict,
  newInvalid,
  OBJECT_MODIFIED,
  type StatusError,
} from '@certkit/apimachinery';
import type { ResourceDefinition } from '../resource.ts';

const FIELD = 'metadata.resourceVersion';
const MAX_UINT64 = 2n ** 64n - 1n;

/**
 * kube-apiserver's store names the resource, not the kind, in its resourceVersion errors (a GroupKind built
 * from the GroupResource): `widgets.example.com "w" is invalid`, details.kind `widgets`.
 */
function invalidVersion(def: ResourceDefinition, name: string, value: unknown, detail: string): StatusError {
  return newInvalid(def.group, def.resource, name, [
    { type: 'FieldValueInvalid', field: FIELD, value, detail },
  ]);
}

/** The requested version as a number, 0n for none (absent or empty), or a 422 for what ParseUint refuses. */
export function parseRequestedVersion(
  def: ResourceDefinition,
  name: string,
  requested: string | undefined,
): bigint {
  if (requested === undefined || requested === '') return 0n;
  let problem: string | undefined;
  if (!/^[0-9]+$/.test(requested)) problem = 'invalid syntax';
  else if (BigInt(requested) > MAX_UINT64) problem = 'value out of range';
  if (problem !== undefined)
    throw invalidVersion(
      def,
      name,
      requested,
      `strconv.ParseUint: parsing ${goQuote(requested)}: ${problem}`,
    );
  return BigInt(requested);
}

/**
 * The update rules of kube-apiserver's Store.Update for the version a client sent (PUT, or what a patch left):
 * none (or 0) is an unconditional update where the kind allows one and a 422 where it does not (custom
 * resources); any other must equal the stored object's, or the update is a 409 Conflict. Returns whether the
 * update is conditional.
 */
export function checkUpdateVersion(
  def: ResourceDefinition,
  name: string,
  requested: string | undefined,
  stored: string | undefined,
): boolean {
  const version = parseRequestedVersion(def, name, requested);
  if (version === 0n) {
    if (!def.allowUnconditionalUpdate) throw versionRequired(def, name);
    return false;
  }
  if (version !== BigInt(stored ?? '0')) throw newConflict(def, name, OBJECT_MODIFIED);
  return true;
}

/** 422 for an update without a version on a kind that needs one, worded as kube-apiserver's (`0x0`, %#v of 0). */
export function versionRequired(def: ResourceDefinition, name: string): StatusError {
  return invalidVersion(def, name, new GoSyntax('0x0'), 'must be specified for an update');
}

/**
 * A create may not name a version: kube-apiserver's etcd3 store refuses one that parses as a non-zero number
 * ("resourceVersion should not be set on objects to be created") and ignores any other, as here.
 */
export function refuseVersionOnCreate(def: ResourceDefinition, name: string, requested: unknown): void {
  if (typeof requested !== 'string' || !/^[0-9]+$/.test(requested)) return;
  const version = BigInt(requested);
  if (version === 0n || version > MAX_UINT64) return;
  throw newInvalid(def.group, def.resource, name, [
    {
      type: 'FieldValueForbidden',
      field: FIELD,
      detail: 'resourceVersion should not be set on objects to be created',
    },
  ]);
}
