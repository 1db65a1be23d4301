/**
 * Reading a request body's JSON the way kube-apiserver's decoder reads it into Go structs (encoding/json, and
 * sigs.k8s.io/json for built-in kinds): a value of the wrong JSON type is the decoder's first error, worded as
 * Go words it (`json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type
 * []string`: the JSON type found, the struct holding the member, the member's path and its Go type). `null`
 * is the zero value of any type, not an error.
 *
 * Two entry points, one for each kind of Go type description:
 * - `decodeTyped`: a built-in kind by its OpenAPI model (kube-models.ts); fields the type does not have are
 *   dropped, and reported with their paths for fieldValidation.
 * - `objectMetaTypeError` and `deleteOptionsTypeError`: ObjectMeta (of built-in and custom resources alike,
 *   as apiextensions-apiserver's GetObjectMeta decodes it) and DeleteOptions, described here by hand, so that
 *   the rest of the server may take metadata's types for granted.
 */

import { isObject } from '@certkit/apimachinery';
import { goBase64ErrorAt } from './go-base64.ts';
import { goStructName, goTypeName, type ModelType, type TypeNode } from './kube-models.ts';
import { isBase64 } from '../registry/validation.ts';

export interface TypedDecodeResult {
  /** Go's first type error, e.g. `json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string`. */
  typeError?: string;
  /** Where the type error is, with the JSON path (`metadata.labels.app`) and the type expected there. */
  typeErrorAt?: { path: string; expected: TypeNode; value: unknown };
  /** Paths of the fields the type does not have, in document order: `metadata.bogus`, `spec.items[0].x`. */
  unknown: string[];
}

/** Go's name for the JSON type of a value, as its UnmarshalTypeError says it. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_LIMIT = 2 ** 63;

// metav1.Time reads RFC 3339; MicroTime the same with microseconds (time.Parse accepts any fraction for both).
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

class Walk {
  readonly unknown: string[] = [];
  typeError: string | undefined;
  typeErrorAt: TypedDecodeResult['typeErrorAt'];
  private readonly prune: boolean;
  constructor(prune: boolean) {
    this.prune = prune;
  }

  /** Go's context of a value: the innermost struct's name and the struct fields leading to it (no indices). */
  private fail(value: unknown, node: TypeNode, struct: string, goPath: string, literal = false): void {
    const what = literal ? `number ${String(value)}` : jsonKind(value);
    this.typeError =
      struct === ''
        ? `json: cannot unmarshal ${what} into Go value of type ${goTypeName(node)}`
        : `json: cannot unmarshal ${what} into Go struct field ${struct}.${goPath} of type ${goTypeName(node)}`;
  }

  value(value: unknown, node: TypeNode, path: string, struct: string, goPath: string): void {
    if (value === null || this.typeError !== undefined) return;
    this.check(value, node, path, struct, goPath);
    if (this.typeError !== undefined && this.typeErrorAt === undefined)
      this.typeErrorAt = { path, expected: node, value };
  }

  private check(value: unknown, node: TypeNode, path: string, struct: string, goPath: string): void {
    switch (node.kind) {
      case 'any':
        return;
      case 'string':
        if (typeof value !== 'string') return this.fail(value, node, struct, goPath);
        if (node.format === 'byte' && !isBase64(value)) this.bytes(value);
        return;
      case 'boolean':
        if (typeof value !== 'boolean') this.fail(value, node, struct, goPath);
        return;
      case 'number':
        if (typeof value !== 'number') this.fail(value, node, struct, goPath);
        return;
      case 'integer': {
        if (typeof value !== 'number') return this.fail(value, node, struct, goPath);
        const fits =
          Number.isInteger(value) &&
          (node.format === 'int32'
            ? value >= INT32_MIN && value <= INT32_MAX
            : value >= -INT64_LIMIT && value < INT64_LIMIT);
        if (!fits) this.fail(value, node, struct, goPath, true);
        return;
      }
      case 'int-or-string':
        // IntOrString's own UnmarshalJSON reads anything but a string as an int32, without field context.
        if (typeof value === 'string') return;
        if (typeof value !== 'number' || !Number.isInteger(value))
          this.fail(value, { kind: 'integer', format: 'int32' }, '', '');
        return;
      case 'time':
        // Time's UnmarshalJSON first reads a string, then parses it: its errors carry no field context.
        if (typeof value !== 'string') {
          this.typeError = `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`;
        } else if (!RFC3339.test(value)) {
          // Time parses RFC 3339, MicroTime RFC 3339 with microseconds: Go names the layout it tried.
          const layout = node.micro ? '2006-01-02T15:04:05.000000Z07:00' : '2006-01-02T15:04:05Z07:00';
          this.typeError = `parsing time ${JSON.stringify(value)} as "${layout}": cannot parse ${JSON.stringify(value)} as "2006"`;
        }
        return;
      case 'array':
        if (!Array.isArray(value)) return this.fail(value, node, struct, goPath);
        for (let i = 0; i < value.length && this.typeError === undefined; i++) {
          // A null item is decoded as its type's zero value, which is what Go stores and writes back; the
          // kinds' hooks can then take list items to be of their type.
          if (value[i] === null && this.prune) value[i] = zeroValue(node.items);
          this.value(value[i], node.items, `${path}[${i}]`, struct, goPath);
        }
        return;
      case 'map': {
        if (typeof value !== 'object' || Array.isArray(value)) return this.fail(value, node, struct, goPath);
        const map = value as Record<string, unknown>;
        for (const key in map) {
          this.value(map[key], node.values, `${path}.${key}`, struct, goPath);
          this.replace(map, key);
          if (this.typeError !== undefined) return;
        }
        return;
      }
      case 'model':
        if (typeof value !== 'object' || Array.isArray(value)) return this.fail(value, node, struct, goPath);
        this.object(value as Record<string, unknown>, node, path, goPath);
    }
  }

  /**
   * A `[]byte` field is base64 that Go decodes as it reads the body: its error has no field context. Go
   * also takes line breaks in it and bits past the last byte, and writes the bytes back canonical.
   */
  private bytes(value: string): void {
    const at = goBase64ErrorAt(value);
    if (at !== undefined) this.typeError = `illegal base64 data at input byte ${at}`;
    else if (this.prune)
      this.replacement = Buffer.from(value.replace(/[\r\n]/g, ''), 'base64').toString('base64');
  }

  /** A value to store in place of the one just read (canonical base64), set by bytes(). */
  replacement: string | undefined;

  /** Puts the replacement of the value just read, if any, in its place. */
  private replace(holder: Record<string, unknown>, key: string): void {
    if (this.replacement === undefined) return;
    holder[key] = this.replacement;
    this.replacement = undefined;
  }

  object(obj: Record<string, unknown>, model: ModelType, path: string, goPath = path): void {
    const struct = goStructName(model);
    for (const key in obj) {
      const field = model.fields.get(key);
      const fieldPath = path === '' ? key : `${path}.${key}`;
      if (field === undefined) {
        this.unknown.push(fieldPath);
        if (this.prune) delete obj[key];
        continue;
      }
      const fieldGoPath = goPath === '' ? key : `${goPath}.${key}`;
      this.value(obj[key], field, fieldPath, struct, fieldGoPath);
      this.replace(obj, key);
      if (this.typeError !== undefined) return;
    }
  }
}

/** Go's zero value of a list item's type, as JSON; null where Go's is nil (maps, lists, any value). */
function zeroValue(node: TypeNode): unknown {
  switch (node.kind) {
    case 'model':
      return {};
    case 'string':
      return '';
    case 'integer':
    case 'number':
    case 'int-or-string':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/**
 * Reads obj as the model: the first type error, and the unknown fields, which are removed from obj unless
 * `prune` is false (a read-only look, for objects that are not decoded into the type).
 */
export function decodeTyped(obj: Record<string, unknown>, model: ModelType, prune = true): TypedDecodeResult {
  const walk = new Walk(prune);
  walk.object(obj, model, '');
  return walk.typeError === undefined
    ? { unknown: walk.unknown }
    : { typeError: walk.typeError, typeErrorAt: walk.typeErrorAt, unknown: walk.unknown };
}

// ---------------------------------------------------------------------------------------------------------
// ObjectMeta and DeleteOptions, described by hand. Like Go's decoder, the first wrong member in document order
// is reported.

/** How a Go type is checked: its name as Go prints it, and what it holds. */
type GoType =
  | { kind: 'string' | 'int64' | 'bool' | 'time'; name: string }
  | { kind: 'slice'; name: string; element: GoType }
  | { kind: 'map'; name: string; element: GoType }
  | { kind: 'struct'; name: string; struct: string; fields: Record<string, GoType> }
  | { kind: 'raw'; name: string };

const STRING: GoType = { kind: 'string', name: 'string' };
const INT64: GoType = { kind: 'int64', name: 'int64' };
const BOOL: GoType = { kind: 'bool', name: 'bool' };
/** metav1.Time unmarshals its JSON into a string first: a wrong type is reported against string. */
const TIME: GoType = { kind: 'time', name: 'string' };

const OWNER_REFERENCE: GoType = {
  kind: 'struct',
  name: 'v1.OwnerReference',
  struct: 'OwnerReference',
  fields: {
    apiVersion: STRING,
    kind: STRING,
    name: STRING,
    uid: { kind: 'string', name: 'types.UID' },
    controller: BOOL,
    blockOwnerDeletion: BOOL,
  },
};

const MANAGED_FIELDS_ENTRY: GoType = {
  kind: 'struct',
  name: 'v1.ManagedFieldsEntry',
  struct: 'ManagedFieldsEntry',
  fields: {
    manager: STRING,
    operation: { kind: 'string', name: 'v1.ManagedFieldsOperationType' },
    apiVersion: STRING,
    time: TIME,
    fieldsType: STRING,
    // FieldsV1 keeps its JSON as it is, whatever it is.
    fieldsV1: { kind: 'raw', name: 'v1.FieldsV1' },
    subresource: STRING,
  },
};

const OBJECT_META: GoType = {
  kind: 'struct',
  name: 'v1.ObjectMeta',
  struct: 'ObjectMeta',
  fields: {
    name: STRING,
    generateName: STRING,
    namespace: STRING,
    selfLink: STRING,
    uid: { kind: 'string', name: 'types.UID' },
    resourceVersion: STRING,
    generation: INT64,
    creationTimestamp: TIME,
    deletionTimestamp: TIME,
    deletionGracePeriodSeconds: INT64,
    labels: { kind: 'map', name: 'map[string]string', element: STRING },
    annotations: { kind: 'map', name: 'map[string]string', element: STRING },
    ownerReferences: { kind: 'slice', name: '[]v1.OwnerReference', element: OWNER_REFERENCE },
    finalizers: { kind: 'slice', name: '[]string', element: STRING },
    managedFields: { kind: 'slice', name: '[]v1.ManagedFieldsEntry', element: MANAGED_FIELDS_ENTRY },
  },
};

/** Whether a JSON value fits the Go type at its top level (its members are checked one by one). */
function fits(value: unknown, type: GoType): boolean {
  switch (type.kind) {
    case 'string':
    case 'time':
      return typeof value === 'string';
    case 'bool':
      return typeof value === 'boolean';
    case 'int64':
      return (
        typeof value === 'number' && Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT
      );
    case 'slice':
      return Array.isArray(value);
    case 'map':
    case 'struct':
      return isObject(value);
    case 'raw':
      return true;
  }
}

interface Context {
  /** The struct whose member is being decoded ('' for a value decoded on its own). */
  struct: string;
  /** The JSON member names from the decoded root down to here, as Go joins them. */
  path: string[];
}

function check(value: unknown, type: GoType, context: Context): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (!fits(value, type)) {
    // Into an integer Go quotes the number's literal, which JSON.parse did not keep: its shortest form.
    const found = type.kind === 'int64' && typeof value === 'number' ? `number ${value}` : jsonKind(value);
    const into =
      context.struct === '' && context.path.length === 0
        ? `Go value of type ${type.name}`
        : `Go struct field ${context.struct}.${context.path.join('.')} of type ${type.name}`;
    return `json: cannot unmarshal ${found} into ${into}`;
  }
  switch (type.kind) {
    case 'slice':
      for (const item of value as unknown[]) {
        const err = check(item, type.element, context);
        if (err) return err;
      }
      return undefined;
    case 'map':
      for (const key of Object.keys(value as object)) {
        const err = check((value as Record<string, unknown>)[key], type.element, context);
        if (err) return err;
      }
      return undefined;
    case 'struct':
      for (const key of Object.keys(value as object)) {
        const field = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
        // Unknown members are for field validation (Strict, Warn, Ignore), not a decode error.
        if (!field) continue;
        const err = check((value as Record<string, unknown>)[key], field, {
          struct: type.struct,
          path: [...context.path, key],
        });
        if (err) return err;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Go's decode error for an object whose apiVersion, kind or metadata has the wrong type, or undefined.
 * `structName` is the Go struct a built-in kind decodes into (ConfigMap); custom resources decode their
 * metadata on its own (apiextensions-apiserver's GetObjectMeta), so that their paths start inside it.
 */
export function objectMetaTypeError(
  obj: Record<string, unknown>,
  structName: string | undefined,
): string | undefined {
  for (const member of ['apiVersion', 'kind'] as const) {
    const value = obj[member];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      // The decoder reads the type first, into an anonymous struct (runtime/serializer/json's meta factory).
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(value)} into Go struct field .${member} of type string`;
    }
  }
  if (!Object.hasOwn(obj, 'metadata')) return undefined;
  return structName === undefined
    ? check(obj.metadata, OBJECT_META, { struct: '', path: [] })
    : check(obj.metadata, OBJECT_META, { struct: structName, path: ['metadata'] });
}

// Pointer fields (*bool, *int64, …) carry their element's name: Go's decoder follows the pointer before it
// stores the value, so that is the type its errors name.
const DELETE_OPTIONS: GoType = {
  kind: 'struct',
  name: 'v1.DeleteOptions',
  struct: 'DeleteOptions',
  fields: {
    apiVersion: STRING,
    kind: STRING,
    gracePeriodSeconds: { kind: 'int64', name: 'int64' },
    preconditions: {
      kind: 'struct',
      name: 'v1.Preconditions',
      struct: 'Preconditions',
      fields: {
        uid: { kind: 'string', name: 'types.UID' },
        resourceVersion: { kind: 'string', name: 'string' },
      },
    },
    orphanDependents: { kind: 'bool', name: 'bool' },
    propagationPolicy: { kind: 'string', name: 'v1.DeletionPropagation' },
    dryRun: { kind: 'slice', name: '[]string', element: STRING },
    ignoreStoreReadErrorWithClusterBreakingPotential: { kind: 'bool', name: 'bool' },
  },
};

/** Go's decode error for a DeleteOptions body of the wrong shape, or undefined. */
export function deleteOptionsTypeError(body: unknown): string | undefined {
  if (!isObject(body)) {
    if (body === null) return undefined;
    return `json: cannot unmarshal ${jsonKind(body)} into Go value of type v1.DeleteOptions`;
  }
  return check(body, DELETE_OPTIONS, { struct: '', path: [] });
}
