import type { JSONSchemaProps } from '../schema/types.ts';

/**
 * A custom kind's schema as kube-apiserver publishes it in /openapi/v2, where Swagger 2.0 and kubectl's v2
 * reader (kube-openapi's util/proto) cannot take what OpenAPI v3 allows. apiextensions-apiserver's
 * `controller/openapi/v2/conversion.go` (ToStructuralOpenAPIV2), visiting each schema before its children:
 *
 * - `allOf`, `oneOf`, `anyOf` and `not` are dropped (so is the `anyOf` that int-or-string unfolds to);
 * - a `nullable` schema loses its type, items and properties, and its name leaves the parent's `required`
 *   (all of `required` goes when the additionalProperties schema is nullable);
 * - an `x-kubernetes-preserve-unknown-fields` schema loses its items and properties, and its type if `object`;
 * - an array left without items loses its type.
 *
 * The extensions themselves stay. Then every `default` is pruned (kube-openapi's handler.PruneDefaults, as the
 * CRD OpenAPI controller does before merging), and an embedded resource gets apiVersion, kind and metadata
 * (builder.go addEmbeddedProperties) unless it preserves unknown fields.
 */

type Schema = Record<string, unknown>;

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const EMBEDDED = 'x-kubernetes-embedded-resource';

/** TypeMeta's descriptions as builder.go words them for an embedded resource. */
const EMBEDDED_API_VERSION =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const EMBEDDED_METADATA =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function toV2(s: Schema): void {
  for (const junctor of ['allOf', 'oneOf', 'anyOf', 'not']) delete s[junctor];
  if (s.nullable === true) {
    delete s.type;
    delete s.items;
    delete s.properties;
  }
  delete s.nullable;
  if (s[PRESERVE] === true) {
    delete s.items;
    delete s.properties;
  }
  if (s.items === undefined && s.type === 'array') delete s.type;
  if (s[PRESERVE] === true && s.type === 'object') delete s.type;
  if (Array.isArray(s.required)) {
    const properties = isSchema(s.properties) ? s.properties : {};
    let required = (s.required as string[]).filter(
      (f) => !(isSchema(properties[f]) && properties[f].nullable),
    );
    if (isSchema(s.additionalProperties) && s.additionalProperties.nullable === true) required = [];
    if (required.length > 0) s.required = required;
    else delete s.required;
  }
  if (isSchema(s.items)) toV2(s.items);
  if (isSchema(s.properties)) for (const p of Object.values(s.properties)) if (isSchema(p)) toV2(p);
  if (isSchema(s.additionalProperties)) toV2(s.additionalProperties);
}

function pruneDefaults(s: Schema): void {
  delete s.default;
  if (isSchema(s.items)) pruneDefaults(s.items);
  if (isSchema(s.properties)) for (const p of Object.values(s.properties)) if (isSchema(p)) pruneDefaults(p);
  if (isSchema(s.additionalProperties)) pruneDefaults(s.additionalProperties);
}

function addEmbeddedProperties(s: Schema, objectMetaRef: string): void {
  if (isSchema(s.properties))
    for (const p of Object.values(s.properties)) if (isSchema(p)) addEmbeddedProperties(p, objectMetaRef);
  if (isSchema(s.items)) addEmbeddedProperties(s.items, objectMetaRef);
  if (isSchema(s.additionalProperties)) addEmbeddedProperties(s.additionalProperties, objectMetaRef);
  if (s[PRESERVE] === true || s[EMBEDDED] !== true) return;
  s.properties = {
    ...(isSchema(s.properties) ? s.properties : {}),
    apiVersion: { type: 'string', description: EMBEDDED_API_VERSION },
    kind: { type: 'string', description: EMBEDDED_KIND },
    metadata: { $ref: objectMetaRef, description: EMBEDDED_METADATA },
  };
  const required = Array.isArray(s.required) ? [...(s.required as string[])] : [];
  for (const name of ['kind', 'apiVersion']) if (!required.includes(name)) required.push(name);
  s.required = required;
}

/**
 * The v2 form of a CRD version's schema (its openAPIV3Schema, not changed), without the kind's own apiVersion,
 * kind and metadata (the caller adds them). undefined when kube-apiserver publishes the kind as a bare
 * `{type: object}`: no schema, or one whose root preserves unknown fields.
 */
export function crdSchemaForSwagger(
  schema: JSONSchemaProps | undefined,
  objectMetaRef: string,
): Schema | undefined {
  if (!schema || schema[PRESERVE] === true) return undefined;
  const copy = structuredClone(schema) as Schema;
  toV2(copy);
  pruneDefaults(copy);
  addEmbeddedProperties(copy, objectMetaRef);
  return copy;
}
