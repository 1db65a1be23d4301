import type { KubeObject } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';

/**
 * Unknown fields for fieldValidation (Strict / Warn): fields of ObjectMeta, top-level fields of built-in
 * kinds, and for custom resources every field their schema would prune.
 */

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const TYPE_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** A kind's top-level fields as a set, built once per kind rather than on every write. */
const topLevelFieldSets = new WeakMap<string[], Set<string>>();

function topLevelFieldSet(fields: string[]): Set<string> {
  let set = topLevelFieldSets.get(fields);
  if (set === undefined) {
    set = new Set(fields);
    topLevelFieldSets.set(fields, set);
  }
  return set;
}

export function unknownFields(def: ResourceDefinition, body: KubeObject, version: string): string[] {
  const unknown: string[] = [];
  const meta = body.metadata;
  if (meta && typeof meta === 'object') {
    for (const key of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(key)) unknown.push(`metadata.${key}`);
  }
  if (def.topLevelFields) {
    const known = topLevelFieldSet(def.topLevelFields);
    for (const key of Object.keys(body)) if (!TYPE_FIELDS.has(key) && !known.has(key)) unknown.push(key);
  }
  if (def.unknownFields) unknown.push(...def.unknownFields(body, version));
  return unknown;
}
