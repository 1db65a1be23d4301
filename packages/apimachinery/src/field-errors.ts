/**
 * The field.Error constructors of k8s.io/apimachinery/pkg/util/validation/field, with the detail texts it
 * writes, so that every validator (the API server's built-in kinds, CRD schemas and webhook configurations,
 * list options, cert-manager's webhook rules) words its errors as kube-apiserver does once
 * {@link formatFieldError} or {@link newInvalid} renders them.
 */

import type { FieldError } from './status.ts';

/** field.Required: a value is missing; `detail` says more when given. */
export function required(field: string, detail = ''): FieldError {
  return detail ? { type: 'FieldValueRequired', field, detail } : { type: 'FieldValueRequired', field };
}

/** field.Invalid: `value` breaks the rule `detail` states. */
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail };
}

/** field.Forbidden: the field may not be set (or changed) here; the value is not repeated. */
export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

/** field.NotSupported: `value` is none of `supported`, which the detail lists quoted. */
export function notSupported(
  field: string,
  value: unknown,
  supported: readonly (string | number)[],
): FieldError {
  const quoted = supported.map((v) => JSON.stringify(String(v))).join(', ');
  return { type: 'FieldValueNotSupported', field, value, detail: `supported values: ${quoted}` };
}

/** field.TooLong: the value is deliberately not repeated in the message. */
export function tooLong(field: string, maxBytes: number): FieldError {
  return { type: 'FieldValueTooLong', field, detail: `may not be more than ${maxBytes} bytes` };
}

/** field.TooMany: a list of `count` items where `max` are allowed. */
export function tooMany(field: string, count: number, max: number): FieldError {
  return { type: 'FieldValueTooMany', field, value: count, detail: `must have at most ${max} items` };
}

/** field.Duplicate: `value` appears more than once where it must be unique. */
export function duplicate(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, value };
}
