/**
 * list-type (set, map) and embedded-resource checks of a value, run after schema validation as the CR
 * strategy does.
 */

import {
  appendErrors,
  type FieldError,
  getOwn,
  isObject,
  type JsonObject,
  setOwn,
} from '@certkit/apimachinery';
import { hasEmbeddedResources, hasKeyedLists } from './walk.ts';
import { canonicalJson, ownSchema } from './json.ts';
import { additionalSchema, isEmbedded } from './prune.ts';
import { type JSONSchemaProps, META_FIELDS } from './types.ts';
import { childName } from './validate.ts';

function duplicateIndices(keys: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const duplicates: number[] = [];
  keys.forEach((key, i) => {
    const text = canonicalJson(key);
    const times = seen.get(text) ?? 0;
    // Only the first repetition of a value is reported, as upstream.
    if (times === 1) duplicates.push(i);
    seen.set(text, times + 1);
  });
  return duplicates;
}

export function listTypeErrors(path: string, schema: JSONSchemaProps, value: unknown): FieldError[] {
  // Only the parts of the object whose schema holds a set or map list can have duplicates.
  if (!hasKeyedLists(schema)) return [];
  if (Array.isArray(value)) return listTypeArrayErrors(path, schema, value);
  if (isObject(value)) return listTypeObjectErrors(path, schema, value, false);
  return [];
}

export function listTypeObjectErrors(
  path: string,
  schema: JSONSchemaProps,
  value: JsonObject,
  root: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  const additional = schema.additionalProperties;
  if (isObject(additional)) {
    for (const key of Object.keys(value)) {
      if (root && META_FIELDS.has(key)) continue;
      appendErrors(errors, listTypeErrors(`${path}[${key}]`, additional, value[key]));
    }
  }
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined)
      appendErrors(errors, listTypeErrors(childName(path, key), property, value[key]));
  }
  return errors;
}

function listTypeArrayErrors(path: string, schema: JSONSchemaProps, value: unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of duplicateIndices(value))
      errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, value: value[i] });
  } else if (listType === 'map') {
    appendErrors(errors, listMapErrors(path, schema['x-kubernetes-list-map-keys'] ?? [], value));
  }
  if (schema.items !== undefined) {
    value.forEach((item, i) => {
      appendErrors(errors, listTypeErrors(`${path}[${i}]`, schema.items!, item));
    });
  }
  return errors;
}

function listMapErrors(path: string, keyFields: string[], value: unknown[]): FieldError[] {
  const notObject = value.findIndex((item) => item !== null && !isObject(item));
  if (notObject >= 0) {
    return [
      {
        type: 'FieldValueInvalid',
        field: `${path}[${notObject}]`,
        value: value[notObject],
        detail: 'must be an object for an array of list-type map',
      },
    ];
  }
  // An item's key is the subset of key fields it sets; items setting none share the empty key.
  const keys = value.map((item) => {
    const key: JsonObject = {};
    for (const field of keyFields) {
      if (isObject(item) && Object.hasOwn(item, field)) setOwn(key, field, item[field]);
    }
    return key;
  });
  return duplicateIndices(keys).map((i) => ({
    type: 'FieldValueDuplicate',
    field: `${path}[${i}]`,
    value: keys[i],
  }));
}

/** An embedded resource must name its apiVersion and kind (objectmeta validateEmbeddedResource). */
export function embeddedResourceErrors(
  path: string,
  schema: JSONSchemaProps | undefined,
  value: unknown,
  root: boolean,
): FieldError[] {
  // Only the parts of the object whose schema holds an embedded resource can miss its apiVersion or kind.
  if (schema === undefined || !hasEmbeddedResources(schema)) return [];
  const errors: FieldError[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      appendErrors(errors, embeddedResourceErrors(`${path}[${i}]`, schema.items, item, false));
    });
    return errors;
  }
  if (!isObject(value)) return errors;
  if (!root && isEmbedded(schema)) {
    for (const field of ['apiVersion', 'kind']) {
      const member = getOwn(value, field);
      const at = childName(path, field);
      if (member === undefined) errors.push({ type: 'FieldValueRequired', field: at });
      else if (typeof member !== 'string')
        errors.push({ type: 'FieldValueInvalid', field: at, value: member, detail: 'must be a string' });
      else if (member === '')
        errors.push({ type: 'FieldValueInvalid', field: at, value: member, detail: 'must not be empty' });
    }
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined)
      appendErrors(errors, embeddedResourceErrors(childName(path, key), property, value[key], false));
    else if (additional?.schema !== undefined) {
      appendErrors(errors, embeddedResourceErrors(`${path}[${key}]`, additional.schema, value[key], false));
    }
  }
  return errors;
}
