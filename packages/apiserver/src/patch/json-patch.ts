/**
 * RFC 6902 JSON patch (`application/json-patch+json`), applied to plain JSON values.
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
  newStatusError,
  setOwn,
  StatusError,
} from '@certkit/apimachinery';
import { describe } from './describe.ts';

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

/** kube-apiserver's maxJSONPatchOperations: a longer patch is refused before any operation runs. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * kube-apiserver's JSONPatchMaxCopyBytes (its request body limit): the most a patch's copy operations may add
 * to the document, counted in JSON bytes. Without it each copy of a member into itself doubles the document,
 * and thirty operations in a few hundred bytes of patch ask for gigabytes.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

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
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    throw newStatusError(
      413,
      'RequestEntityTooLarge',
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`,
    );
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

/** What the copy operations of one patch have added so far, in JSON bytes. */
interface CopyBudget {
  copiedBytes: number;
}

/** Applies one operation to `doc` (a private copy) and returns the new document root. */
function applyOperation(doc: unknown, operation: JsonPatchOperation, budget: CopyBudget): unknown {
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
      // Measured before it is cloned, so a copy over the budget never allocates its clone.
      budget.copiedBytes += Buffer.byteLength(JSON.stringify(value));
      if (budget.copiedBytes > MAX_JSON_PATCH_COPY_BYTES) {
        throw fail(
          `the accumulated size increase of copy is ${budget.copiedBytes}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`,
        );
      }
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
 * Operations apply atomically: either all of them or none. More than {@link MAX_JSON_PATCH_OPERATIONS}
 * operations is 413; copies adding more than {@link MAX_JSON_PATCH_COPY_BYTES} is 422, as upstream.
 */
export function applyJsonPatch(doc: unknown, operations: unknown): unknown {
  const parsed = parseJsonPatch(operations);
  const budget: CopyBudget = { copiedBytes: 0 };
  let result = cloneJson(doc);
  for (const operation of parsed) result = applyOperation(result, operation, budget);
  return result;
}
