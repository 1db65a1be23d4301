/**
 * Field selectors with the grammar and semantics of k8s.io/apimachinery/pkg/fields (`ParseSelector`):
 * comma-separated `field=value`, `field==value` or `field!=value` terms, ANDed. Values escape `\`, `,` and
 * `=` with a backslash; field names are taken verbatim (no escapes, no trimming), and which fields exist is
 * the resource's business, not the parser's.
 */
import { newBadRequest } from './status.ts';

/** One `field=value` or `field!=value` term of a field selector. */
export interface FieldRequirement {
  field: string;
  /** `==` is read as `=`, as upstream does. */
  operator: '=' | '!=';
  /** Unescaped. */
  value: string;
}

/** A parsed field selector (`parseFieldSelector`): its terms, a matcher and its canonical text. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True only for a selector with no terms, which matches everything. */
  readonly empty: boolean;
  /** A field missing from `fields` reads as '' (fields.Set.Get): `a=` matches it, `a!=x` does too. */
  matches(fields: Record<string, string>): boolean;
  /** The value `field` must equal for a match, from the first `field=value` term, or undefined. */
  requiresExactMatch(field: string): string | undefined;
  /** Canonical form, values escaped; parsing it gives back an equal selector. */
  toString(): string;
}

/** Escapes a value for a field selector term (fields.EscapeValue). */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (ch) => `\\${ch}`);
}

class FieldSelectorSyntaxError extends Error {}

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes, and `,`/`=` must be escaped. */
function unescapeFieldValue(raw: string): string {
  let out = '';
  let escaped = false;
  for (const ch of raw) {
    if (escaped) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') {
        throw new FieldSelectorSyntaxError(`invalid field selector: invalid escape sequence: \\${ch}`);
      }
      out += ch;
      escaped = false;
    } else if (ch === '\\') {
      escaped = true;
    } else if (ch === ',' || ch === '=') {
      throw new FieldSelectorSyntaxError(`invalid field selector: unescaped character in value: ${ch}`);
    } else {
      out += ch;
    }
  }
  // A trailing lone backslash escapes nothing.
  if (escaped) throw new FieldSelectorSyntaxError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas that are not escaped (a backslash escapes whatever character follows it). */
function splitTerms(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (escaped) escaped = false;
    else if (ch === '\\') escaped = true;
    else if (ch === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** The first operator occurrence splits the term; `!=` and `==` are tried before `=` at each position. */
function splitTerm(term: string): { field: string; operator: string; rawValue: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of ['!=', '==', '=']) {
      if (term.startsWith(operator, i)) {
        return { field: term.slice(0, i), operator, rawValue: term.slice(i + operator.length) };
      }
    }
  }
  return undefined;
}

/** Go's sort.Strings orders by bytes; compare UTF-8 so non-ASCII terms sort the same way. */
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

class TermsSelector implements FieldSelector {
  readonly requirements: readonly FieldRequirement[];

  constructor(requirements: FieldRequirement[]) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze(r)));
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(fields: Record<string, string>): boolean {
    return this.requirements.every((r) => {
      const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : '';
      return r.operator === '=' ? actual === r.value : actual !== r.value;
    });
  }

  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.operator === '=' && r.field === field)?.value;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** Matches every object. */
export const everythingFields: FieldSelector = new TermsSelector([]);

/** A selector of the given terms, ANDed in their order (for composing selectors without re-parsing). */
export function fieldSelectorOf(requirements: readonly FieldRequirement[]): FieldSelector {
  return new TermsSelector([...requirements]);
}

/**
 * Parses a `fieldSelector` query value (fields.ParseSelector). '' is the empty selector; empty terms
 * (`a=b,,c=d`) are skipped. Terms are sorted, as upstream sorts them, so the string form is canonical.
 * Throws a 400 BadRequest StatusError on invalid input.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(text).sort(byteOrder)) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (!parts) throw newBadRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    let value: string;
    try {
      value = unescapeFieldValue(parts.rawValue);
    } catch (err) {
      if (err instanceof FieldSelectorSyntaxError) throw newBadRequest(err.message);
      throw err;
    }
    requirements.push({ field: parts.field, operator: parts.operator === '!=' ? '!=' : '=', value });
  }
  return requirements.length === 0 ? everythingFields : new TermsSelector(requirements);
}
