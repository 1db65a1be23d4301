/**
 * Custom resources against their CRD's structural OpenAPI v3 schema, as apiextensions-apiserver does it:
 * prune unknown fields, drop nulls the schema cannot hold, apply defaults, then validate. Validation
 * mirrors kube-openapi's validator and apiextensions' translation of its errors into field errors, so the
 * messages users see (`spec.replicas: Invalid value: "string": spec.replicas in body must be of type
 * integer: "string"`) are the ones kube-apiserver prints, including its paths: `spec.items[0].name` for list
 * items and `spec.labels.key` for additionalProperties values (kube-openapi joins map keys with a dot;
 * only the list-type checks write `spec.labels[key]`).
 *
 * `x-kubernetes-validations` (CEL rules) are compiled and evaluated by ../schema/cel/.
 */

import { isIPv6 as isIPv6Address } from 'node:net';
import {
  type CauseType,
  cloneJson,
  type FieldError,
  formatFieldError,
  getOwn,
  isObject,
  jsonEqual,
  type JsonObject,
  setOwn,
} from '@certkit/apimachinery';
import { isBase64 } from './validation.ts';

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps a structural schema uses. */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: boolean | JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  /** CEL rules: accepted, never evaluated. */
  'x-kubernetes-validations'?: unknown[];
}

/** Fields every resource has that the schema neither prunes, defaults nor validates at the root. */
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

// ---------------------------------------------------------------------------------------------------------
// JSON helpers

function ownSchema(
  map: Record<string, JSONSchemaProps> | undefined,
  key: string,
): JSONSchemaProps | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** JSON with object members sorted, as Go's json.Marshal writes maps: equal values give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Integers within int64 decode to int64 in Go (and print as integers); other numbers are float64. */
function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

/** Formats a float64 as Go's `%v` does: shortest digits, exponent form below 1e-4 and from 1e6. */
function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return String(value);
  const magnitude = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude}`;
}

/** Go's `%q` for the strings kube-openapi quotes. */
function quote(text: string): string {
  return JSON.stringify(text);
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

// ---------------------------------------------------------------------------------------------------------
// Pruning

function isEmbedded(schema: JSONSchemaProps | undefined): boolean {
  return schema?.['x-kubernetes-embedded-resource'] === true;
}

function preservesUnknown(schema: JSONSchemaProps | undefined): boolean {
  return schema?.['x-kubernetes-preserve-unknown-fields'] === true;
}

/** The schema for values of keys not in `properties`, or undefined when such keys are unknown fields. */
function additionalSchema(schema: JSONSchemaProps): { schema: JSONSchemaProps | undefined } | undefined {
  const additional = schema.additionalProperties;
  if (additional === undefined) return undefined;
  // A boolean additionalProperties keeps the keys but gives their values no schema, so objects inside
  // them are emptied by pruning (structural pruning treats "no schema" as "nothing is known").
  return { schema: typeof additional === 'boolean' ? undefined : additional };
}

/**
 * Removes fields the schema does not specify, in place. Embedded resources (and the root, which is
 * one) keep apiVersion, kind and metadata; under x-kubernetes-preserve-unknown-fields unknown fields stay
 * while known ones are still pruned below.
 */
function prune(
  value: unknown,
  schema: JSONSchemaProps | undefined,
  embedded: boolean,
  path = '',
  removed?: string[],
): void {
  if (preservesUnknown(schema)) {
    pruneKnownOnly(value, schema!, embedded, path, removed);
    return;
  }
  if (Array.isArray(value)) {
    const items = schema?.items;
    const embeddedItems = isEmbedded(items);
    for (let i = 0; i < value.length; i++) {
      prune(value[i], items, embeddedItems, removed ? `${path}[${i}]` : '', removed);
    }
    return;
  }
  if (!isObject(value)) return;
  if (schema === undefined) {
    for (const key of Object.keys(value)) {
      removed?.push(join(path, key));
      delete value[key];
    }
    return;
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    // Paths are only built when someone collects them: admission itself prunes without.
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      prune(value[key], property, isEmbedded(property), removed ? join(path, key) : '', removed);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      prune(value[key], sub, isEmbedded(sub), removed ? join(path, key) : '', removed);
    } else {
      removed?.push(join(path, key));
      delete value[key];
    }
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function pruneKnownOnly(
  value: unknown,
  schema: JSONSchemaProps,
  embedded: boolean,
  path: string,
  removed?: string[],
): void {
  if (Array.isArray(value)) {
    // Upstream keeps skipping unknown fields through the items of a preserving array.
    if (schema.items !== undefined) {
      const items = schema.items;
      const embeddedItems = isEmbedded(items);
      for (let i = 0; i < value.length; i++) {
        pruneKnownOnly(value[i], items, embeddedItems, removed ? `${path}[${i}]` : '', removed);
      }
    }
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      prune(value[key], property, isEmbedded(property), removed ? join(path, key) : '', removed);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      prune(value[key], sub, isEmbedded(sub), removed ? join(path, key) : '', removed);
    }
  }
}

/**
 * The paths prune() would remove, found without changing (or copying) the value: what fieldValidation
 * reports, on every write. Mirrors prune and pruneKnownOnly step for step, so the paths and their order
 * are the same.
 */
function unknownPaths(
  value: unknown,
  schema: JSONSchemaProps | undefined,
  embedded: boolean,
  path: string,
  found: string[],
): void {
  if (preservesUnknown(schema)) {
    unknownPathsKnownOnly(value, schema!, embedded, path, found);
    return;
  }
  if (Array.isArray(value)) {
    const items = schema?.items;
    const embeddedItems = isEmbedded(items);
    for (let i = 0; i < value.length; i++)
      unknownPaths(value[i], items, embeddedItems, `${path}[${i}]`, found);
    return;
  }
  if (!isObject(value)) return;
  if (schema === undefined) {
    for (const key of Object.keys(value)) found.push(join(path, key));
    return;
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      unknownPaths(value[key], property, isEmbedded(property), join(path, key), found);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      unknownPaths(value[key], sub, isEmbedded(sub), join(path, key), found);
    } else {
      found.push(join(path, key));
    }
  }
}

function unknownPathsKnownOnly(
  value: unknown,
  schema: JSONSchemaProps,
  embedded: boolean,
  path: string,
  found: string[],
): void {
  if (Array.isArray(value)) {
    if (schema.items !== undefined) {
      const items = schema.items;
      const embeddedItems = isEmbedded(items);
      for (let i = 0; i < value.length; i++) {
        unknownPathsKnownOnly(value[i], items, embeddedItems, `${path}[${i}]`, found);
      }
    }
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      unknownPaths(value[key], property, isEmbedded(property), join(path, key), found);
    } else if (additional !== undefined) {
      const sub = additional.schema;
      unknownPaths(value[key], sub, isEmbedded(sub), join(path, key), found);
    }
  }
}

/**
 * The unknown fields admission would prune from a custom resource (the `pruned` of admitCustomResource),
 * for fieldValidation=Strict and Warn, without copying or changing the object.
 */
export function unknownCustomResourceFields(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): string[] {
  const found: string[] = [];
  unknownPaths(object, schema, true, '', found);
  return found;
}

function fieldSchema(schema: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  if (schema === undefined) return undefined;
  return ownSchema(schema.properties, key) ?? additionalSchema(schema)?.schema;
}

/**
 * Drops `null` members whose schema neither allows null nor has a default (a default replaces them
 * instead), as kube-apiserver does after pruning: such nulls mean "unset" to a typed client.
 */
function pruneNulls(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, schema?.items, false);
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const sub = fieldSchema(schema, key);
    if (value[key] === null && sub !== undefined && !sub.nullable && sub.default === undefined)
      delete value[key];
    else pruneNulls(value[key], sub, false);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Defaulting

function defaultValue(schema: JSONSchemaProps): unknown {
  // A default is pruned like data (CRD validation already insists it has no unknown fields).
  const value = structuredClone(schema.default);
  prune(value, schema, isEmbedded(schema));
  return value;
}

function needsDefault(value: unknown, schema: JSONSchemaProps | undefined): schema is JSONSchemaProps {
  return value === null && schema !== undefined && !schema.nullable && schema.default !== undefined;
}

/**
 * Fills missing fields (and non-nullable nulls) with their schema default, in place, then recurses, so
 * that defaults nested inside a default, inside list items and inside map values apply too.
 */
function applyDefaults(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (needsDefault(value[i], schema.items)) value[i] = defaultValue(schema.items);
      applyDefaults(value[i], schema.items, false);
    }
    return;
  }
  if (!isObject(value)) return;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (property.default === undefined || (root && META_FIELDS.has(key))) continue;
    if (!Object.hasOwn(value, key) || needsDefault(value[key], property))
      setOwn(value, key, defaultValue(property));
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) {
      applyDefaults(value[key], property, false);
    } else if (additional?.schema !== undefined) {
      if (needsDefault(value[key], additional.schema)) setOwn(value, key, defaultValue(additional.schema));
      applyDefaults(value[key], additional.schema, false);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Validation, following kube-openapi's SchemaValidator semantics. Issues carry the validator's own name
// for the value (`spec.items[0].name`) and message; `toFieldErrors` then does what apiextensions'
// kubeOpenAPIResultToFieldErrors does.

type IssueCode =
  | 'type'
  | 'required'
  | 'tooLong'
  | 'enum'
  | 'maxItems'
  | 'tooManyProperties'
  /** Everything else becomes a FieldValueInvalid carrying the validator's message. */
  | 'invalid';

interface FieldIssue {
  kind: 'field';
  code: IssueCode;
  /** kube-openapi's path of the value, e.g. `spec.items[0]`; a leading dot is dropped when converting. */
  name: string;
  message: string;
  /** The offending value; undefined stands for Go's nil. */
  value?: unknown;
  /** The limit a TooLong / TooMany error names. */
  limit?: number;
  /** The allowed values of an enum. */
  values?: readonly unknown[];
}

/** Errors kube-openapi raises without a field (anyOf, oneOf, allOf, not, number range conversions). */
interface PlainIssue {
  kind: 'plain';
  message: string;
}

type Issue = FieldIssue | PlainIssue;

/**
 * What a check returns when it finds nothing. Shared, since most checks of most values find nothing and
 * every write validates its whole object; never pushed to (callers copy issues into their own array).
 */
const NO_ISSUES: readonly Issue[] = Object.freeze([]);

function appendIssues(to: Issue[], from: readonly Issue[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]);
}

function inBody(name: string, rest: string): string {
  return `${name} in body ${rest}`;
}

function invalidType(name: string, typeName: string, actual: string): FieldIssue {
  return {
    kind: 'field',
    code: 'type',
    name,
    value: actual,
    message: inBody(name, `must be of type ${typeName}: ${quote(actual)}`),
  };
}

function invalid(name: string, value: unknown, message: string): FieldIssue {
  return { kind: 'field', code: 'invalid', name, value, message };
}

interface JsonType {
  readonly type: string;
  readonly format: string;
}

// Constants, so that typing a value allocates nothing.
const BOOLEAN_TYPE: JsonType = { type: 'boolean', format: '' };
const STRING_TYPE: JsonType = { type: 'string', format: '' };
const INTEGER_TYPE: JsonType = { type: 'integer', format: 'int64' };
const NUMBER_TYPE: JsonType = { type: 'number', format: 'float64' };
const ARRAY_TYPE: JsonType = { type: 'array', format: '' };
const OBJECT_TYPE: JsonType = { type: 'object', format: '' };

/** The JSON type kube-openapi infers for a decoded value, with the Go format it implies for numbers. */
function jsonTypeOf(value: unknown): JsonType {
  if (typeof value === 'boolean') return BOOLEAN_TYPE;
  if (typeof value === 'string') return STRING_TYPE;
  if (typeof value === 'number') return isInt64(value) ? INTEGER_TYPE : NUMBER_TYPE;
  if (Array.isArray(value)) return ARRAY_TYPE;
  return OBJECT_TYPE;
}

const NO_TYPES: readonly string[] = Object.freeze([]);
const INT_OR_STRING_TYPES: readonly string[] = Object.freeze(['integer', 'string']);
/** One frozen list per type name: schemas name a handful of types, and validation asks on every value. */
const singleTypes = new Map<string, readonly string[]>();

function schemaTypes(schema: JSONSchemaProps): readonly string[] {
  if (schema['x-kubernetes-int-or-string']) return INT_OR_STRING_TYPES;
  const type = schema.type;
  if (!type) return NO_TYPES;
  let types = singleTypes.get(type);
  if (types === undefined) {
    types = Object.freeze([type]);
    singleTypes.set(type, types);
  }
  return types;
}

// String formats apiextensions validates (validation/formats.go), by name with dashes removed as the
// format registry normalizes them. isbn and creditcard are supported upstream but not checked here.
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const EMAIL = /^(?:[^\s@<>]+@[^\s@<>]+|[^<>]*<[^\s@<>]+@[^\s@<>]+>)$/;
const IPV4_SLOPPY = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const MAC =
  /^(?:[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){7}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){19}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){2}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){3}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){9})$/i;
const GO_DURATION = /^[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;
const LOOSE_DURATION = /(\d+)\s*([A-Za-zµ]+)/g;
const DURATION_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];
const K8S_SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const K8S_LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGB_COLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(Number(match[1]), month);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * As `new Date(Date.UTC(year, month, 0)).getUTCDate()`, which this replaces on every date validated:
 * proleptic Gregorian leap years, with years 0 to 99 read as 1900 to 1999 as Date.UTC reads them.
 */
function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1];
  const y = year <= 99 ? 1900 + year : year;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/**
 * The date up to the first `t`, the time (lower-cased) up to the next, in either case; anything after a
 * second `t` is ignored. As splitting the lower-cased text on `t` would read it, without the copies.
 */
function isDateTime(text: string): boolean {
  if (text.length < 4) return false;
  const t = dateTimeSeparator(text, 0);
  if (t < 0 || !isDate(text.slice(0, t))) return false;
  const end = dateTimeSeparator(text, t + 1);
  const match = TIME_OF_DAY.exec(text.slice(t + 1, end < 0 ? text.length : end).toLowerCase());
  return match !== null && match[1] <= '23' && match[2] <= '59' && match[3] <= '59';
}

function dateTimeSeparator(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x74 || c === 0x54) return i;
  }
  return -1;
}

function isIPv4(text: string): boolean {
  const match = IPV4_SLOPPY.exec(text);
  if (match) return match.slice(1).every((part) => Number(part) <= 255);
  // Go's ParseIP also reads IPv4-mapped IPv6 addresses; the format only asks for a dot.
  return isIPv6(text) && text.includes('.');
}

function isIPv6(text: string): boolean {
  // Go's ParseIP takes no zone suffix.
  return !text.includes('%') && isIPv6Address(text);
}

function isCidr(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const address = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  if (IPV4_SLOPPY.test(address)) return isIPv4(address) && Number(prefix) <= 32;
  return isIPv6(address) && Number(prefix) <= 128;
}

function isHostname(text: string): boolean {
  if (!HOSTNAME.test(text) || Buffer.byteLength(text) > 255) return false;
  return text.split('.').every((label) => Buffer.byteLength(label) <= 63);
}

function isUri(text: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path.
  if (text.startsWith('/')) return !/\s/.test(text);
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text) && URL.canParse(text);
}

function isDuration(text: string): boolean {
  if (GO_DURATION.test(text)) return true;
  // kube-openapi falls back to a lenient "<number> <unit>" reading (e.g. "3 days").
  for (const match of text.matchAll(LOOSE_DURATION)) {
    const unit = match[2].toLowerCase().trim();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((variant, i) => unit === variant || (i === last && unit.startsWith(variant))))
        return true;
    }
  }
  return false;
}

const stringFormats: Readonly<Record<string, (text: string) => boolean>> = {
  bsonobjectid: (text) => /^[0-9a-fA-F]{24}$/.test(text),
  uri: isUri,
  email: (text) => EMAIL.test(text),
  hostname: isHostname,
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCidr,
  mac: (text) => MAC.test(text),
  uuid: (text) => UUID.test(text),
  uuid3: (text) => UUID3.test(text),
  uuid4: (text) => UUID4.test(text),
  uuid5: (text) => UUID5.test(text),
  isbn: () => true,
  isbn10: () => true,
  isbn13: () => true,
  creditcard: () => true,
  ssn: (text) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(text),
  hexcolor: (text) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(text),
  rgbcolor: (text) => RGB_COLOR.test(text),
  byte: (text) => text !== '' && isBase64(text),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (text) => text.length <= 63 && K8S_SHORT_NAME.test(text),
  k8slongname: (text) => text.length <= 253 && K8S_LONG_NAME.test(text),
};

/** Validators by format as schemas spell it (asked for twice per formatted string, on every write). */
const formatValidators = new Map<string, ((text: string) => boolean) | undefined>();

function stringFormatValidator(format: string): ((text: string) => boolean) | undefined {
  if (formatValidators.has(format)) return formatValidators.get(format);
  const normalized = format.replaceAll('-', '');
  const validator = Object.hasOwn(stringFormats, normalized) ? stringFormats[normalized] : undefined;
  formatValidators.set(format, validator);
  return validator;
}

/**
 * The format the validator sees: apiextensions strips formats it does not support for the type (an
 * unknown format is ignored, as kube does), keeping int32/int64 for integers and float/double for numbers.
 */
function effectiveFormat(schema: JSONSchemaProps): string {
  const format = schema.format;
  if (!format) return '';
  const type = schema['x-kubernetes-int-or-string'] ? '' : (schema.type ?? '');
  switch (type) {
    case '':
    case 'string':
      return stringFormatValidator(format) ? format : '';
    case 'integer':
      return format === 'int32' || format === 'int64' ? format : '';
    case 'number':
      return format === 'float' || format === 'double' ? format : '';
    default:
      return '';
  }
}

function validateType(value: unknown, schema: JSONSchemaProps, name: string): readonly Issue[] {
  const types = schemaTypes(schema);
  const format = effectiveFormat(schema);
  if (types.length === 0 && !format) return NO_ISSUES;
  if (value === null) {
    return types.length > 0 && !schema.nullable ? [invalidType(name, types.join(','), 'null')] : NO_ISSUES;
  }
  const actual = jsonTypeOf(value);
  const integerAsNumber = actual.type === 'integer' && types.includes('number');
  if (actual.type !== 'string' && actual.type !== 'array' && format) {
    if (!(types.includes(actual.type) || actual.format === format || integerAsNumber)) {
      return [invalidType(name, format, actual.format)];
    }
  }
  if (types.length > 0 && !(types.includes(actual.type) || integerAsNumber)) {
    return [invalidType(name, types.join(','), actual.type)];
  }
  return NO_ISSUES;
}

function validateCombinators(value: unknown, schema: JSONSchemaProps, name: string): readonly Issue[] {
  if (
    schema.anyOf === undefined &&
    schema.oneOf === undefined &&
    schema.allOf === undefined &&
    schema.not === undefined
  ) {
    return NO_ISSUES;
  }
  const issues: Issue[] = [];
  // Upstream reports the failures of the alternative that matched best; "fewest errors" stands in for
  // its internal match counting.
  if (schema.anyOf?.length) {
    let best: Issue[] | undefined;
    let matched = false;
    for (const alternative of schema.anyOf) {
      const result = validateValue(value, alternative, name);
      if (result.length === 0) {
        matched = true;
        best = undefined;
        break;
      }
      if (best === undefined || result.length < best.length) best = result;
    }
    if (!matched)
      issues.push({ kind: 'plain', message: `${quote(name)} must validate at least one schema (anyOf)` });
    if (best) issues.push(...best);
  }
  if (schema.oneOf?.length) {
    let best: Issue[] | undefined;
    let valid = 0;
    for (const alternative of schema.oneOf) {
      const result = validateValue(value, alternative, name);
      if (result.length === 0) {
        valid++;
        best = undefined;
      } else if (valid === 0 && (best === undefined || result.length < best.length)) {
        best = result;
      }
    }
    if (valid !== 1) {
      const found = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      issues.push({
        kind: 'plain',
        message: `${quote(name)} must validate one and only one schema (oneOf). ${found}`,
      });
      if (best) issues.push(...best);
    }
  }
  if (schema.allOf?.length) {
    let valid = 0;
    for (const part of schema.allOf) {
      const result = validateValue(value, part, name);
      if (result.length === 0) valid++;
      issues.push(...result);
    }
    if (valid !== schema.allOf.length) {
      const none = valid === 0 ? '. None validated' : '';
      issues.push({ kind: 'plain', message: `${quote(name)} must validate all the schemas (allOf)${none}` });
    }
  }
  if (schema.not !== undefined && validateValue(value, schema.not, name).length === 0) {
    issues.push({ kind: 'plain', message: `${quote(name)} must not validate the schema (not)` });
  }
  return issues;
}

const patternCache = new Map<string, RegExp | Error>();

function compilePattern(pattern: string): RegExp | Error {
  let compiled = patternCache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, 'u');
    } catch (e) {
      compiled = e as Error;
    }
    patternCache.set(pattern, compiled);
  }
  return compiled;
}

function validateString(value: string, schema: JSONSchemaProps, name: string): readonly Issue[] {
  // kube-openapi stops at the first failing string check.
  if (schema.maxLength === undefined && schema.minLength === undefined && schema.pattern === undefined) {
    return NO_ISSUES;
  }
  // Counting code points walks the string: only when a length is constrained.
  const length = schema.maxLength === undefined && schema.minLength === undefined ? 0 : codePoints(value);
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    return [
      {
        kind: 'field',
        code: 'tooLong',
        name,
        value,
        limit: schema.maxLength,
        message: inBody(name, `should be at most ${schema.maxLength} chars long`),
      },
    ];
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    return [invalid(name, value, inBody(name, `should be at least ${schema.minLength} chars long`))];
  }
  if (schema.pattern !== undefined) {
    const pattern = compilePattern(schema.pattern);
    if (pattern instanceof Error) {
      return [
        invalid(
          name,
          value,
          inBody(name, `should match '${schema.pattern}, but pattern is invalid: ${pattern.message}'`),
        ),
      ];
    }
    if (!pattern.test(value)) return [invalid(name, value, inBody(name, `should match '${schema.pattern}'`))];
  }
  return NO_ISSUES;
}

function validateFormat(value: string, schema: JSONSchemaProps, name: string): readonly Issue[] {
  if (!schema.format) return NO_ISSUES;
  const format = effectiveFormat(schema);
  if (!format || schema.type === 'integer' || schema.type === 'number') return NO_ISSUES;
  const check = stringFormatValidator(format);
  if (check === undefined || check(value)) return NO_ISSUES;
  return [
    {
      kind: 'field',
      code: 'type',
      name,
      value,
      message: inBody(name, `must be of type ${format}: ${quote(value)}`),
    },
  ];
}

/** Whether a number fits the schema's type and format, as kube-openapi's IsValueValidAgainstRange. */
function fitsNumericType(value: number, type: string, format: string): boolean {
  if (type === 'integer') {
    if (!isInt64(value)) return false;
    return format !== 'int32' || (value >= -(2 ** 31) && value < 2 ** 31);
  }
  if (type === 'number' && format === 'float') return Math.abs(value) <= 3.4028234663852886e38;
  return true;
}

function validateNumber(value: number, schema: JSONSchemaProps, name: string): Issue[] {
  const issues: Issue[] = [];
  const single = schema['x-kubernetes-int-or-string'] ? '' : (schema.type ?? '');
  const type = single === 'integer' || single === 'number' ? single : '';
  const format = type ? effectiveFormat(schema) : '';
  if (type && !fitsNumericType(value, type, format)) {
    const described = format ? `${type} with format ${format}` : `${type} (default format)`;
    issues.push({ kind: 'plain', message: `Checked value must be of type ${described} in ${name}` });
  }
  // An integer against an integral bound compares as integers and prints the bound as one; anything else
  // compares in float64 and prints the bound as Go prints floats. (kube-openapi truncates a fractional
  // bound to int64 when the value is an integer, which wrongly rejects e.g. 2 for multipleOf 0.5; the
  // float comparison is the intended semantics.) kube-openapi also reports a bound that does not fit the
  // schema's type on every value; a CRD author's mistake, not the user's, so it is not repeated here.
  const integral = isInt64(value);
  const asInteger = (bound: number) => integral && Number.isInteger(bound);
  const show = (bound: number) => (asInteger(bound) ? String(Math.trunc(bound)) : goFloat(bound));

  if (schema.multipleOf !== undefined) {
    const factor = asInteger(schema.multipleOf) ? Math.trunc(schema.multipleOf) : schema.multipleOf;
    if (factor <= 0) {
      issues.push(
        invalid(name, factor, `factor MultipleOf declared for ${name} must be positive: ${show(factor)}`),
      );
    } else {
      const quotient = factor < 1 ? (1 / factor) * value : value / factor;
      const whole = asInteger(schema.multipleOf)
        ? value % factor === 0
        : Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient));
      if (!whole) issues.push(invalid(name, value, inBody(name, `should be a multiple of ${show(factor)}`)));
    }
  }
  if (schema.minimum !== undefined) {
    const bound = asInteger(schema.minimum) ? Math.trunc(schema.minimum) : schema.minimum;
    const exclusive = schema.exclusiveMinimum === true;
    if (exclusive ? value <= bound : value < bound) {
      const relation = exclusive ? 'greater than' : 'greater than or equal to';
      issues.push(invalid(name, value, inBody(name, `should be ${relation} ${show(schema.minimum)}`)));
    }
  }
  if (schema.maximum !== undefined) {
    const bound = asInteger(schema.maximum) ? Math.trunc(schema.maximum) : schema.maximum;
    const exclusive = schema.exclusiveMaximum === true;
    if (exclusive ? value >= bound : value > bound) {
      const relation = exclusive ? 'less than' : 'less than or equal to';
      issues.push(invalid(name, value, inBody(name, `should be ${relation} ${show(schema.maximum)}`)));
    }
  }
  return issues;
}

function validateArray(value: unknown[], schema: JSONSchemaProps, name: string): readonly Issue[] {
  const issues: Issue[] = [];
  const items = schema.items;
  if (items !== undefined) {
    for (let i = 0; i < value.length; i++) collectIssues(value[i], items, `${name}[${i}]`, issues);
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    issues.push(invalid(name, value.length, inBody(name, `should have at least ${schema.minItems} items`)));
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    issues.push({
      kind: 'field',
      code: 'maxItems',
      name,
      value: value.length,
      limit: schema.maxItems,
      message: inBody(name, `should have at most ${schema.maxItems} items`),
    });
  }
  if (
    schema.uniqueItems &&
    value.some((item, i) => value.slice(0, i).some((seen) => jsonEqual(seen, item)))
  ) {
    issues.push(invalid(name, undefined, inBody(name, `shouldn't contain duplicates`)));
  }
  return issues;
}

function validateEnum(value: unknown, schema: JSONSchemaProps, name: string): readonly Issue[] {
  if (!schema.enum?.length) return NO_ISSUES;
  // A null never matches, not even a null enum member (kube-openapi skips untyped enum values).
  if (value !== null && schema.enum.some((allowed) => allowed !== null && jsonEqual(allowed, value)))
    return NO_ISSUES;
  return [
    {
      kind: 'field',
      code: 'enum',
      name,
      value: value === null ? undefined : value,
      values: schema.enum,
      message: inBody(name, `should be one of ${JSON.stringify(schema.enum)}`),
    },
  ];
}

function childName(name: string, key: string): string {
  return name === '' ? key : `${name}.${key}`;
}

function validateObject(value: JsonObject, schema: JSONSchemaProps, name: string, issues: Issue[]): void {
  const keys = Object.keys(value);
  if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
    issues.push(
      invalid(name, keys.length, inBody(name, `should have at least ${schema.minProperties} properties`)),
    );
  }
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
    issues.push({
      kind: 'field',
      code: 'tooManyProperties',
      name,
      value: keys.length,
      limit: schema.maxProperties,
      message: inBody(name, `should have at most ${schema.maxProperties} properties`),
    });
  }
  const additional = schema.additionalProperties;
  // Only a false or a schema additionalProperties looks at the keys the properties do not name.
  if (additional === false || isObject(additional)) {
    for (const key of keys) {
      if (ownSchema(schema.properties, key) !== undefined) continue;
      if (additional === false) {
        issues.push(invalid(name, key, `${name}.${key} in body is a forbidden property`));
      } else {
        collectIssues(value[key], additional as JSONSchemaProps, `${name}.${key}`, issues);
      }
    }
  }
  const properties = schema.properties;
  if (properties !== undefined) {
    for (const key of Object.keys(properties)) {
      if (Object.hasOwn(value, key)) collectIssues(value[key], properties[key], childName(name, key), issues);
    }
  }
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key)) {
      issues.push({
        kind: 'field',
        code: 'required',
        name: `${name}.${key}`,
        message: inBody(`${name}.${key}`, 'is required'),
      });
    }
  }
}

/** Validates one value against one schema node, in kube-openapi's order of validators. */
function validateValue(value: unknown, schema: JSONSchemaProps, name: string): Issue[] {
  const issues: Issue[] = [];
  collectIssues(value, schema, name, issues);
  return issues;
}

/** validateValue into the caller's array: one array for a whole object rather than one per value. */
function collectIssues(value: unknown, schema: JSONSchemaProps, name: string, issues: Issue[]): void {
  appendIssues(issues, validateType(value, schema, name));
  if (value === null) {
    appendIssues(issues, validateEnum(value, schema, name));
    return;
  }
  appendIssues(issues, validateCombinators(value, schema, name));
  if (typeof value === 'string') {
    appendIssues(issues, validateString(value, schema, name));
    appendIssues(issues, validateFormat(value, schema, name));
  } else if (typeof value === 'number') {
    appendIssues(issues, validateNumber(value, schema, name));
  } else if (Array.isArray(value)) {
    appendIssues(issues, validateArray(value, schema, name));
  }
  appendIssues(issues, validateEnum(value, schema, name));
  if (isObject(value)) validateObject(value, schema, name, issues);
}

const causeOf: Readonly<Record<IssueCode, CauseType>> = {
  type: 'FieldValueTypeInvalid',
  required: 'FieldValueRequired',
  tooLong: 'FieldValueTooLong',
  enum: 'FieldValueNotSupported',
  maxItems: 'FieldValueTooMany',
  tooManyProperties: 'FieldValueTooMany',
  invalid: 'FieldValueInvalid',
};

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

/**
 * Converts validator issues into field errors as apiextensions does. `root` is the field path the value
 * sits at (`undefined` for a whole object, whose errors without a field are reported at `<nil>`).
 */
function toFieldErrors(issues: Issue[], root: string | undefined): FieldError[] {
  return issues.map((issue): FieldError => {
    const bare = root ?? '<nil>';
    if (issue.kind === 'plain')
      return { type: 'FieldValueInvalid', field: bare, value: '', detail: issue.message };
    const relative = issue.name === '.' ? '' : issue.name.replace(/^\./, '');
    const field = relative === '' ? bare : root === undefined ? relative : `${root}.${relative}`;
    const type = causeOf[issue.code];
    switch (issue.code) {
      case 'required':
        return { type, field };
      case 'enum': {
        const allowed = (issue.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
        const detail = allowed.length ? `supported values: ${allowed.map((v) => quote(v)).join(', ')}` : '';
        return { type, field, value: issue.value ?? null, ...(detail ? { detail } : {}) };
      }
      case 'tooLong':
        // field.TooLong never prints the value.
        return {
          type,
          field,
          detail: `may not be more than ${issue.limit} ${plural(issue.limit!, 'byte', 'bytes')}`,
        };
      case 'maxItems':
      case 'tooManyProperties':
        return {
          type,
          field,
          value: issue.value,
          detail: `must have at most ${issue.limit} ${plural(issue.limit!, 'item', 'items')}`,
        };
      default:
        return { type, field, value: issue.value ?? '', detail: issue.message };
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// list-type and embedded-resource checks, run after schema validation as the CR strategy does.

function duplicateIndices(keys: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const duplicates: number[] = [];
  keys.forEach((key, i) => {
    const text = canonicalJson(key);
    const times = seen.get(text) ?? 0;
    // Only the first repetition of a value is reported, as upstream.
    if (times === 1) duplicates.push(i);
    seen.set(text, times + 1);
  });
  return duplicates;
}

function listTypeErrors(path: string, schema: JSONSchemaProps, value: unknown): FieldError[] {
  // Only the parts of the object whose schema holds a set or map list can have duplicates.
  if (!hasKeyedLists(schema)) return [];
  if (Array.isArray(value)) return listTypeArrayErrors(path, schema, value);
  if (isObject(value)) return listTypeObjectErrors(path, schema, value, false);
  return [];
}

function listTypeObjectErrors(
  path: string,
  schema: JSONSchemaProps,
  value: JsonObject,
  root: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  const additional = schema.additionalProperties;
  if (isObject(additional)) {
    for (const key of Object.keys(value)) {
      if (root && META_FIELDS.has(key)) continue;
      errors.push(...listTypeErrors(`${path}[${key}]`, additional, value[key]));
    }
  }
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined) errors.push(...listTypeErrors(childName(path, key), property, value[key]));
  }
  return errors;
}

function listTypeArrayErrors(path: string, schema: JSONSchemaProps, value: unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of duplicateIndices(value))
      errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, value: value[i] });
  } else if (listType === 'map') {
    errors.push(...listMapErrors(path, schema['x-kubernetes-list-map-keys'] ?? [], value));
  }
  if (schema.items !== undefined) {
    value.forEach((item, i) => {
      errors.push(...listTypeErrors(`${path}[${i}]`, schema.items!, item));
    });
  }
  return errors;
}

function listMapErrors(path: string, keyFields: string[], value: unknown[]): FieldError[] {
  const notObject = value.findIndex((item) => item !== null && !isObject(item));
  if (notObject >= 0) {
    return [
      {
        type: 'FieldValueInvalid',
        field: `${path}[${notObject}]`,
        value: value[notObject],
        detail: 'must be an object for an array of list-type map',
      },
    ];
  }
  // An item's key is the subset of key fields it sets; items setting none share the empty key.
  const keys = value.map((item) => {
    const key: JsonObject = {};
    for (const field of keyFields) {
      if (isObject(item) && Object.hasOwn(item, field)) setOwn(key, field, item[field]);
    }
    return key;
  });
  return duplicateIndices(keys).map((i) => ({
    type: 'FieldValueDuplicate',
    field: `${path}[${i}]`,
    value: keys[i],
  }));
}

/** An embedded resource must name its apiVersion and kind (objectmeta validateEmbeddedResource). */
function embeddedResourceErrors(
  path: string,
  schema: JSONSchemaProps | undefined,
  value: unknown,
  root: boolean,
): FieldError[] {
  // Only the parts of the object whose schema holds an embedded resource can miss its apiVersion or kind.
  if (schema === undefined || !hasEmbeddedResources(schema)) return [];
  const errors: FieldError[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      errors.push(...embeddedResourceErrors(`${path}[${i}]`, schema.items, item, false));
    });
    return errors;
  }
  if (!isObject(value)) return errors;
  if (!root && isEmbedded(schema)) {
    for (const field of ['apiVersion', 'kind']) {
      const member = getOwn(value, field);
      const at = childName(path, field);
      if (member === undefined) errors.push({ type: 'FieldValueRequired', field: at });
      else if (typeof member !== 'string')
        errors.push({ type: 'FieldValueInvalid', field: at, value: member, detail: 'must be a string' });
      else if (member === '')
        errors.push({ type: 'FieldValueInvalid', field: at, value: member, detail: 'must not be empty' });
    }
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && META_FIELDS.has(key)) continue;
    const property = ownSchema(schema.properties, key);
    if (property !== undefined)
      errors.push(...embeddedResourceErrors(childName(path, key), property, value[key], false));
    else if (additional?.schema !== undefined) {
      errors.push(...embeddedResourceErrors(`${path}[${key}]`, additional.schema, value[key], false));
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------------------
// Admission

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
const hasDefaults = anyBelow(new WeakMap(), (schema) => schema.default !== undefined);
const hasEmbeddedResources = anyBelow(new WeakMap(), isEmbedded);
const hasKeyedLists = anyBelow(new WeakMap(), (schema) => {
  const listType = schema['x-kubernetes-list-type'];
  return listType === 'set' || listType === 'map';
});

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
    errors.push(...embeddedResourceErrors('status', statusSchema, status, false));
  if (hasKeyedLists(statusSchema)) errors.push(...listTypeErrors('status', statusSchema, status));
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
  if (hasEmbeddedResources(schema)) errors.push(...embeddedResourceErrors('', schema, admitted, true));
  if (hasKeyedLists(schema)) errors.push(...listTypeObjectErrors('', schema, admitted, true));
  return errors;
}

// ---------------------------------------------------------------------------------------------------------
// Structural schema checks for CustomResourceDefinitions

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

type Level = 'root' | 'item' | 'field';

const emptyTypeDetail: Readonly<Record<Level, string>> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

function required(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}

function invalidField(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail };
}

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
    errors.push(...nestedValueValidationErrors(schema.items, `${path}.items`, false));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    errors.push(...nestedValueValidationErrors(property, `${path}.properties[${key}]`, false));
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
      errors.push(...nestedValueValidationErrors(s, `${path}.anyOf[${i}]`, false));
    });
  }
  // int-or-string may spell its two types out as anyOf (also inside the first allOf member): the one
  // place where a value validation may name a type.
  schema.allOf?.forEach((s, i) => {
    const skip = i === 0 && isIntOrStringAnyOf(s.anyOf);
    errors.push(...nestedValueValidationErrors(s, `${path}.allOf[${i}]`, skip));
  });
  schema.oneOf?.forEach((s, i) => {
    errors.push(...nestedValueValidationErrors(s, `${path}.oneOf[${i}]`, false));
  });
  if (schema.not !== undefined) errors.push(...nestedValueValidationErrors(schema.not, `${path}.not`, false));
  errors.push(...patternErrors(schema, path));
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
      errors.push(...completenessErrors(n, s, sPath, `${vPath}.${key}[${i}]`));
    });
  }
  if (v.not !== undefined) errors.push(...completenessErrors(v.not, s, sPath, `${vPath}.not`));
  if (v.items !== undefined)
    errors.push(...completenessErrors(v.items, s.items, `${sPath}.items`, `${vPath}.items`));
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
  if (schema.items !== undefined) errors.push(...structuralErrors(schema.items, 'item', `${path}.items`));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    errors.push(...structuralErrors(property, 'field', `${path}.properties[${key}]`));
  }
  if (schema.additionalProperties !== undefined) {
    if (level === 'root')
      errors.push(forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (isObject(schema.additionalProperties)) {
      errors.push(...structuralErrors(schema.additionalProperties, 'field', `${path}.additionalProperties`));
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
  errors.push(...combinatorErrors(schema, path, isIntOrStringAnyOf(schema.anyOf)));
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
  errors.push(...listTypeSchemaErrors(schema, path));
  if (schema.items !== undefined) errors.push(...openApiErrors(schema.items, `${path}.items`));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    errors.push(...openApiErrors(property, `${path}.properties[${key}]`));
  }
  if (isObject(additional)) errors.push(...openApiErrors(additional, `${path}.additionalProperties`));
  for (const [key, alternatives] of [
    ['anyOf', schema.anyOf],
    ['allOf', schema.allOf],
    ['oneOf', schema.oneOf],
  ] as const) {
    alternatives?.forEach((s, i) => {
      errors.push(...openApiErrors(s, `${path}.${key}[${i}]`));
    });
  }
  if (schema.not !== undefined) errors.push(...openApiErrors(schema.not, `${path}.not`));
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
    errors.push(...toFieldErrors(validateValue(schema.default, schema, ''), `${path}.default`));
  }
  if (schema.items !== undefined) {
    errors.push(...defaultErrors(schema.items, `${path}.items`, meta, isEmbedded(schema.items)));
  }
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const intoMeta = meta || (resource && META_FIELDS.has(key));
    errors.push(...defaultErrors(property, `${path}.properties[${key}]`, intoMeta, isEmbedded(property)));
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
