/**
 * The three patch formats kube-apiserver accepts on PATCH, applied to plain JSON values:
 * JSON patch (RFC 6902), JSON merge patch (RFC 7386) and Kubernetes strategic merge patch.
 *
 * Every function works on private deep copies: the inputs are never mutated and the result shares no
 * structure with them, so callers may freely modify what they get back.
 */

import {
  cloneJson,
  getOwn,
  isObject,
  jsonEqual,
  type JsonObject,
  newBadRequest,
  newStatusError,
  setOwn,
  StatusError,
} from '@certkit/apimachinery';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

const patchTypesByMediaType: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** Maps a PATCH request's Content-Type to its patch type; parameters such as `; charset=utf-8` are ignored. */
export function patchTypeFromContentType(contentType: string): PatchType | undefined {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return Object.hasOwn(patchTypesByMediaType, mediaType) ? patchTypesByMediaType[mediaType] : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// JSON helpers. Keys are read with getOwn and written with setOwn, so a document carrying a `__proto__`
// member stays plain data instead of reaching the prototype chain.

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

// ---------------------------------------------------------------------------------------------------------
// RFC 6902 JSON patch

type JsonPatchOperationName = 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';

interface JsonPatchOperation {
  op: JsonPatchOperationName;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: unknown;
}

const jsonPatchOperationNames = new Set<string>(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * kube-apiserver answers a patch that parses but cannot be applied with 422 reason Invalid
 * (handlers/patch.go). Upstream replaces the message with a generic sentence; naming the operation and
 * path is more useful and changes nothing a client branches on.
 */
function patchNotApplicable(message: string): StatusError {
  return newStatusError(422, 'Invalid', message);
}

/** Splits an RFC 6901 JSON pointer into unescaped reference tokens; undefined when malformed. */
function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens: string[] = [];
  for (const raw of pointer.slice(1).split('/')) {
    if (/~[^01]|~$/.test(raw)) return undefined;
    // ~1 before ~0, so that "~01" decodes to "~1" and not "/".
    tokens.push(raw.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  return tokens;
}

function parseJsonPatch(operations: unknown): JsonPatchOperation[] {
  if (!Array.isArray(operations)) {
    throw newBadRequest('a JSON patch must be a JSON array of operations');
  }
  return operations.map((raw, index): JsonPatchOperation => {
    const where = `JSON patch operation ${index}`;
    if (!isObject(raw)) throw newBadRequest(`${where} must be a JSON object, got ${describe(raw)}`);
    const op = getOwn(raw, 'op');
    if (typeof op !== 'string' || !jsonPatchOperationNames.has(op)) {
      throw newBadRequest(`${where} has an unsupported "op": ${describe(op)}`);
    }
    const path = getOwn(raw, 'path');
    const tokens = typeof path === 'string' ? parsePointer(path) : undefined;
    if (typeof path !== 'string' || tokens === undefined) {
      throw newBadRequest(`${where} (${op}) has an invalid "path": ${describe(path)}`);
    }
    const operation: JsonPatchOperation = { op: op as JsonPatchOperationName, path, tokens };
    if (op === 'move' || op === 'copy') {
      const from = getOwn(raw, 'from');
      const fromTokens = typeof from === 'string' ? parsePointer(from) : undefined;
      if (typeof from !== 'string' || fromTokens === undefined) {
        throw newBadRequest(`${where} (${op}) has an invalid "from": ${describe(from)}`);
      }
      operation.from = from;
      operation.fromTokens = fromTokens;
    }
    if (op === 'add' || op === 'replace' || op === 'test') {
      if (!Object.hasOwn(raw, 'value')) throw newBadRequest(`${where} (${op} "${path}") is missing "value"`);
      operation.value = raw.value;
    }
    return operation;
  });
}

/** An array index token: `-` only where the caller allows appending, otherwise digits without leading zeros. */
function arrayIndex(token: string, length: number, allowEnd: boolean): number | undefined {
  if (token === '-') return allowEnd ? length : undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const index = Number(token);
  return index < length || (allowEnd && index === length) ? index : undefined;
}

/** Resolves the value a pointer designates; undefined when the document has nothing there. */
function resolve(doc: unknown, tokens: string[]): unknown {
  let current = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      const index = arrayIndex(token, current.length, false);
      if (index === undefined) return undefined;
      current = current[index];
    } else if (isObject(current)) {
      if (!Object.hasOwn(current, token)) return undefined;
      current = current[token];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Applies one operation to `doc` (a private copy) and returns the new document root. */
function applyOperation(doc: unknown, operation: JsonPatchOperation): unknown {
  const { op, path, tokens } = operation;
  const fail = (why: string) =>
    patchNotApplicable(`JSON patch ${op} operation on "${path}" does not apply: ${why}`);

  const parentOf = (pathTokens: string[]): unknown => {
    const parent = resolve(doc, pathTokens.slice(0, -1));
    if (!Array.isArray(parent) && !isObject(parent)) throw fail('the parent of the path does not exist');
    return parent;
  };

  const add = (pathTokens: string[], value: unknown): unknown => {
    if (pathTokens.length === 0) return value;
    const parent = parentOf(pathTokens);
    const last = pathTokens[pathTokens.length - 1];
    if (Array.isArray(parent)) {
      const index = arrayIndex(last, parent.length, true);
      if (index === undefined) throw fail(`array index "${last}" is out of bounds or not a number`);
      parent.splice(index, 0, value);
    } else {
      setOwn(parent as JsonObject, last, value);
    }
    return doc;
  };

  const remove = (pathTokens: string[]): unknown => {
    if (pathTokens.length === 0) throw fail('the document root cannot be removed');
    const parent = parentOf(pathTokens);
    const last = pathTokens[pathTokens.length - 1];
    if (Array.isArray(parent)) {
      const index = arrayIndex(last, parent.length, false);
      if (index === undefined) throw fail(`array index "${last}" is out of bounds or not a number`);
      return parent.splice(index, 1)[0];
    }
    const object = parent as JsonObject;
    if (!Object.hasOwn(object, last)) throw fail('the path does not exist');
    const removed = object[last];
    delete object[last];
    return removed;
  };

  switch (op) {
    case 'add':
      return add(tokens, cloneJson(operation.value));
    case 'remove':
      remove(tokens);
      return doc;
    case 'replace': {
      if (tokens.length === 0) return cloneJson(operation.value);
      // Replaced in place rather than remove-then-add, so an object member keeps its position.
      const parent = parentOf(tokens);
      const last = tokens[tokens.length - 1];
      if (Array.isArray(parent)) {
        const index = arrayIndex(last, parent.length, false);
        if (index === undefined) throw fail(`array index "${last}" is out of bounds or not a number`);
        parent[index] = cloneJson(operation.value);
      } else {
        if (!Object.hasOwn(parent as JsonObject, last)) throw fail('the path does not exist');
        setOwn(parent as JsonObject, last, cloneJson(operation.value));
      }
      return doc;
    }
    case 'move': {
      const fromTokens = operation.fromTokens!;
      if (operation.from === path) return doc;
      if (path.startsWith(`${operation.from}/`))
        throw fail(`"${operation.from}" cannot be moved into its own child`);
      if (resolve(doc, fromTokens) === undefined)
        throw fail(`the "from" path "${operation.from}" does not exist`);
      if (fromTokens.length === 0) throw fail('the document root cannot be moved');
      return add(tokens, remove(fromTokens));
    }
    case 'copy': {
      const value = resolve(doc, operation.fromTokens!);
      if (value === undefined) throw fail(`the "from" path "${operation.from}" does not exist`);
      return add(tokens, cloneJson(value));
    }
    case 'test': {
      const actual = resolve(doc, tokens);
      if (actual === undefined) throw fail('the path does not exist');
      if (!jsonEqual(actual, operation.value)) {
        throw fail(
          `the value ${describe(actual)} is not equal to the tested value ${describe(operation.value)}`,
        );
      }
      return doc;
    }
  }
}

/**
 * Applies an RFC 6902 JSON patch. A malformed patch document is 400 BadRequest; an operation that does
 * not apply (missing path, failed test, index out of bounds) is 422 Invalid, as kube-apiserver answers.
 * Operations apply atomically: either all of them or none.
 */
export function applyJsonPatch(doc: unknown, operations: unknown): unknown {
  const parsed = parseJsonPatch(operations);
  let result = cloneJson(doc);
  for (const operation of parsed) result = applyOperation(result, operation);
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// RFC 7386 JSON merge patch

/**
 * Merges patch into target (which it changes). With a list of pending (object, patch) pairs rather than
 * recursion: a patch may be nested as deep as a body may be (json-depth.ts), deeper than the stack goes.
 */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const root: JsonObject = isObject(target) ? target : {};
  const pending: [JsonObject, JsonObject][] = [[root, patch]];
  while (pending.length > 0) {
    const [result, members] = pending.pop()!;
    for (const [key, value] of Object.entries(members)) {
      if (value === null) {
        delete result[key];
      } else if (!isObject(value)) {
        setOwn(result, key, cloneJson(value));
      } else {
        const existing = getOwn(result, key);
        const merged: JsonObject = isObject(existing) ? existing : {};
        setOwn(result, key, merged);
        pending.push([merged, value]);
      }
    }
  }
  return root;
}

/** Applies an RFC 7386 merge patch: null deletes, objects merge recursively, anything else replaces. */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  return mergeInto(cloneJson(doc), patch);
}

// ---------------------------------------------------------------------------------------------------------
// Strategic merge patch

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

function indexByIdentity(list: readonly unknown[], item: unknown, mergeKey: string | undefined): number {
  const identity = identityOf(item, mergeKey);
  if (identity === undefined) return -1;
  return list.findIndex((candidate) => jsonEqual(identityOf(candidate, mergeKey), identity));
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
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) {
    (indexByIdentity(order, item, mergeKey) >= 0 ? inPatch : serverOnly).push(item);
  }
  // Items missing from the reference list (only possible with an empty $setElementOrder) sort last.
  const byPosition = (list: readonly unknown[]) => (a: unknown, b: unknown) => {
    const ia = indexByIdentity(list, a, mergeKey);
    const ib = indexByIdentity(list, b, mergeKey);
    if (ia < 0 || ib < 0) return (ia < 0 ? 1 : 0) - (ib < 0 ? 1 : 0);
    return ia - ib;
  };
  inPatch.sort(byPosition(order));
  serverOnly.sort(byPosition(live));

  const result: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length && j < inPatch.length) {
    const li = indexByIdentity(live, serverOnly[i], mergeKey);
    const ri = indexByIdentity(live, inPatch[j], mergeKey);
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
    for (const item of [...live, ...plainItems]) {
      if (!merged.some((seen) => jsonEqual(seen, item))) merged.push(item);
    }
    return orderMergedList(merged, plainItems, live, undefined);
  }

  let base = live;
  const items: JsonObject[] = [];
  for (const item of patch) {
    if (!isObject(item)) continue;
    if (!Object.hasOwn(item, PATCH_DIRECTIVE)) {
      items.push(item);
      continue;
    }
    const directive = item[PATCH_DIRECTIVE];
    if (directive === 'delete') {
      const key = requireMergeKey(item, mergeKey);
      base = base.filter((candidate) => !jsonEqual(identityOf(candidate, mergeKey), key));
    } else if (directive === 'merge') {
      throw newBadRequest(`merging lists cannot yet be specified in the patch (at ${path})`);
    } else {
      throw unknownPatchType(directive, item);
    }
  }

  const merged = [...base];
  for (const item of items) {
    requireMergeKey(item, mergeKey);
    const index = indexByIdentity(merged, item, mergeKey);
    if (index < 0) {
      merged.push(materialize(item));
    } else {
      const current = merged[index];
      merged[index] = isObject(current)
        ? (mergeObject(current, item, path, schema) ?? {})
        : materialize(item);
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
  setOwn(
    original,
    field,
    live.filter((item) => !values.some((value) => jsonEqual(value, item))),
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
