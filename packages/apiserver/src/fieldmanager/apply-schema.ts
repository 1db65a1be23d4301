/**
 * The schema server-side apply merges by (ApplySchema): which lists are maps (and on which keys), sets or
 * atomic, and which maps are atomic; from a built-in kind's strategic merge strategies or a CRD's schema.
 */

import { isObject } from '@certkit/apimachinery';
import type { SmpSchema } from '../patch/strategic-merge-patch.ts';
import type { JSONSchemaProps } from '../schema/types.ts';

/** The shape of a value as far as apply cares. */
export interface ApplySchema {
  /** Declared members (struct fields); a member not declared is a map entry. */
  properties?: Readonly<Record<string, ApplySchema>>;
  /** Every member counts as declared (built-in kinds, whose Go structs are not described here). */
  allDeclared?: boolean;
  /** Schema of undeclared members. */
  additional?: ApplySchema;
  items?: ApplySchema;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: readonly string[];
  atomicMap?: boolean;
}

export const untyped: ApplySchema = {};

export function child(schema: ApplySchema, key: string): { schema: ApplySchema; declared: boolean } {
  const declared =
    schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
  if (declared) return { schema: declared, declared: true };
  if (schema.allDeclared) return { schema: { allDeclared: true }, declared: true };
  return { schema: schema.additional ?? untyped, declared: false };
}

/**
 * A built-in kind's schema from its strategic-merge-patch strategies (kube-openapi's schemaconv rules: a
 * merge key makes a list-map, a primitive merge a set). Other lists are atomic.
 */
export function schemaFromSmp(smp: SmpSchema): ApplySchema {
  type Node = ApplySchema & { properties: Record<string, Node>; items?: Node };
  const node = (): Node => ({ properties: {}, allDeclared: true });
  const root = node();
  const entries = Object.entries(smp).sort(([a], [b]) => a.split('.').length - b.split('.').length);
  for (const [path, strategy] of entries) {
    let at = root;
    for (const part of path.split('.')) {
      if (at.listType) at = at.items ??= node();
      at = at.properties[part] ??= node();
    }
    if ('mergeKey' in strategy) {
      at.listType = 'map';
      at.listMapKeys = [strategy.mergeKey];
    } else at.listType = 'set';
  }
  return root;
}

/** A custom resource's schema from its CRD's openAPIV3Schema; metadata is ObjectMeta's. */
export function schemaFromOpenApi(schema: JSONSchemaProps | undefined, metadata: ApplySchema): ApplySchema {
  const root = schema ? convert(schema) : {};
  return { ...root, properties: { ...root.properties, metadata } };
}

function convert(s: JSONSchemaProps): ApplySchema {
  const out: ApplySchema & { properties?: Record<string, ApplySchema> } = {};
  if (s.properties) {
    out.properties = {};
    for (const [k, v] of Object.entries(s.properties)) out.properties[k] = convert(v);
  }
  if (isObject(s.additionalProperties)) out.additional = convert(s.additionalProperties as JSONSchemaProps);
  if (s.items && isObject(s.items)) out.items = convert(s.items);
  if (s.type === 'array') {
    const t = s['x-kubernetes-list-type'];
    out.listType = t === 'map' || t === 'set' ? t : 'atomic';
    if (t === 'map') out.listMapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  }
  if (s['x-kubernetes-map-type'] === 'atomic') out.atomicMap = true;
  return out;
}
