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

/**
 * Appends `errors` to `list` one by one: Go's `allErrs = append(allErrs, errs...)`. A validator returns one
 * error per bad label, name or item, as many as a request body holds; `list.push(...errors)` passes each as an
 * argument and overflows the stack past about 120,000 of them (a ConfigMap with 190,000 invalid labels was
 * a 500 `Maximum call stack size exceeded`).
 */
export function appendErrors<T = FieldError>(list: T[], errors: readonly T[]): T[] {
  for (const error of errors) list.push(error);
  return list;
}
