/**
 * What value validation finds, in kube-openapi's SchemaValidator terms (the validator's own name for the
 * value, and its message), and their translation into field errors as apiextensions'
 * kubeOpenAPIResultToFieldErrors does it.
 */

import { type CauseType, type FieldError } from '@certkit/apimachinery';
import { supportedValuesDetail } from './enum-members.ts';
import { quote } from './json.ts';

type IssueCode =
  | 'type'
  | 'required'
  | 'tooLong'
  | 'enum'
  | 'maxItems'
  | 'tooManyProperties'
  /** Everything else becomes a FieldValueInvalid carrying the validator's message. */
  | 'invalid';

interface FieldIssue {
  kind: 'field';
  code: IssueCode;
  /** kube-openapi's path of the value, e.g. `spec.items[0]`; a leading dot is dropped when converting. */
  name: string;
  message: string;
  /** The offending value; undefined stands for Go's nil. */
  value?: unknown;
  /** The limit a TooLong / TooMany error names. */
  limit?: number;
  /** The allowed values of an enum. */
  values?: readonly unknown[];
}

/** Errors kube-openapi raises without a field (anyOf, oneOf, allOf, not, number range conversions). */
interface PlainIssue {
  kind: 'plain';
  message: string;
}

export type Issue = FieldIssue | PlainIssue;

/**
 * What a check returns when it finds nothing. Shared, since most checks of most values find nothing and
 * every write validates its whole object; never pushed to (callers copy issues into their own array).
 */
export const NO_ISSUES: readonly Issue[] = Object.freeze([]);

export function appendIssues(to: Issue[], from: readonly Issue[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]);
}

export function inBody(name: string, rest: string): string {
  return `${name} in body ${rest}`;
}

export function invalidType(name: string, typeName: string, actual: string): FieldIssue {
  return {
    kind: 'field',
    code: 'type',
    name,
    value: actual,
    message: inBody(name, `must be of type ${typeName}: ${quote(actual)}`),
  };
}

export function invalid(name: string, value: unknown, message: string): FieldIssue {
  return { kind: 'field', code: 'invalid', name, value, message };
}

const causeOf: Readonly<Record<IssueCode, CauseType>> = {
  type: 'FieldValueTypeInvalid',
  required: 'FieldValueRequired',
  tooLong: 'FieldValueTooLong',
  enum: 'FieldValueNotSupported',
  maxItems: 'FieldValueTooMany',
  tooManyProperties: 'FieldValueTooMany',
  invalid: 'FieldValueInvalid',
};

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

/**
 * Converts validator issues into field errors as apiextensions does. `root` is the field path the value
 * sits at (`undefined` for a whole object, whose errors without a field are reported at `<nil>`).
 */
export function toFieldErrors(issues: Issue[], root: string | undefined): FieldError[] {
  return issues.map((issue): FieldError => {
    const bare = root ?? '<nil>';
    if (issue.kind === 'plain')
      return { type: 'FieldValueInvalid', field: bare, value: '', detail: issue.message };
    const relative = issue.name === '.' ? '' : issue.name.replace(/^\./, '');
    const field = relative === '' ? bare : root === undefined ? relative : `${root}.${relative}`;
    const type = causeOf[issue.code];
    switch (issue.code) {
      case 'required':
        return { type, field };
      case 'enum': {
        const detail = issue.values ? supportedValuesDetail(issue.values) : '';
        return { type, field, value: issue.value ?? null, ...(detail ? { detail } : {}) };
      }
      case 'tooLong':
        // field.TooLong never prints the value.
        return {
          type,
          field,
          detail: `may not be more than ${issue.limit} ${plural(issue.limit!, 'byte', 'bytes')}`,
        };
      case 'maxItems':
      case 'tooManyProperties':
        return {
          type,
          field,
          value: issue.value,
          detail: `must have at most ${issue.limit} ${plural(issue.limit!, 'item', 'items')}`,
        };
      default:
        return { type, field, value: issue.value ?? '', detail: issue.message };
    }
  });
}
