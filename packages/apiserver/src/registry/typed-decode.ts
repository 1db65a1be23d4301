import { goBase64ErrorAt } from './go-base64.ts';
import { goStructName, goTypeName, type ModelType, type TypeNode } from './kube-models.ts';
import { isBase64 } from './validation.ts';

/**
 * Reading a JSON object as a built-in kind the way kube-apiserver's decoder reads it into the kind's Go struct
 * (sigs.k8s.io/json, case-sensitive): a value of the wrong JSON type is the decoder's first error, worded as
 * Go's encoding/json words it; fields the type does not have are dropped, and reported with their paths for
 * fieldValidation. `null` decodes to the zero value of any type, as in Go.
 */

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
        for (let i = 0; i < value.length && this.typeError === undefined; i++)
          this.value(value[i], node.items, `${path}[${i}]`, struct, goPath);
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
