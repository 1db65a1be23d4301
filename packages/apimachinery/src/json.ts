/** Plain JSON values, as the server and the controllers handle them: objects, arrays and scalars. */

export type JsonObject = Record<string, unknown>;

/** Whether a JSON value is an object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/*
 * Members of objects parsed from a client's JSON are read with getOwn and written with setOwn, so that a
 * document carrying a `__proto__` (or `constructor`) member stays plain data instead of reaching the
 * prototype chain.
 */

/** The object's own member `key`; undefined when it has none (never something inherited). */
export function getOwn(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets the own member `key`; `__proto__` becomes a member like any other instead of the prototype. */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/**
 * Whether two JSON values (as JSON.parse gives them, or objects about to be serialised) are equal: objects by
 * their members in any order, arrays element by element. It is what util.isDeepStrictEqual answers for them,
 * at a fraction of its cost (that also handles prototypes, Maps, cycles…), which showed in profiles: every
 * reconcile compares a status, and patch and apply compare values throughout a request. A property holding
 * undefined counts as absent, as in the JSON it serialises to.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return equalWithin(a, b, 0);
}

/**
 * How deep jsonEqual recurses; deeper values (objects stored before the body nesting limit, say) are compared
 * with an explicit stack instead, which the call stack's size does not bound.
 */
const RECURSION_DEPTH = 500;

function equalWithin(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (depth > RECURSION_DEPTH) return equalIteratively(a, b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalWithin(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as JsonObject;
  const y = b as JsonObject;
  let count = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    // Own members only: JSON text can name a member `__proto__` or `constructor`, which y[key] alone would
    // find on Object.prototype when y has no such member.
    if (!Object.hasOwn(y, key) || !equalWithin(x[key], y[key], depth + 1)) return false;
    count++;
  }
  for (const key in y) if (y[key] !== undefined) count--;
  return count === 0;
}

/** jsonEqual's rules, with the pairs still to compare on a stack of their own. */
function equalIteratively(a: unknown, b: unknown): boolean {
  const pairs: [unknown, unknown][] = [[a, b]];
  while (pairs.length > 0) {
    const [x, y] = pairs.pop()!;
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ys = y as unknown[];
      if (x.length !== ys.length) return false;
      for (let i = 0; i < x.length; i++) pairs.push([x[i], ys[i]]);
      continue;
    }
    const xo = x as JsonObject;
    const yo = y as JsonObject;
    let count = 0;
    for (const key in xo) {
      if (xo[key] === undefined) continue;
      if (!Object.hasOwn(yo, key)) return false;
      pairs.push([xo[key], yo[key]]);
      count++;
    }
    for (const key in yo) if (yo[key] !== undefined) count--;
    if (count !== 0) return false;
  }
  return true;
}

/**
 * A deep copy of a JSON value. structuredClone is the quick way, but its serializer gives up ("Maximum call
 * stack size exceeded") at about 2,500 levels; deeper values are copied through JSON text, whose V8
 * implementation takes any depth.
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
