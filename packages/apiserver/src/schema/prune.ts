/**
 * Pruning, as apiextensions-apiserver does it: fields the structural schema does not declare are dropped
 * (unless `x-kubernetes-preserve-unknown-fields`), and nulls the schema cannot hold.
 */

import { isObject } from '@certkit/apimachinery';
import { ownSchema } from './json.ts';
import { type JSONSchemaProps, META_FIELDS } from './types.ts';

export function isEmbedded(schema: JSONSchemaProps | undefined): boolean {
  return schema?.['x-kubernetes-embedded-resource'] === true;
}

export function preservesUnknown(schema: JSONSchemaProps | undefined): boolean {
  return schema?.['x-kubernetes-preserve-unknown-fields'] === true;
}

/** The schema for values of keys not in `properties`, or undefined when such keys are unknown fields. */
export function additionalSchema(
  schema: JSONSchemaProps,
): { schema: JSONSchemaProps | undefined } | undefined {
  const additional = schema.additionalProperties;
  if (additional === undefined) return undefined;
  // A boolean additionalProperties keeps the keys but gives their values no schema, so objects inside
  // them are emptied by pruning (structural pruning treats "no schema" as "nothing is known").
  return { schema: typeof additional === 'boolean' ? undefined : additional };
}

/**
 * Removes fields the schema does not specify, in place. Embedded resources (and the root, which is
 * one) keep apiVersion, kind and metadata; under x-kubernetes-preserve-unknown-fields unknown fields stay
 * while known ones are still pruned below.
 */
export function prune(
  value: unknown,
  schema: JSONSchemaProps | undefined,
  embedded: boolean,
  path = '',
  removed?: string[],
): void {
  if (preservesUnknown(schema)) {
    pruneKnownOnly(value, schema!, embedded, path, removed);
    return;
  }
  if (Array.isArray(value)) {
    const items = schema?.items;
    const embeddedItems = isEmbedded(items);
    for (let i = 0; i < value.length; i++) {
      prune(value[i], items, embeddedItems, removed ? `${path}[${i}]` : '', removed);
    }
    return;
  }
  if (!isObject(value)) return;
  if (schema === undefined) {
    for (const key of Object.keys(value)) {
      removed?.push(join(path, key));
      delete value[key];
    }
    return;
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    // Paths are only built when someone collects them: admission itself prunes without.
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      prune(value[key], property, isEmbedded(property), removed ? join(path, key) : '', removed);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      prune(value[key], sub, isEmbedded(sub), removed ? join(path, key) : '', removed);
    } else {
      removed?.push(join(path, key));
      delete value[key];
    }
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function pruneKnownOnly(
  value: unknown,
  schema: JSONSchemaProps,
  embedded: boolean,
  path: string,
  removed?: string[],
): void {
  if (Array.isArray(value)) {
    // Upstream keeps skipping unknown fields through the items of a preserving array.
    if (schema.items !== undefined) {
      const items = schema.items;
      const embeddedItems = isEmbedded(items);
      for (let i = 0; i < value.length; i++) {
        pruneKnownOnly(value[i], items, embeddedItems, removed ? `${path}[${i}]` : '', removed);
      }
    }
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      prune(value[key], property, isEmbedded(property), removed ? join(path, key) : '', removed);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      prune(value[key], sub, isEmbedded(sub), removed ? join(path, key) : '', removed);
    }
  }
}

/**
 * The paths prune() would remove, found without changing (or copying) the value: what fieldValidation
 * reports, on every write. Mirrors prune and pruneKnownOnly step for step, so the paths and their order
 * are the same.
 */
function unknownPaths(
  value: unknown,
  schema: JSONSchemaProps | undefined,
  embedded: boolean,
  path: string,
  found: string[],
): void {
  if (preservesUnknown(schema)) {
    unknownPathsKnownOnly(value, schema!, embedded, path, found);
    return;
  }
  if (Array.isArray(value)) {
    const items = schema?.items;
    const embeddedItems = isEmbedded(items);
    for (let i = 0; i < value.length; i++)
      unknownPaths(value[i], items, embeddedItems, `${path}[${i}]`, found);
    return;
  }
  if (!isObject(value)) return;
  if (schema === undefined) {
    for (const key of Object.keys(value)) found.push(join(path, key));
    return;
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      unknownPaths(value[key], property, isEmbedded(property), join(path, key), found);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      unknownPaths(value[key], sub, isEmbedded(sub), join(path, key), found);
    } else {
      found.push(join(path, key));
    }
  }
}

function unknownPathsKnownOnly(
  value: unknown,
  schema: JSONSchemaProps,
  embedded: boolean,
  path: string,
  found: string[],
): void {
  if (Array.isArray(value)) {
    if (schema.items !== undefined) {
      const items = schema.items;
      const embeddedItems = isEmbedded(items);
      for (let i = 0; i < value.length; i++) {
        unknownPathsKnownOnly(value[i], items, embeddedItems, `${path}[${i}]`, found);
      }
    }
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      unknownPaths(value[key], property, isEmbedded(property), join(path, key), found);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      unknownPaths(value[key], sub, isEmbedded(sub), join(path, key), found);
    }
  }
}

/**
 * The unknown fields admission would prune from a custom resource (the `pruned` of admitCustomResource),
 * for fieldValidation=Strict and Warn, without copying or changing the object.
 */
export function unknownCustomResourceFields(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): string[] {
  const found: string[] = [];
  unknownPaths(object, schema, true, '', found);
  return found;
}

function fieldSchema(schema: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  if (schema === undefined) return undefined;
  return ownSchema(schema.properties, key) ?? additionalSchema(schema)?.schema;
}

/**
 * Drops `null` members whose schema neither allows null nor has a default (a default replaces them
 * instead), as kube-apiserver does after pruning: such nulls mean "unset" to a typed client.
 */
export function pruneNulls(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, schema?.items, false);
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const sub = fieldSchema(schema, key);
    if (value[key] === null && sub !== undefined && !sub.nullable && sub.default === undefined)
      delete value[key];
    else pruneNulls(value[key], sub, false);
  }
}
