/**
 * Label selectors with the grammar and semantics of k8s.io/apimachinery/pkg/labels (`Parse`,
 * `Requirement.Matches`, `String`), so that `?labelSelector=` behaves exactly as against kube-apiserver.
 *
 *   <selector>    ::= <requirement> | <requirement> "," <selector>
 *   <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
 */
import { type FieldError, formatFieldError, newBadRequest } from './status.ts';
import { compileLabelRequirements, parseInt64 } from './label-matcher.ts';
import { labelValueErrors, qualifiedNameErrors } from './validation.ts';

/**
 * The operator of a label requirement, as the selector grammar spells it (`exists` and `!` for bare keys).
 */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** One term of a label selector: a key, an operator and its values. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** Sorted and without duplicates; empty for `exists` and `!`. */
  values: string[];
}

/**
 * A parsed label selector (`parseLabelSelector`, `labelSelectorFromMeta`): its requirements, a matcher and
 * its canonical text.
 */
export interface LabelSelector {
  /** Sorted by key, as upstream sorts them so that the string form is deterministic. */
  readonly requirements: readonly LabelRequirement[];
  /** True only for a selector that matches everything (no requirements). */
  readonly empty: boolean;
  /** Whether an object with these labels is selected; no labels reads as an empty set. */
  matches(labels: Record<string, string> | undefined): boolean;
  /** Canonical form; parsing it gives back an equal selector (except for `nothingLabels`, see there). */
  toString(): string;
}

// ---------------------------------------------------------------------------------------------------------
// Requirements

/** Upstream's field path for parse errors is nil, and a nil *field.Path prints as "<nil>". */
const NIL_PATH = '<nil>';

function invalid(field: string, value: unknown, detail: string): string {
  const error: FieldError = { type: 'FieldValueInvalid', field, value, detail };
  return formatFieldError(error);
}

/** An errors.Aggregate message: one error as is, several in brackets. */
function aggregate(messages: string[]): string {
  return messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
}

class SelectorSyntaxError extends Error {}

/**
 * Builds a requirement with NewRequirement's checks; throws SelectorSyntaxError with the aggregated
 * field errors. Values are sorted and deduplicated, as the parser's string set does.
 */
function newRequirement(key: string, operator: LabelOperator, values: readonly string[]): LabelRequirement {
  const errs: string[] = [];
  const keyErrors = qualifiedNameErrors(key);
  if (keyErrors.length > 0) errs.push(invalid('key', key, keyErrors.join('; ')));
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) {
        errs.push(invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) {
        errs.push(invalid('values', values, 'exact-match compatibility requires one single value'));
      }
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) {
        errs.push(invalid('values', values, 'values set must be empty for exists and does not exist'));
      }
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) {
        errs.push(invalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
    default:
      errs.push(
        formatFieldError({
          type: 'FieldValueNotSupported',
          field: 'operator',
          value: operator,
          detail: 'supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
        }),
      );
  }
  values.forEach((v, i) => {
    const valueErrors = labelValueErrors(v);
    if (valueErrors.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, valueErrors.join('; ')));
  });
  if (errs.length > 0) throw new SelectorSyntaxError(aggregate(errs));
  const sorted = [...new Set(values)].sort();
  return Object.freeze({ key, operator, values: Object.freeze(sorted) as string[] });
}

const hasLabel = (
  labels: Record<string, string> | undefined,
  key: string,
): labels is Record<string, string> => labels !== undefined && labels !== null && Object.hasOwn(labels, key);

/**
 * Whether `values` (sorted as newRequirement sorts them, by UTF-16 code units) holds `value`: a binary search.
 * kube scans its values, but a query may carry a hundred thousand of them, and here every list and watch
 * event matched against such a selector ran on the one event loop every client shares.
 */
function sortedIncludes(values: readonly string[], value: string): boolean {
  let low = 0;
  let high = values.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = values[middle];
    if (at === value) return true;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** Requirement.Matches: `!=` and `notin` match when the key is absent; `=`, `==`, `in`, gt/lt need it. */
function requirementMatches(r: LabelRequirement, labels: Record<string, string> | undefined): boolean {
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return hasLabel(labels, r.key) && sortedIncludes(r.values, labels[r.key]);
    case 'notin':
    case '!=':
      return !hasLabel(labels, r.key) || !sortedIncludes(r.values, labels[r.key]);
    case 'exists':
      return hasLabel(labels, r.key);
    case '!':
      return !hasLabel(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!hasLabel(labels, r.key) || r.values.length !== 1) return false;
      const actual = parseInt64(labels[r.key]);
      const bound = parseInt64(r.values[0]);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

/** Requirement.String. */
function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

/**
 * Up to this many requirements an object is matched against each in turn (a lookup or two per requirement);
 * more are folded per key first (label-matcher.ts), so that a selector of thousands costs an object no more
 * than its own labels.
 */
const FEW_REQUIREMENTS = 8;

/** Requirements matched each in turn, as upstream's Requirement.Matches (the reference for label-matcher.ts). */
export function requirementsMatch(
  requirements: readonly LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  return requirements.every((r) => requirementMatches(r, labels));
}

class RequirementsSelector implements LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  private compiled?: (labels: Record<string, string> | undefined) => boolean;

  constructor(requirements: LabelRequirement[]) {
    // Stable sort by key (upstream's sort.Sort(ByKey) is not stable, but same-key order never changes results).
    this.requirements = Object.freeze(
      [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    );
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Record<string, string> | undefined): boolean {
    if (this.requirements.length <= FEW_REQUIREMENTS) return requirementsMatch(this.requirements, labels);
    this.compiled ??= compileLabelRequirements(this.requirements);
    return this.compiled(labels);
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

/** Matches every object, labelled or not (labels.Everything()). */
export const everythingLabels: LabelSelector = new RequirementsSelector([]);

/**
 * Matches nothing (labels.Nothing()), what a nil metav1.LabelSelector means. Its string form is '' just as
 * upstream's, which is NOT re-parseable to "nothing": callers must not serialise it.
 */
export const nothingLabels: LabelSelector = Object.freeze({
  requirements: Object.freeze([]) as readonly LabelRequirement[],
  empty: false,
  matches: () => false,
  toString: () => '',
});

// ---------------------------------------------------------------------------------------------------------
// Lexer: a transcription of upstream's byte lexer, so that whitespace, NUL and odd operator runs such as
// `!==` or `=(` tokenise the same way.

type TokenKind = 'end' | 'id' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

interface Token {
  kind: TokenKind;
  text: string;
}

const SYMBOL_TOKENS: ReadonlySet<string> = new Set(['(', ')', ',', '!', '=', '==', '!=', '>', '<']);
const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string): boolean => '=!(),><'.includes(ch) && ch !== '';
const END = '\u0000';

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  // Like Go's read(): a NUL in the input reads the same as the end of input (and the lexer stops there).
  const read = (): string => (pos < text.length ? text[pos++] : END);

  const scanSymbol = (): Token => {
    let buffer = '';
    let last: Token | undefined;
    for (;;) {
      const ch = read();
      if (ch === END) break;
      if (!isSpecialSymbol(ch)) {
        pos--;
        break;
      }
      buffer += ch;
      if (SYMBOL_TOKENS.has(buffer)) last = { kind: buffer as TokenKind, text: buffer };
      else if (last) {
        pos--;
        break;
      }
    }
    // Unreachable in practice: every single special symbol is itself a token.
    if (!last) throw new SelectorSyntaxError(`error expected: keyword found '${buffer}'`);
    return last;
  };

  const scanIdentifier = (): Token => {
    let buffer = '';
    for (;;) {
      const ch = read();
      if (ch === END) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        pos--;
        break;
      }
      buffer += ch;
    }
    if (buffer === 'in' || buffer === 'notin') return { kind: buffer, text: buffer };
    return { kind: 'id', text: buffer };
  };

  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === END) {
      tokens.push({ kind: 'end', text: '' });
      return tokens;
    }
    pos--;
    tokens.push(isSpecialSymbol(ch) ? scanSymbol() : scanIdentifier());
  }
}

// ---------------------------------------------------------------------------------------------------------
// Parser: upstream's recursive descent, with its error messages.

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class Parser {
  private readonly tokens: Token[];
  private position = 0;

  constructor(text: string) {
    this.tokens = tokenize(text);
  }

  /**
   * In value position the keywords `in` and `notin` are plain identifiers (`x in (in)`, and a key may be
   * called `in`); only the operator slot reads them as keywords.
   */
  private peek(asValue = true): Token {
    const t = this.tokens[this.position];
    return asValue && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'id', text: t.text } : t;
  }

  private next(asValue = true): Token {
    const t = this.peek(asValue);
    this.position++;
    return t;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end') return requirements;
      if (t.kind !== 'id' && t.kind !== '!') {
        throw new SelectorSyntaxError(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      }
      try {
        requirements.push(this.parseRequirement());
      } catch (err) {
        if (err instanceof SelectorSyntaxError) {
          throw new SelectorSyntaxError(`unable to parse requirement: ${err.message}`);
        }
        throw err;
      }
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') {
        throw new SelectorSyntaxError(`found '${after.text}', expected: ',' or 'end of string'`);
      }
      const following = this.peek();
      if (following.kind !== 'id' && following.kind !== '!') {
        throw new SelectorSyntaxError(`found '${following.text}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    let t = this.next();
    let negated = false;
    if (t.kind === '!') {
      negated = true;
      t = this.next();
    }
    if (t.kind !== 'id') throw new SelectorSyntaxError(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) throw new SelectorSyntaxError(invalid(NIL_PATH, key, keyErrors.join('; ')));
    // `!key` is complete whatever follows (a following operator then fails as "expected ','"); a bare key
    // is `exists` only when the requirement ends there.
    if (negated) return newRequirement(key, '!', []);
    const ahead = this.peek().kind;
    if (ahead === 'end' || ahead === ',') return newRequirement(key, 'exists', []);

    const operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValueSet() : this.parseExactValue();
    return newRequirement(key, operator, values);
  }

  private parseOperator(): LabelOperator {
    const t = this.next(false);
    switch (t.kind) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return t.kind;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new SelectorSyntaxError(`found '${t.text}', expected: ${BINARY_OPERATORS}`);
    }
  }

  /** `( values )`, where values may be empty (`()`, `(,)`, `(a,,b)` all hold the empty value). */
  private parseValueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new SelectorSyntaxError(`found '${open.text}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return [''];
    }
    if (first.kind !== 'id' && first.kind !== ',') {
      throw new SelectorSyntaxError(`found '${first.text}', expected: ',', ')' or identifier`);
    }
    const values = this.parseIdentifierList();
    // Upstream reports the token that opened the list here, not the offending one; kept for parity.
    if (this.next().kind !== ')') throw new SelectorSyntaxError(`found '${first.text}', expected: ')'`);
    return values;
  }

  private parseIdentifierList(): string[] {
    const values: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.kind === 'id') {
        values.push(t.text);
        const ahead = this.peek();
        if (ahead.kind === ',') continue;
        if (ahead.kind === ')') return values;
        throw new SelectorSyntaxError(`found '${ahead.text}', expected: ',' or ')'`);
      }
      if (t.kind !== ',') throw new SelectorSyntaxError(`found '${t.text}', expected: ',', or identifier`);
      // A comma with nothing before it, after it or between two commas stands for the empty value.
      if (values.length === 0) values.push('');
      const ahead = this.peek().kind;
      if (ahead === ')') {
        values.push('');
        return values;
      }
      if (ahead === ',') {
        this.next();
        values.push('');
      }
    }
  }

  /** The single value after `=`, `==`, `!=`, `>`, `<`; nothing before `,` or the end means ''. */
  private parseExactValue(): string[] {
    const ahead = this.peek().kind;
    if (ahead === 'end' || ahead === ',') return [''];
    const t = this.next();
    if (t.kind === 'id') return [t.text];
    throw new SelectorSyntaxError(`found '${t.text}', expected: identifier`);
  }
}

/**
 * Parses a `labelSelector` query value (labels.Parse). '' (or blanks) is the empty selector matching
 * everything. Throws a 400 BadRequest StatusError carrying upstream's message on invalid input.
 */
export function parseLabelSelector(text: string): LabelSelector {
  let requirements: LabelRequirement[];
  try {
    requirements = new Parser(text).parse();
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw newBadRequest(err.message);
    throw err;
  }
  return requirements.length === 0 ? everythingLabels : new RequirementsSelector(requirements);
}

// ---------------------------------------------------------------------------------------------------------
// metav1.LabelSelector

/** The operator of a `matchExpressions` entry of a metav1.LabelSelector. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/**
 * A metav1.LabelSelector as objects carry it (`spec.selector`): `matchLabels` and `matchExpressions`, ANDed.
 */
export interface MetaLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: LabelSelectorOperator; values?: string[] }[];
}

const META_OPERATORS: Record<LabelSelectorOperator, LabelOperator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * metav1.LabelSelectorAsSelector: a missing selector selects nothing, an empty one everything (the
 * difference matters, e.g. for a PodDisruptionBudget or NetworkPolicy). Throws 400 BadRequest when a key,
 * value or operator is invalid.
 */
export function labelSelectorFromMeta(sel: MetaLabelSelector | undefined | null): LabelSelector {
  if (sel === undefined || sel === null) return nothingLabels;
  const matchLabels = Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const expressions = sel.matchExpressions ?? [];
  if (matchLabels.length + expressions.length === 0) return everythingLabels;
  const requirements: LabelRequirement[] = [];
  try {
    for (const [key, value] of matchLabels) requirements.push(newRequirement(key, '=', [value]));
    for (const expr of expressions) {
      const operator = Object.hasOwn(META_OPERATORS, expr.operator)
        ? META_OPERATORS[expr.operator]
        : undefined;
      if (operator === undefined) {
        throw new SelectorSyntaxError(
          `${JSON.stringify(expr.operator)} is not a valid label selector operator`,
        );
      }
      requirements.push(newRequirement(expr.key, operator, expr.values ?? []));
    }
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw newBadRequest(err.message);
    throw err;
  }
  return new RequirementsSelector(requirements);
}

/**
 * The value every matching object must carry for `key` (from `key=v`, `key==v` or `key in (v)`), or
 * undefined. Lets a caller answer from an index; it still has to apply the whole selector afterwards.
 * Unlike upstream's RequiresExactMatch, which gives up at the first requirement on the key, this looks at
 * all of them: `app!=x,app=y` still pins `y`.
 */
export function exactLabelValue(sel: LabelSelector, key: string): string | undefined {
  for (const r of sel.requirements) {
    if (r.key !== key || r.values.length !== 1) continue;
    if (r.operator === '=' || r.operator === '==' || r.operator === 'in') return r.values[0];
  }
  return undefined;
}
