/**
 * Custom resources against their CRD's structural OpenAPI v3 schema, as apiextensions-apiserver does it:
 * prune unknown fields, drop nulls the schema cannot hold, apply defaults, then validate. Validation
 * mirrors kube-openapi's validator and apiextensions' translation of its errors into field errors, so the
 * messages users see (`spec.replicas: Invalid value: "string": spec.replicas in body must be of type
 * integer: "string"`) are the ones kube-apiserver prints, including its paths: `spec.items[0].name` for list
 * items and `spec.labels.key` for additionalProperties values (kube-openapi joins map keys with a dot;
 * only the list-type checks write `spec.labels[key]`).
 *
 * `x-kubernetes-validations` (CEL rules) are compiled and evaluated by ./cel/ (crd/custom-resource.ts runs them after these).
 */

import { appendErrors, cloneJson, type FieldError, type JsonObject, setOwn } from '@certkit/apimachinery';
import { applyDefaults } from './defaults.ts';
import { toFieldErrors } from './issues.ts';
import { ownSchema } from './json.ts';
import { prune, pruneNulls } from './prune.ts';
import { type JSONSchemaProps, META_FIELDS } from './types.ts';
import { validateValue } from './validate.ts';
import { embeddedResourceErrors, listTypeErrors, listTypeObjectErrors } from './list-types.ts';
import { hasDefaults, hasEmbeddedResources, hasKeyedLists } from './walk.ts';

/** Root schemas without their meta fields, built once per schema (see withoutMetaFields). */
const rootViews = new WeakMap<JSONSchemaProps, JSONSchemaProps>();

/** The schema and object a root validation sees: without the meta fields the registry validates itself. */
function withoutMetaFields(schema: JSONSchemaProps, object: JsonObject): [JSONSchemaProps, JsonObject] {
  const body: JsonObject = {};
  for (const key of Object.keys(object)) if (!META_FIELDS.has(key)) setOwn(body, key, object[key]);
  let view = rootViews.get(schema);
  if (view === undefined) {
    const properties: Record<string, JSONSchemaProps> = {};
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (!META_FIELDS.has(key)) properties[key] = property;
    }
    view = { ...schema, properties };
    if (schema.required) view.required = schema.required.filter((key) => !META_FIELDS.has(key));
    rootViews.set(schema, view);
  }
  return [view, body];
}

/**
 * Admits a custom resource as kube-apiserver does on create and update: prunes unknown fields (and nulls
 * the schema cannot hold), applies defaults, then validates against the schema, the list types and the
 * embedded resources. The root's apiVersion, kind and metadata are left to the registry. Returns the
 * admitted copy (the input is not modified), the field errors (the object is valid when there are none) and
 * the paths of the unknown fields pruned (for fieldValidation=Strict and Warn).
 */
export function admitCustomResource(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): { object: Record<string, unknown>; errors: FieldError[]; pruned: string[] } {
  const admitted = cloneJson(object);
  const pruned: string[] = [];
  const errors = admit(schema, admitted, pruned);
  return { object: admitted, errors, pruned };
}

/**
 * admitCustomResource on an object the caller owns (the registry's own copy of what a client sent):
 * pruned and defaulted where it is, without the copy; the root's apiVersion, kind and metadata are left
 * as they are. Returns the field errors.
 */
export function admitCustomResourceInPlace(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): FieldError[] {
  return admit(schema, object, undefined);
}

/**
 * Admission of a status update, as kube-apiserver's status strategy does it: the object is pruned and
 * defaulted as on any write, but only its status is validated, against the status schema (the rest of the
 * object is the stored one, validated when it was written). Errors name the same fields, in the same
 * order, as the status's errors in a validation of the whole object.
 */
export function admitCustomResourceStatusInPlace(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): FieldError[] {
  pruneAndDefault(schema, object, undefined);
  const statusSchema = ownSchema(schema.properties, 'status');
  if (statusSchema === undefined || !Object.hasOwn(object, 'status')) return [];
  const status = object.status;
  const errors = toFieldErrors(validateValue(status, statusSchema, 'status'), undefined);
  if (hasEmbeddedResources(statusSchema))
    appendErrors(errors, embeddedResourceErrors('status', statusSchema, status, false));
  if (hasKeyedLists(statusSchema)) appendErrors(errors, listTypeErrors('status', statusSchema, status));
  return errors;
}

function pruneAndDefault(schema: JSONSchemaProps, admitted: JsonObject, pruned: string[] | undefined): void {
  prune(admitted, schema, true, '', pruned);
  pruneNulls(admitted, schema, true);
  if (hasDefaults(schema)) applyDefaults(admitted, schema, true);
}

function admit(schema: JSONSchemaProps, admitted: JsonObject, pruned: string[] | undefined): FieldError[] {
  pruneAndDefault(schema, admitted, pruned);

  const [rootSchema, body] = withoutMetaFields(schema, admitted);
  const errors = toFieldErrors(validateValue(body, rootSchema, ''), undefined);
  if (hasEmbeddedResources(schema)) appendErrors(errors, embeddedResourceErrors('', schema, admitted, true));
  if (hasKeyedLists(schema)) appendErrors(errors, listTypeObjectErrors('', schema, admitted, true));
  return errors;
}
