/**
 * Validation of the `data` maps Secrets and ConfigMaps share: keys, base64, the 1 MiB limit, immutability.
 */

import type { FieldError, StoredObject } from '@certkit/apimachinery';
import { base64Size, configMapKey, isBase64 } from '../validation.ts';

export const MAX_SECRET_BYTES = 1024 * 1024;

export function validateDataMap(
  data: unknown,
  field: string,
  errs: FieldError[],
  values: 'base64' | 'string',
): number {
  if (data === undefined || data === null) return 0;
  if (typeof data !== 'object' || Array.isArray(data)) {
    errs.push({ type: 'FieldValueTypeInvalid', field, value: data, detail: 'must be an object' });
    return 0;
  }
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of configMapKey(key))
      errs.push({ type: 'FieldValueInvalid', field, value: key, detail: msg });
    if (typeof value !== 'string') {
      errs.push({
        type: 'FieldValueTypeInvalid',
        field: `${field}[${key}]`,
        value,
        detail: 'must be a string',
      });
    } else if (values === 'base64') {
      if (!isBase64(value)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${field}[${key}]`,
          value: '<value omitted>',
          detail: 'illegal base64 data',
        });
      }
      size += base64Size(value);
    } else {
      size += Buffer.byteLength(value);
    }
  }
  return size;
}

export function immutableData(
  obj: StoredObject,
  old: StoredObject | undefined,
  fields: string[],
): FieldError[] {
  if (!old || old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'immutable',
      detail: 'field is immutable when `immutable` is set',
    });
  }
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errs.push({
        type: 'FieldValueForbidden',
        field: f,
        detail: 'field is immutable when `immutable` is set',
      });
    }
  }
  return errs;
}
