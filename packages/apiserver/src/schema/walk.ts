/**
 * Whether a schema has, anywhere below its root, defaults, embedded resources or set/map lists, memoised per
 * schema object: admission skips the walks that could find nothing.
 */

import { isObject } from '@certkit/apimachinery';
import { isEmbedded } from './prune.ts';
import type { JSONSchemaProps } from './types.ts';

/** The schema nodes below a node that its data can reach: properties, items, additionalProperties. */
function childSchemas(schema: JSONSchemaProps): JSONSchemaProps[] {
  const children = Object.values(schema.properties ?? {});
  if (schema.items !== undefined) children.push(schema.items);
  if (isObject(schema.additionalProperties)) children.push(schema.additionalProperties as JSONSchemaProps);
  return children;
}

/** Memoised "does this node or one below it satisfy test", per schema object (schemas are not changed). */
function anyBelow(
  cache: WeakMap<JSONSchemaProps, boolean>,
  test: (schema: JSONSchemaProps) => boolean,
): (schema: JSONSchemaProps) => boolean {
  const check = (schema: JSONSchemaProps): boolean => {
    let result = cache.get(schema);
    if (result === undefined) {
      result = test(schema) || childSchemas(schema).some(check);
      cache.set(schema, result);
    }
    return result;
  };
  return check;
}

// Most schemas have no defaults, no embedded resources and no set or map lists: the walks looking for
// them over every written object are skipped then (they could find nothing).
export const hasDefaults = anyBelow(new WeakMap(), (schema) => schema.default !== undefined);
export const hasEmbeddedResources = anyBelow(new WeakMap(), isEmbedded);
export const hasKeyedLists = anyBelow(new WeakMap(), (schema) => {
  const listType = schema['x-kubernetes-list-type'];
  return listType === 'set' || listType === 'map';
});
