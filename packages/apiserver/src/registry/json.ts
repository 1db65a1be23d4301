/** Plain JSON values, as the registry handles them: objects, arrays and scalars straight from JSON.parse. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Below this depth the recursive walks here are used; deeper values (up to the 10000 levels a body may
 * have, json-depth.ts) go to their iterative forms, which do not grow the stack.
 */
const RECURSION_DEPTH = 500;

/** JSON equality: objects compare by members regardless of order, arrays element-wise. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return equalTo(a, b, 0);
}

function equalTo(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (depth > RECURSION_DEPTH) return equalIteratively(a, b);
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => equalTo(item, b[i], depth + 1));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && equalTo(a[key], b[key], depth + 1));
  }
  return false;
}

function equalIteratively(a: unknown, b: unknown): boolean {
  const pairs: [unknown, unknown][] = [[a, b]];
  while (pairs.length > 0) {
    const [x, y] = pairs.pop()!;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pairs.push([x[i], y[i]]);
    } else if (isObject(x) && isObject(y)) {
      const keys = Object.keys(x);
      if (keys.length !== Object.keys(y).length) return false;
      for (const key of keys) {
        if (!Object.hasOwn(y, key)) return false;
        pairs.push([x[key], y[key]]);
      }
    } else {
      return false;
    }
  }
  return true;
}

/**
 * A deep copy of a JSON value. structuredClone is the quick way, but its serializer gives up ("Maximum call
 * stack size exceeded") at about 2,500 levels; deeper values, which a body may have, are copied through
 * JSON text, whose V8 implementation takes any depth.
 */
export function cloneJson<T>(value: T): T {
  if (value === undefined) return value;
  try {
    return structuredClone(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return JSON.parse(JSON.stringify(value)) as T;
  }
}
