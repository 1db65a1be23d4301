/**
 * field.Error constructors with the detail texts k8s.io/apimachinery writes, so that our messages read
 * as cert-manager's webhook's do once newInvalid/formatFieldError renders them.
 */

import type { FieldError } from '@certkit/apimachinery';

export function required(field: string, detail = ''): FieldError {
  return detail ? { type: 'FieldValueRequired', field, detail } : { type: 'FieldValueRequired', field };
}

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail };
}

export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

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

export function duplicate(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, value };
}

/** field.Path.Index. */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** field.Path.Key. */
export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}
