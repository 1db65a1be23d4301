/** How the patch formats quote a value in an error message. */

/** A value as JSON text, as Go's %v of a decoded JSON value reads closely enough. */
export function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
