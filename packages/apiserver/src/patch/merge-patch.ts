/**
 * RFC 7386 JSON merge patch (`application/merge-patch+json`): null deletes, objects merge recursively,
 * anything else replaces. Works on a private deep copy; keys go through getOwn/setOwn (no `__proto__` reach).
 */

import { cloneJson, getOwn, isObject, type JsonObject, setOwn } from '@certkit/apimachinery';

/**
 * Merges patch into target (which it changes). With a list of pending (object, patch) pairs rather than
 * recursion: a patch may be nested as deep as a body may be (decode/json-depth.ts), deeper than the stack
 * goes.
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
