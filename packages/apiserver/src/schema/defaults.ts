/**
 * Defaulting: `default` values of a structural schema applied where a field is missing (or null and not
 * nullable).
 */

import { isObject, setOwn } from '@certkit/apimachinery';
import { ownSchema } from './json.ts';
import { additionalSchema, isEmbedded, prune } from './prune.ts';
import { type JSONSchemaProps, META_FIELDS } from './types.ts';

function defaultValue(schema: JSONSchemaProps): unknown {
  // A default is pruned like data (CRD validation already insists it has no unknown fields).
  const value = structuredClone(schema.default);
  prune(value, schema, isEmbedded(schema));
  return value;
}

function needsDefault(value: unknown, schema: JSONSchemaProps | undefined): schema is JSONSchemaProps {
  return value === null && schema !== undefined && !schema.nullable && schema.default !== undefined;
}

/**
 * Fills missing fields (and non-nullable nulls) with their schema default, in place, then recurses, so
 * that defaults nested inside a default, inside list items and inside map values apply too.
 */
export function applyDefaults(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (needsDefault(value[i], schema.items)) value[i] = defaultValue(schema.items);
      applyDefaults(value[i], schema.items, false);
    }
    return;
  }
  if (!isObject(value)) return;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (property.default === undefined || (root && META_FIELDS.has(key))) continue;
    if (!Object.hasOwn(value, key) || needsDefault(value[key], property))
      setOwn(value, key, defaultValue(property));
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      applyDefaults(value[key], property, false);
    } else if (additional?.schema !== undefined) {
      if (needsDefault(value[key], additional.schema)) setOwn(value, key, defaultValue(additional.schema));
      applyDefaults(value[key], additional.schema, false);
    }
  }
}
