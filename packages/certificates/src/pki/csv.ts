/**
 * cert-manager's JoinWithEscapeCSV: one record written by Go's encoding/csv, without the trailing newline.
 * Annotation values must match it byte for byte, because they are compared on every reconcile.
 */

/** Go's unicode.IsSpace. */
const LEADING_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** encoding/csv's fieldNeedsQuotes, for the default comma. */
function needsQuotes(field: string): boolean {
  if (field === '') return false;
  if (field === '\\.') return true;
  return /[",\r\n]/.test(field) || LEADING_SPACE.test(field);
}

export function joinWithEscapeCsv(values: readonly string[]): string {
  return values.map((field) => (needsQuotes(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(',');
}
