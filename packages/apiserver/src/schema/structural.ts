/**
 * The structural schema checks a CustomResourceDefinition's `openAPIV3Schema` must pass (apiextensions
 * validation).
 */

import {
  type FieldError,
  forbidden,
  formatFieldError,
  invalid as invalidField,
  isObject,
  jsonEqual,
  required,
  appendErrors,
} from '@certkit/apimachinery';
import { ownSchema, quote } from './json.ts';
import { isEmbedded, preservesUnknown, prune } from './prune.ts';
import { type JSONSchemaProps, META_FIELDS } from './types.ts';
import { compilePattern, validateValue } from './validate.ts';
import { toFieldErrors } from './issues.ts';

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

type Level = 'root' | 'item' | 'field';

const emptyTypeDetail: Readonly<Record<Level, string>> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function isIntOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  return jsonEqual(anyOf, [{ type: 'integer' }, { type: 'string' }]);
}

function patternErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  if (schema.pattern === undefined) return [];
  const compiled = compilePattern(schema.pattern);
  return compiled instanceof Error
    ? [
        invalidField(
          `${path}.pattern`,
          schema.pattern,
          `must be a valid regular expression, but isn't: ${compiled.message}`,
        ),
      ]
    : [];
}

/** A schema under anyOf/allOf/oneOf/not may only validate values, never shape them. */
function nestedValueValidationErrors(
  schema: JSONSchemaProps,
  path: string,
  skipAnyOf: boolean,
): FieldError[] {
  const errors: FieldError[] = [...combinatorErrors(schema, path, skipAnyOf)];
  if (schema.items !== undefined)
    appendErrors(errors, nestedValueValidationErrors(schema.items, `${path}.items`, false));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    appendErrors(errors, nestedValueValidationErrors(property, `${path}.properties[${key}]`, false));
  }
  if (schema.type) errors.push(forbidden(`${path}.type`, 'must be empty to be structural'));
  if (schema.additionalProperties !== undefined) {
    errors.push(forbidden(`${path}.additionalProperties`, 'must be undefined to be structural'));
  }
  if (schema.default !== undefined)
    errors.push(forbidden(`${path}.default`, 'must be undefined to be structural'));
  if (schema.title) errors.push(forbidden(`${path}.title`, 'must be empty to be structural'));
  if (schema.description) errors.push(forbidden(`${path}.description`, 'must be empty to be structural'));
  if (schema.nullable) errors.push(forbidden(`${path}.nullable`, 'must be false to be structural'));
  for (const flag of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
  ] as const) {
    if (schema[flag]) errors.push(forbidden(`${path}.${flag}`, 'must be false to be structural'));
  }
  if (schema['x-kubernetes-list-map-keys']?.length) {
    errors.push(forbidden(`${path}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  }
  for (const key of ['x-kubernetes-list-type', 'x-kubernetes-map-type'] as const) {
    if (schema[key] !== undefined)
      errors.push(forbidden(`${path}.${key}`, 'must be undefined to be structural'));
  }
  if (schema['x-kubernetes-validations']?.length) {
    errors.push(forbidden(`${path}.x-kubernetes-validations`, 'must be empty to be structural'));
  }
  if (ownSchema(schema.properties, 'metadata') !== undefined) {
    errors.push(forbidden(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
  }
  return errors;
}

function combinatorErrors(schema: JSONSchemaProps, path: string, skipAnyOf: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (!skipAnyOf) {
    schema.anyOf?.forEach((s, i) => {
      appendErrors(errors, nestedValueValidationErrors(s, `${path}.anyOf[${i}]`, false));
    });
  }
  // int-or-string may spell its two types out as anyOf (also inside the first allOf member): the one
  // place where a value validation may name a type.
  schema.allOf?.forEach((s, i) => {
    const skip = i === 0 && isIntOrStringAnyOf(s.anyOf);
    appendErrors(errors, nestedValueValidationErrors(s, `${path}.allOf[${i}]`, skip));
  });
  schema.oneOf?.forEach((s, i) => {
    appendErrors(errors, nestedValueValidationErrors(s, `${path}.oneOf[${i}]`, false));
  });
  if (schema.not !== undefined)
    appendErrors(errors, nestedValueValidationErrors(schema.not, `${path}.not`, false));
  appendErrors(errors, patternErrors(schema, path));
  return errors;
}

/** Value validations may only constrain fields the structural part of the schema declares. */
function completenessErrors(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
): FieldError[] {
  if (s === undefined) return [required(sPath, `because it is defined in ${vPath}`)];
  const errors: FieldError[] = [];
  for (const [key, alternatives] of [
    ['anyOf', v.anyOf],
    ['allOf', v.allOf],
    ['oneOf', v.oneOf],
  ] as const) {
    alternatives?.forEach((n, i) => {
      appendErrors(errors, completenessErrors(n, s, sPath, `${vPath}.${key}[${i}]`));
    });
  }
  if (v.not !== undefined) appendErrors(errors, completenessErrors(v.not, s, sPath, `${vPath}.not`));
  if (v.items !== undefined)
    appendErrors(errors, completenessErrors(v.items, s.items, `${sPath}.items`, `${vPath}.items`));
  for (const [key, property] of Object.entries(v.properties ?? {})) {
    errors.push(
      ...completenessErrors(
        property,
        ownSchema(s.properties, key),
        `${sPath}.properties[${key}]`,
        `${vPath}.properties[${key}]`,
      ),
    );
  }
  return errors;
}

/** validateStructuralInvariants: every specified node has a type, and the shape rules around it. */
function structuralErrors(schema: JSONSchemaProps, level: Level, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = preservesUnknown(schema);
  const embedded = isEmbedded(schema);
  if (schema.type === 'array' && schema.items === undefined)
    errors.push(required(`${path}.items`, 'must be specified'));
  if (schema.items !== undefined)
    appendErrors(errors, structuralErrors(schema.items, 'item', `${path}.items`));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    appendErrors(errors, structuralErrors(property, 'field', `${path}.properties[${key}]`));
  }
  if (schema.additionalProperties !== undefined) {
    if (level === 'root')
      errors.push(forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (isObject(schema.additionalProperties)) {
      appendErrors(
        errors,
        structuralErrors(schema.additionalProperties, 'field', `${path}.additionalProperties`),
      );
    }
  }
  if (intOrString && preserve) {
    errors.push(
      invalidField(
        `${path}.x-kubernetes-preserve-unknown-fields`,
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (intOrString && embedded) {
    errors.push(
      invalidField(
        `${path}.x-kubernetes-embedded-resource`,
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  appendErrors(errors, combinatorErrors(schema, path, isIntOrStringAnyOf(schema.anyOf)));
  errors.push(
    ...completenessErrors(
      { anyOf: schema.anyOf, allOf: schema.allOf, oneOf: schema.oneOf, not: schema.not },
      schema,
      path,
      path,
    ),
  );

  if (embedded && schema.type !== 'object') {
    errors.push(
      schema.type
        ? invalidField(
            `${path}.type`,
            schema.type,
            'must be object if x-kubernetes-embedded-resource is true',
          )
        : required(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'),
    );
  } else if (!schema.type && !intOrString && !preserve) {
    errors.push(required(`${path}.type`, emptyTypeDetail[level]));
  }
  if (embedded && schema.additionalProperties !== undefined) {
    errors.push(
      forbidden(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'),
    );
  }
  if (level === 'root' && schema.type && schema.type !== 'object') {
    errors.push(invalidField(`${path}.type`, schema.type, 'must be object at the root'));
  }
  if (level === 'root' || embedded) {
    for (const field of ['kind', 'apiVersion']) {
      const property = ownSchema(schema.properties, field);
      if (property !== undefined && property.type !== 'string') {
        errors.push(invalidField(`${path}.properties[${field}].type`, property.type ?? '', 'must be string'));
      }
    }
    const metadata = ownSchema(schema.properties, 'metadata');
    if (metadata !== undefined && metadata.type !== 'object') {
      errors.push(invalidField(`${path}.properties[metadata].type`, metadata.type ?? '', 'must be object'));
    }
  }
  if (embedded && !preserve && Object.keys(schema.properties ?? {}).length === 0) {
    errors.push(
      required(
        `${path}.properties`,
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
  return errors;
}

/** The OpenAPI-level rules apiextensions applies on top of structure (ValidateCustomResourceDefinitionOpenAPISchema). */
function openApiErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (schema.type && !OPENAPI_TYPES.includes(schema.type)) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: `${path}.type`,
      value: schema.type,
      detail: `supported values: ${OPENAPI_TYPES.map((t) => quote(t)).join(', ')}`,
    });
  }
  if (schema.type === 'null')
    errors.push(forbidden(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (schema.uniqueItems) {
    errors.push(
      forbidden(
        `${path}.uniqueItems`,
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const additional = schema.additionalProperties;
  if (additional !== undefined && Object.keys(schema.properties ?? {}).length > 0 && additional !== true) {
    errors.push(
      forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'),
    );
  }
  const mapType = schema['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (schema.type !== 'object') {
      errors.push(
        schema.type
          ? invalidField(`${path}.type`, schema.type, 'must be object if x-kubernetes-map-type is specified')
          : required(`${path}.type`, 'must be object if x-kubernetes-map-type is specified'),
      );
    }
    if (mapType !== 'atomic' && mapType !== 'granular') {
      errors.push({
        type: 'FieldValueNotSupported',
        field: `${path}.x-kubernetes-map-type`,
        value: mapType,
        detail: 'supported values: "atomic", "granular"',
      });
    }
  }
  appendErrors(errors, listTypeSchemaErrors(schema, path));
  if (schema.items !== undefined) appendErrors(errors, openApiErrors(schema.items, `${path}.items`));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    appendErrors(errors, openApiErrors(property, `${path}.properties[${key}]`));
  }
  if (isObject(additional)) appendErrors(errors, openApiErrors(additional, `${path}.additionalProperties`));
  for (const [key, alternatives] of [
    ['anyOf', schema.anyOf],
    ['allOf', schema.allOf],
    ['oneOf', schema.oneOf],
  ] as const) {
    alternatives?.forEach((s, i) => {
      appendErrors(errors, openApiErrors(s, `${path}.${key}[${i}]`));
    });
  }
  if (schema.not !== undefined) appendErrors(errors, openApiErrors(schema.not, `${path}.not`));
  return errors;
}

function listTypeSchemaErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const listType = schema['x-kubernetes-list-type'];
  const mapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
  if (listType !== undefined) {
    if (schema.type !== 'array') {
      errors.push(
        schema.type
          ? invalidField(`${path}.type`, schema.type, 'must be array if x-kubernetes-list-type is specified')
          : required(`${path}.type`, 'must be array if x-kubernetes-list-type is specified'),
      );
    }
    if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
      errors.push({
        type: 'FieldValueNotSupported',
        field: `${path}.x-kubernetes-list-type`,
        value: listType,
        detail: 'supported values: "atomic", "set", "map"',
      });
    }
  }
  if (mapKeys.length > 0 && listType !== 'map') {
    errors.push(
      listType === undefined
        ? required(`${path}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty')
        : invalidField(
            `${path}.x-kubernetes-list-type`,
            listType,
            'must be map if x-kubernetes-list-map-keys is non-empty',
          ),
    );
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) {
      errors.push(
        required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'),
      );
    }
    if (schema.items === undefined) {
      errors.push(required(`${path}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    } else if (schema.items.type !== 'object') {
      errors.push(
        invalidField(
          `${path}.items.type`,
          schema.items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    } else if (mapKeys.some((key) => ownSchema(schema.items!.properties, key) === undefined)) {
      errors.push(
        invalidField(
          `${path}.x-kubernetes-list-map-keys`,
          mapKeys,
          'entries must all be names of item properties',
        ),
      );
    } else if (new Set(mapKeys).size !== mapKeys.length) {
      errors.push(
        invalidField(`${path}.x-kubernetes-list-map-keys`, mapKeys, 'must not contain duplicate entries'),
      );
    }
  }
  return errors;
}

/**
 * Defaults must be pruned already and valid against their own schema node (ValidateDefaults). As
 * upstream, only properties and items are walked, and defaults of a resource's apiVersion, kind and
 * metadata (whose checks need ObjectMeta coercion) are skipped. `resource` marks the root and embedded
 * resources, whose meta fields survive pruning.
 */
function defaultErrors(
  schema: JSONSchemaProps,
  path: string,
  insideMeta: boolean,
  resource: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  const meta = resource ? false : insideMeta;
  if (schema.default !== undefined && !meta) {
    const pruned = structuredClone(schema.default);
    prune(pruned, schema, resource);
    if (!jsonEqual(pruned, schema.default)) {
      errors.push(invalidField(`${path}.default`, schema.default, 'must not have unknown fields'));
    }
    appendErrors(errors, toFieldErrors(validateValue(schema.default, schema, ''), `${path}.default`));
  }
  if (schema.items !== undefined) {
    appendErrors(errors, defaultErrors(schema.items, `${path}.items`, meta, isEmbedded(schema.items)));
  }
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const intoMeta = meta || (resource && META_FIELDS.has(key));
    appendErrors(
      errors,
      defaultErrors(property, `${path}.properties[${key}]`, intoMeta, isEmbedded(property)),
    );
  }
  return errors;
}

/**
 * Checks that a CRD version's openAPIV3Schema is structural and self-consistent enough to serve: every
 * specified node has a type (except under x-kubernetes-preserve-unknown-fields or int-or-string), the root
 * is an object, value validations stay within the structure, list/map extensions are well formed and
 * defaults validate. `path` is where the schema sits, e.g. `spec.versions[0].schema.openAPIV3Schema`.
 */
export function validateStructuralSchema(schema: JSONSchemaProps, path: string): FieldError[] {
  const rootErrors = schema.nullable
    ? [forbidden(`${path}.nullable`, 'nullable cannot be true at the root')]
    : [];
  // Upstream sorts the structural errors by their rendered text, and checks defaults only on a
  // structural schema.
  const structural = structuralErrors(schema, 'root', path)
    .map((error) => ({ error, text: formatFieldError(error) }))
    .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
    .map(({ error }) => error);
  const defaults = structural.length === 0 ? defaultErrors(schema, path, false, true) : [];
  return [...rootErrors, ...structural, ...defaults, ...openApiErrors(schema, path)];
}
