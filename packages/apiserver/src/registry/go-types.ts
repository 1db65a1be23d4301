import { isObject } from '@certkit/apimachinery';

/**
 * The types of request bodies' members, checked the way kube-apiserver's decoder checks them: it unmarshals
 * every request body into Go structs (ObjectMeta for the metadata of built-in and custom resources alike,
 * apiextensions-apiserver's GetObjectMeta), and a member of the wrong type fails the decode with
 * encoding/json's UnmarshalTypeError. The rest of the server may then take metadata's types for granted.
 *
 * The message is Go's (`json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers
 * of type []string`): the JSON type found, the struct holding the member, the member's path and its Go type.
 * Like Go's decoder, the first wrong member in document order is reported; null is a zero value, not an error.
 */

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

/** The JSON type as encoding/json names it in UnmarshalTypeError.Value. */
function jsonTypeName(value: unknown, intoInteger: boolean): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  // Into an integer Go quotes the number's literal, which JSON.parse did not keep: its shortest form.
  if (typeof value === 'number') return intoInteger ? `number ${value}` : 'number';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

const INT64_LIMIT = 2 ** 63;

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
    const found = jsonTypeName(value, type.kind === 'int64' && typeof value === 'number');
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
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(value, false)} into Go struct field .${member} of type string`;
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
    return `json: cannot unmarshal ${jsonTypeName(body, false)} into Go value of type v1.DeleteOptions`;
  }
  return check(body, DELETE_OPTIONS, { struct: '', path: [] });
}
