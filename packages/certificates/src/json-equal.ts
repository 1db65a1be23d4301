/**
 * Whether two JSON values (as JSON.parse gives them, or objects about to be serialised) are equal: what
 * util.isDeepStrictEqual answers for them, at a fraction of its cost (it also handles prototypes, Maps,
 * cycles…), which showed in profiles since every reconcile compares a status. A property holding undefined
 * counts as absent, as in the JSON it serialises to.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    if (!jsonEqual(x[key], y[key])) return false;
    count++;
  }
  for (const key in y) if (y[key] !== undefined) count--;
  return count === 0;
}
