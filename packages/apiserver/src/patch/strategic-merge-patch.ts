/**
 * Kubernetes strategic merge patch (`application/strategic-merge-patch+json`): lists merge by the merge key
 * or as sets where the kind's Go type says so (`SmpSchema`), and the `$patch`, `$retainKeys`,
 * `$setElementOrder` and `$deleteFromPrimitiveList` directives apply.
 *
 * Works on a private deep copy: the inputs are never mutated and the result shares no structure with them.
 * Keys are read with getOwn and written with setOwn, so a document carrying a `__proto__` member stays plain
 * data instead of reaching the prototype chain.
 */

import {
  cloneJson,
  getOwn,
  isObject,
  jsonEqual,
  type JsonObject,
  newBadRequest,
  setOwn,
  StatusError,
} from '@certkit/apimachinery';
import { describe } from './describe.ts';

/**
 * How a list field merges under strategic merge patch; lists without an entry are replaced wholesale.
 * - `{ mergeKey }`: a list of objects merged item by item on that key (`patchStrategy:"merge"` plus
 *   `patchMergeKey` on the Go field);
 * - `{ merge: 'primitive' }`: a list of scalars merged as a set union (`patchStrategy:"merge"`).
 */
export type SmpListStrategy = { readonly mergeKey: string } | { readonly merge: 'primitive' };

/**
 * Merge strategies by dotted field path from the object root. List items are traversed by field name
 * only, so `spec.containers.ports` names the `ports` list inside every item of `spec.containers`.
 */
export type SmpSchema = Readonly<Record<string, SmpListStrategy>>;

/** ObjectMeta's strategies (apimachinery meta/v1 types.go), shared by every kind. */
export const objectMetaSmp: SmpSchema = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': { merge: 'primitive' },
};

/** A PodSpec's merge keys (core/v1 types.go), under `at` (a Pod's spec, a template's spec). */
function podSpecSmp(at: string): SmpSchema {
  const entries: Record<string, SmpListStrategy> = {
    [`${at}.volumes`]: { mergeKey: 'name' },
    [`${at}.imagePullSecrets`]: { mergeKey: 'name' },
    [`${at}.hostAliases`]: { mergeKey: 'ip' },
  };
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    entries[`${at}.${list}`] = { mergeKey: 'name' };
    entries[`${at}.${list}.ports`] = { mergeKey: 'containerPort' };
    entries[`${at}.${list}.env`] = { mergeKey: 'name' };
    entries[`${at}.${list}.volumeMounts`] = { mergeKey: 'mountPath' };
    entries[`${at}.${list}.volumeDevices`] = { mergeKey: 'devicePath' };
  }
  return entries;
}

/**
 * Per-kind strategies, from the patchStrategy tags of the upstream Go types. Kinds whose lists carry no
 * tag (Secret, ConfigMap, Event, Lease, CustomResourceDefinition) only have the metadata entries.
 */
const smpSchemasByKind: Readonly<Record<string, SmpSchema>> = {
  Secret: objectMetaSmp,
  ConfigMap: objectMetaSmp,
  // NamespaceSpec.finalizers is `+listType=atomic` with no patch strategy: it is replaced, not merged.
  Namespace: { ...objectMetaSmp, 'status.conditions': { mergeKey: 'type' } },
  Event: objectMetaSmp,
  // ServiceAccount.secrets merges by name. imagePullSecrets carries no patchStrategy tag on ServiceAccount
  // (unlike PodSpec.imagePullSecrets), so kubectl computes it as a replaced list and so must we.
  ServiceAccount: { ...objectMetaSmp, secrets: { mergeKey: 'name' } },
  Lease: objectMetaSmp,
  CustomResourceDefinition: objectMetaSmp,
  // ServiceSpec.ports merges by port (and protocol: kube's list-map keys), status.conditions by type.
  Service: {
    ...objectMetaSmp,
    'spec.ports': { mergeKey: 'port' },
    'status.conditions': { mergeKey: 'type' },
  },
  Pod: { ...objectMetaSmp, ...podSpecSmp('spec'), 'status.conditions': { mergeKey: 'type' } },
  Deployment: {
    ...objectMetaSmp,
    ...podSpecSmp('spec.template.spec'),
    'status.conditions': { mergeKey: 'type' },
  },
};

/** The strategic-merge-patch schema for a built-in kind; unknown kinds get the ObjectMeta entries only. */
export function smpSchemaFor(kind: string): SmpSchema {
  return Object.hasOwn(smpSchemasByKind, kind) ? smpSchemasByKind[kind] : objectMetaSmp;
}

const PATCH_DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

/**
 * JSON-schema keywords that are legitimate data in CustomResourceDefinition schemas; every other `$` key
 * must be a directive, so that a misspelt directive is rejected instead of being stored as data.
 */
const dollarDataKeys = new Set(['$ref', '$schema']);

type KeyKind = 'data' | 'patch' | 'retainKeys' | 'setElementOrder' | 'deleteFromPrimitiveList';

function classifyKey(key: string): KeyKind {
  if (!key.startsWith('$') || dollarDataKeys.has(key)) return 'data';
  if (key === PATCH_DIRECTIVE) return 'patch';
  if (key === RETAIN_KEYS) return 'retainKeys';
  if (key.startsWith(SET_ELEMENT_ORDER) && key.length > SET_ELEMENT_ORDER.length) return 'setElementOrder';
  if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST) && key.length > DELETE_FROM_PRIMITIVE_LIST.length) {
    return 'deleteFromPrimitiveList';
  }
  throw newBadRequest(`unknown strategic merge patch directive ${JSON.stringify(key)}`);
}

function unknownPatchType(directive: unknown, where: JsonObject): StatusError {
  return newBadRequest(`unknown patch type: ${describe(directive)} in map: ${describe(where)}`);
}

function joinPath(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

/**
 * Turns patch content that lands where the original has nothing to merge with into plain data:
 * directives are dropped, null members (deletions of nothing) vanish, and list items that are pure
 * directives (`$patch: delete` of an item the list never had) disappear. Undefined means "no value".
 */
function materialize(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => {
        if (!isDirectiveItem(item)) return true;
        const directive = item[PATCH_DIRECTIVE];
        if (directive !== 'delete' && directive !== 'replace' && directive !== 'merge') {
          throw unknownPatchType(directive, item);
        }
        return false;
      })
      .map(materialize)
      .filter((item) => item !== undefined);
  }
  if (!isObject(value)) return value;
  const directive = getOwn(value, PATCH_DIRECTIVE);
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'replace' && directive !== 'merge') {
    throw unknownPatchType(directive, value);
  }
  const result: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    if (classifyKey(key) !== 'data' || member === null) continue;
    const materialized = materialize(member);
    if (materialized !== undefined) setOwn(result, key, materialized);
  }
  return result;
}

function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const retained = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retained) || !retained.every((key) => typeof key === 'string')) {
    throw newBadRequest('invalid patch format of retainKeys: $retainKeys must be a list of field names');
  }
  const keep = new Set<string>(retained);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || classifyKey(key) !== 'data') continue;
    if (!keep.has(key)) {
      throw newBadRequest(`invalid patch format of retainKeys: ${JSON.stringify(key)} is not in $retainKeys`);
    }
  }
  for (const key of Object.keys(original)) {
    if (!keep.has(key)) delete original[key];
  }
}

/** The identity of a list item: its merge key's value for keyed lists, the item itself for scalars. */
function identityOf(item: unknown, mergeKey: string | undefined): unknown {
  return mergeKey !== undefined && isObject(item) ? getOwn(item, mergeKey) : item;
}

/**
 * A string equal for two identities exactly when jsonEqual says they are equal (undefined: no identity).
 * Lists are merged and ordered through Maps keyed by it: scanning the list for each item made a patch of a
 * few thousand items quadratic, and one of 20000 owner references held the event loop for over 10 s.
 */
function identityKey(identity: unknown): string | undefined {
  if (identity === undefined) return undefined;
  if (identity === null || typeof identity !== 'object') return `${typeof identity}:${String(identity)}`;
  return `json:${canonicalJson(identity)}`;
}

/** JSON with object members sorted, and undefined members left out, as jsonEqual compares. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const object = value as JsonObject;
  const keys = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`).join(',')}}`;
}

/** Where each identity first appears in a list (what a findIndex by identity finds), by identityKey. */
function positions(list: readonly unknown[], mergeKey: string | undefined): Map<string, number> {
  const at = new Map<string, number>();
  list.forEach((item, index) => {
    const key = identityKey(identityOf(item, mergeKey));
    if (key !== undefined && !at.has(key)) at.set(key, index);
  });
  return at;
}

function positionIn(at: ReadonlyMap<string, number>, item: unknown, mergeKey: string | undefined): number {
  const key = identityKey(identityOf(item, mergeKey));
  return key === undefined ? -1 : (at.get(key) ?? -1);
}

/**
 * Orders a merged list the way upstream does (strategicpatch normalizeElementOrder): items named by the
 * patch follow `order` (the patch list or `$setElementOrder`), server-only items keep their live order, and
 * each server-only item is slotted in before the first patch item that came after it in the live list.
 * A patch item unknown to the live list therefore goes ahead of the remaining server-only items.
 */
function orderMergedList(
  merged: readonly unknown[],
  order: readonly unknown[],
  live: readonly unknown[],
  mergeKey: string | undefined,
): unknown[] {
  const orderAt = positions(order, mergeKey);
  const liveAt = positions(live, mergeKey);
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) {
    (positionIn(orderAt, item, mergeKey) >= 0 ? inPatch : serverOnly).push(item);
  }
  // Items missing from the reference list (only possible with an empty $setElementOrder) sort last.
  const byPosition = (at: ReadonlyMap<string, number>) => (a: unknown, b: unknown) => {
    const ia = positionIn(at, a, mergeKey);
    const ib = positionIn(at, b, mergeKey);
    if (ia < 0 || ib < 0) return (ia < 0 ? 1 : 0) - (ib < 0 ? 1 : 0);
    return ia - ib;
  };
  inPatch.sort(byPosition(orderAt));
  serverOnly.sort(byPosition(liveAt));

  const result: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length && j < inPatch.length) {
    const li = positionIn(liveAt, serverOnly[i], mergeKey);
    const ri = positionIn(liveAt, inPatch[j], mergeKey);
    if (li >= 0 && ri >= 0 && li < ri) result.push(serverOnly[i++]);
    else result.push(inPatch[j++]);
  }
  return result.concat(serverOnly.slice(i), inPatch.slice(j));
}

function isDirectiveItem(item: unknown): item is JsonObject {
  return isObject(item) && Object.hasOwn(item, PATCH_DIRECTIVE);
}

type ListKind = 'objects' | 'scalars' | 'empty';

function listKind(path: string, ...lists: unknown[][]): ListKind {
  let kind: ListKind = 'empty';
  for (const item of lists.flat()) {
    if (Array.isArray(item)) throw newBadRequest(`lists of lists are not supported (at ${path})`);
    const itemKind: ListKind = isObject(item) ? 'objects' : 'scalars';
    if (kind !== 'empty' && kind !== itemKind) {
      throw newBadRequest(`list element types are not identical (at ${path})`);
    }
    kind = itemKind;
  }
  return kind;
}

function requireMergeKey(item: JsonObject, mergeKey: string): unknown {
  const value = getOwn(item, mergeKey);
  if (value === undefined) {
    throw newBadRequest(`map: ${describe(item)} does not contain declared merge key: ${mergeKey}`);
  }
  return value;
}

/** Merges a patch list into a live list whose field has a merge strategy. */
function mergeList(live: unknown[], patch: unknown[], path: string, schema: SmpSchema): unknown[] {
  const strategy = Object.hasOwn(schema, path) ? schema[path] : undefined;
  if (strategy === undefined) return materialize(patch) as unknown[];

  // `{"$patch": "replace"}` among the items replaces the whole list with the other items.
  if (patch.some((item) => isDirectiveItem(item) && item[PATCH_DIRECTIVE] === 'replace')) {
    return materialize(patch) as unknown[];
  }

  const mergeKey = 'mergeKey' in strategy ? strategy.mergeKey : undefined;
  const plainItems = patch.filter((item) => !isDirectiveItem(item));
  const kind = listKind(path, live, plainItems);
  if (kind === 'objects' && mergeKey === undefined) {
    throw newBadRequest(`cannot merge lists of objects without a merge key (at ${path})`);
  }

  if (kind === 'scalars' || mergeKey === undefined) {
    // Scalars: set union, then upstream's ordering with the patch list as the order. Only
    // `$patch: replace` (handled above) means anything in a list of scalars.
    const directive = patch.find(isDirectiveItem);
    if (directive !== undefined) throw unknownPatchType(directive[PATCH_DIRECTIVE], directive);
    const merged: unknown[] = [];
    const seen = new Set<string | undefined>();
    for (const item of [...live, ...plainItems]) {
      const key = identityKey(item);
      if (!seen.has(key)) merged.push(item);
      seen.add(key);
    }
    return orderMergedList(merged, plainItems, live, undefined);
  }

  const items: JsonObject[] = [];
  const deleted = new Set<string | undefined>();
  for (const item of patch) {
    if (!isObject(item)) continue;
    if (!Object.hasOwn(item, PATCH_DIRECTIVE)) {
      items.push(item);
      continue;
    }
    const directive = item[PATCH_DIRECTIVE];
    if (directive === 'delete') {
      deleted.add(identityKey(requireMergeKey(item, mergeKey)));
    } else if (directive === 'merge') {
      throw newBadRequest(`merging lists cannot yet be specified in the patch (at ${path})`);
    } else {
      throw unknownPatchType(directive, item);
    }
  }

  // An item without the merge key has no identity (undefined): a delete never names it.
  const base =
    deleted.size === 0
      ? live
      : live.filter((candidate) => {
          const key = identityKey(identityOf(candidate, mergeKey));
          return key === undefined || !deleted.has(key);
        });
  const merged = [...base];
  let mergedAt = positions(merged, mergeKey);
  for (const item of items) {
    requireMergeKey(item, mergeKey);
    const key = identityKey(identityOf(item, mergeKey));
    const index = key === undefined ? -1 : (mergedAt.get(key) ?? -1);
    if (index < 0) {
      const added = materialize(item);
      merged.push(added);
      const addedKey = identityKey(identityOf(added, mergeKey));
      if (addedKey !== undefined && !mergedAt.has(addedKey)) mergedAt.set(addedKey, merged.length - 1);
    } else {
      const current = merged[index];
      merged[index] = isObject(current)
        ? (mergeObject(current, item, path, schema) ?? {})
        : materialize(item);
      // Merging may take the item's identity away (`$patch: delete` inside it): find first positions anew.
      if (identityKey(identityOf(merged[index], mergeKey)) !== key) mergedAt = positions(merged, mergeKey);
    }
  }
  return orderMergedList(merged, items, base, mergeKey);
}

/**
 * Checks that the items of a patch list appear in `$setElementOrder` in the same relative order, as
 * upstream does before trusting the order list (validatePatchWithSetOrderList).
 */
function checkElementOrder(
  patchList: unknown[],
  order: unknown[],
  mergeKey: string | undefined,
  field: string,
) {
  if (order.length === 0) return;
  const items = patchList.filter((item) => !isDirectiveItem(item));
  let p = 0;
  for (let o = 0; o < order.length && p < items.length; o++) {
    if (mergeKey !== undefined && isObject(items[p])) requireMergeKey(items[p] as JsonObject, mergeKey);
    if (jsonEqual(identityOf(items[p], mergeKey), identityOf(order[o], mergeKey))) p++;
  }
  if (p < items.length) {
    throw newBadRequest(
      `the order in patch list ${describe(patchList)} doesn't match $setElementOrder/${field} list ${describe(order)}`,
    );
  }
}

/** Merges `$setElementOrder/<field>` with its list (if patched) and sorts the result by it. */
function applyElementOrder(
  original: JsonObject,
  patch: JsonObject,
  field: string,
  order: unknown,
  path: string,
  schema: SmpSchema,
): void {
  if (!Array.isArray(order)) throw newBadRequest(`invalid patch format of setElementOrder list for ${field}`);
  const patchList = getOwn(patch, field);
  if (patchList === null) return; // the field is deleted by the main merge loop; nothing to order
  if (patchList !== undefined && !Array.isArray(patchList)) {
    throw newBadRequest(`$setElementOrder/${field} is given but ${field} in the patch is not a list`);
  }
  const live = getOwn(original, field);
  const liveList = Array.isArray(live) ? live : undefined;
  if (patchList === undefined && liveList === undefined) return;

  const fieldPath = joinPath(path, field);
  const strategy = Object.hasOwn(schema, fieldPath) ? schema[fieldPath] : undefined;
  const mergeKey = strategy && 'mergeKey' in strategy ? strategy.mergeKey : undefined;
  if (patchList !== undefined) checkElementOrder(patchList, order, mergeKey, field);

  let merged: unknown[];
  if (patchList === undefined) merged = liveList!;
  else if (liveList === undefined) merged = materialize(patchList) as unknown[];
  else merged = mergeList(liveList, patchList, fieldPath, schema);

  // Only merging lists have an identity to order by; a replaced list is taken as the patch wrote it.
  if (strategy !== undefined) merged = orderMergedList(merged, order, liveList ?? [], mergeKey);
  setOwn(original, field, merged);
  delete patch[field];
}

function applyPrimitiveListDeletion(original: JsonObject, field: string, values: unknown): void {
  if (!Array.isArray(values) || values.some((value) => isObject(value) || Array.isArray(value))) {
    throw newBadRequest(`invalid patch format of primitive list: $deleteFromPrimitiveList/${field}`);
  }
  const live = getOwn(original, field);
  if (!Array.isArray(live)) return;
  const removed = new Set(values.map((value) => identityKey(value)));
  setOwn(
    original,
    field,
    live.filter((item) => !removed.has(identityKey(item))),
  );
}

/**
 * Merges `patch` into `original` (both private copies, both mutated). Returns the merged map, or
 * undefined when the patch deletes the map (`$patch: delete`).
 */
function mergeObject(
  original: JsonObject,
  patch: JsonObject,
  path: string,
  schema: SmpSchema,
): JsonObject | undefined {
  if (Object.hasOwn(patch, PATCH_DIRECTIVE)) {
    const directive = patch[PATCH_DIRECTIVE];
    delete patch[PATCH_DIRECTIVE];
    if (directive === 'replace') return materialize(patch) as JsonObject;
    if (directive === 'delete') return undefined;
    if (directive !== 'merge') throw unknownPatchType(directive, patch);
  }

  applyRetainKeys(original, patch);

  const deletions: [string, unknown][] = [];
  for (const [key, value] of Object.entries(patch)) {
    const kind = classifyKey(key);
    if (kind === 'setElementOrder') {
      delete patch[key];
      applyElementOrder(original, patch, key.slice(SET_ELEMENT_ORDER.length), value, path, schema);
    } else if (kind === 'deleteFromPrimitiveList') {
      delete patch[key];
      deletions.push([key.slice(DELETE_FROM_PRIMITIVE_LIST.length), value]);
    } else if (kind !== 'data') {
      throw newBadRequest(`misplaced strategic merge patch directive ${JSON.stringify(key)}`);
    }
  }
  for (const [field, values] of deletions) applyPrimitiveListDeletion(original, field, values);

  for (const [key, patchValue] of Object.entries(patch)) {
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    const live = getOwn(original, key);
    const fieldPath = joinPath(path, key);
    let merged: unknown;
    if (isObject(live) && isObject(patchValue)) merged = mergeObject(live, patchValue, fieldPath, schema);
    else if (Array.isArray(live) && Array.isArray(patchValue))
      merged = mergeList(live, patchValue, fieldPath, schema);
    else merged = materialize(patchValue);
    if (merged === undefined) delete original[key];
    else setOwn(original, key, merged);
  }
  return original;
}

/**
 * Applies a Kubernetes strategic merge patch, as kubectl (client-side apply, edit, patch) sends for
 * built-in kinds. Maps merge like a merge patch; lists are replaced unless `schema` gives them a merge
 * strategy. Supported directives: `$patch` (replace, delete, merge), `$retainKeys`,
 * `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`; they never reach the result.
 * A malformed patch or unknown directive is 400 BadRequest.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema: SmpSchema): unknown {
  if (!isObject(patch)) throw newBadRequest('a strategic merge patch must be a JSON object');
  const original: JsonObject = isObject(doc) ? cloneJson(doc) : {};
  return mergeObject(original, cloneJson(patch), '', schema) ?? {};
}
