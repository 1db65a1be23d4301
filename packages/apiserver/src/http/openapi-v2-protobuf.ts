import { stringify } from 'yaml';
import { ProtoWriter } from './proto-writer.ts';

/**
 * The Swagger 2.0 document of /openapi/v2 as the protobuf message kubectl asks for
 * (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's `openapi.v2.Document`, which
 * kube-openapi marshals from the same JSON. kubectl reads it when a kind is missing from OpenAPI v3 (a typo'd
 * kind or apiVersion in `kubectl apply`) and for `kubectl explain --output=plaintext-openapiv2`; a 406 there
 * made kubectl fail with "failed to download openapi" instead of naming the unknown kind.
 *
 * Field numbers are from gnostic's openapiv2/OpenAPIv2.proto. Free-form values (`default`, `example`, `enum`
 * members, `x-*` vendor extensions) are an `Any` holding the value's YAML text, as gnostic's compiler stores
 * them and kube-openapi's reader parses them back. Schema keywords Swagger 2.0 has no field for (OpenAPI v3's
 * `nullable`, `oneOf`, `anyOf`, `not`, which a CRD's schema may carry) are left out, as kube-apiserver leaves
 * them out of the v2 document it publishes for CRDs.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s) => typeof s === 'string') : []);

/** gnostic `Any`: field 2 is the value as YAML. */
function any(value: unknown): ProtoWriter {
  return new ProtoWriter().string(2, stringify(value));
}

/** The `x-*` keys of an object as repeated `NamedAny` (name 1, value 2). */
function vendorExtensions(w: ProtoWriter, field: number, obj: Json): void {
  for (const [key, value] of Object.entries(obj)) {
    if (key.startsWith('x-')) w.message(field, new ProtoWriter().string(1, key).message(2, any(value)));
  }
}

/** A `Named<Message>` pair: name 1, value 2. */
function named(name: string, value: ProtoWriter): ProtoWriter {
  return new ProtoWriter().string(1, name).message(2, value);
}

function schema(s: Json): ProtoWriter {
  const w = new ProtoWriter()
    .string(1, str(s.$ref))
    .string(2, str(s.format))
    .string(3, str(s.title))
    .string(4, str(s.description));
  if (s.default !== undefined) w.message(5, any(s.default));
  w.double(6, num(s.multipleOf))
    .double(7, num(s.maximum))
    .bool(8, bool(s.exclusiveMaximum))
    .double(9, num(s.minimum))
    .bool(10, bool(s.exclusiveMinimum))
    .int64(11, num(s.maxLength))
    .int64(12, num(s.minLength))
    .string(13, str(s.pattern))
    .int64(14, num(s.maxItems))
    .int64(15, num(s.minItems))
    .bool(16, bool(s.uniqueItems))
    .int64(17, num(s.maxProperties))
    .int64(18, num(s.minProperties));
  for (const name of strings(s.required)) w.string(19, name);
  if (Array.isArray(s.enum)) for (const value of s.enum) w.message(20, any(value));
  // AdditionalPropertiesItem: a schema (1) or a boolean (2).
  if (isObject(s.additionalProperties))
    w.message(21, new ProtoWriter().message(1, schema(s.additionalProperties)));
  else if (typeof s.additionalProperties === 'boolean')
    w.message(21, new ProtoWriter().oneofBool(2, s.additionalProperties));
  // TypeItem: the type name, or names.
  const types = typeof s.type === 'string' ? [s.type] : strings(s.type);
  if (types.length > 0) {
    const t = new ProtoWriter();
    for (const type of types) t.string(1, type);
    w.message(22, t);
  }
  // ItemsItem: one schema, or a tuple's.
  const items = isObject(s.items) ? [s.items] : Array.isArray(s.items) ? s.items.filter(isObject) : [];
  if (items.length > 0) {
    const i = new ProtoWriter();
    for (const item of items) i.message(1, schema(item));
    w.message(23, i);
  }
  if (Array.isArray(s.allOf)) for (const part of s.allOf.filter(isObject)) w.message(24, schema(part));
  if (isObject(s.properties)) {
    const p = new ProtoWriter();
    for (const [name, value] of Object.entries(s.properties))
      if (isObject(value)) p.message(1, named(name, schema(value)));
    w.message(25, p);
  }
  w.string(26, str(s.discriminator)).bool(27, bool(s.readOnly));
  if (s.example !== undefined) w.message(30, any(s.example));
  vendorExtensions(w, 31, s);
  return w;
}

/**
 * A non-body parameter. Query and formData sub-schemas share one numbering, header and path another (no
 * `allowEmptyValue`, so one less); `items` and the validation keywords are not in this server's parameters.
 */
function nonBodyParameter(p: Json): ProtoWriter | undefined {
  const where = str(p.in);
  const oneof = { header: 1, formData: 2, query: 3, path: 4 }[where ?? ''];
  if (oneof === undefined) return undefined;
  const shift = where === 'query' || where === 'formData' ? 1 : 0;
  const w = new ProtoWriter()
    .bool(1, bool(p.required))
    .string(2, where)
    .string(3, str(p.description))
    .string(4, str(p.name));
  if (shift) w.bool(5, bool(p.allowEmptyValue));
  w.string(5 + shift, str(p.type))
    .string(6 + shift, str(p.format))
    .string(8 + shift, str(p.collectionFormat))
    .bool(19 + shift, bool(p.uniqueItems));
  vendorExtensions(w, 22 + shift, p);
  return new ProtoWriter().message(oneof, w);
}

/** ParametersItem → Parameter → body (1) or non-body (2). */
function parameter(p: Json): ProtoWriter | undefined {
  let param: ProtoWriter | undefined;
  if (p.in === 'body') {
    const body = new ProtoWriter()
      .string(1, str(p.description))
      .string(2, str(p.name))
      .string(3, 'body')
      .bool(4, bool(p.required));
    if (isObject(p.schema)) body.message(5, schema(p.schema));
    vendorExtensions(body, 6, p);
    param = new ProtoWriter().message(1, body);
  } else {
    const nonBody = nonBodyParameter(p);
    if (nonBody) param = new ProtoWriter().message(2, nonBody);
  }
  return param && new ProtoWriter().message(1, param);
}

function responses(r: Json): ProtoWriter {
  const w = new ProtoWriter();
  for (const [code, value] of Object.entries(r)) {
    if (!isObject(value) || code.startsWith('x-')) continue;
    const response = new ProtoWriter().string(1, str(value.description));
    if (isObject(value.schema)) response.message(2, new ProtoWriter().message(1, schema(value.schema)));
    vendorExtensions(response, 5, value);
    w.message(1, named(code, new ProtoWriter().message(1, response)));
  }
  vendorExtensions(w, 2, r);
  return w;
}

function operation(op: Json): ProtoWriter {
  const w = new ProtoWriter();
  for (const tag of strings(op.tags)) w.string(1, tag);
  w.string(2, str(op.summary)).string(3, str(op.description)).string(5, str(op.operationId));
  for (const type of strings(op.produces)) w.string(6, type);
  for (const type of strings(op.consumes)) w.string(7, type);
  if (Array.isArray(op.parameters))
    for (const p of op.parameters.filter(isObject)) {
      const item = parameter(p);
      if (item) w.message(8, item);
    }
  if (isObject(op.responses)) w.message(9, responses(op.responses));
  for (const scheme of strings(op.schemes)) w.string(10, scheme);
  w.bool(11, bool(op.deprecated));
  vendorExtensions(w, 13, op);
  return w;
}

const OPERATION_FIELDS = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 } as const;

function pathItem(item: Json): ProtoWriter {
  const w = new ProtoWriter().string(1, str(item.$ref));
  for (const [method, field] of Object.entries(OPERATION_FIELDS)) {
    const op = item[method];
    if (isObject(op)) w.message(field, operation(op));
  }
  vendorExtensions(w, 10, item);
  return w;
}

/** Encodes a Swagger 2.0 document (as /openapi/v2 serves it in JSON) as gnostic's `openapi.v2.Document`. */
export function encodeSwaggerProtobuf(doc: Json): Buffer {
  const w = new ProtoWriter().string(1, str(doc.swagger));
  if (isObject(doc.info)) {
    const info = new ProtoWriter()
      .string(1, str(doc.info.title))
      .string(2, str(doc.info.version))
      .string(3, str(doc.info.description));
    vendorExtensions(info, 7, doc.info);
    w.message(2, info);
  }
  w.string(3, str(doc.host)).string(4, str(doc.basePath));
  for (const scheme of strings(doc.schemes)) w.string(5, scheme);
  for (const type of strings(doc.consumes)) w.string(6, type);
  for (const type of strings(doc.produces)) w.string(7, type);
  if (isObject(doc.paths)) {
    const paths = new ProtoWriter();
    vendorExtensions(paths, 1, doc.paths);
    for (const [path, item] of Object.entries(doc.paths))
      if (!path.startsWith('x-') && isObject(item)) paths.message(2, named(path, pathItem(item)));
    w.message(8, paths);
  }
  if (isObject(doc.definitions)) {
    const definitions = new ProtoWriter();
    for (const [name, value] of Object.entries(doc.definitions))
      if (isObject(value)) definitions.message(1, named(name, schema(value)));
    w.message(9, definitions);
  }
  vendorExtensions(w, 16, doc);
  return w.toBuffer();
}
