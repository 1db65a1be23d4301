/**
 * Value validation against a structural schema, following kube-openapi's SchemaValidator semantics: types,
 * combinators, strings, formats, numbers, arrays, enums, objects. Issues (issues.ts) carry the validator's
 * own name for the value (`spec.items[0].name`).
 */

import { appendErrors, isObject, jsonEqual, type JsonObject } from '@certkit/apimachinery';
import { enumIncludes, enumJson } from './enum-members.ts';
import type { RE2JS } from 're2js';
import { stringFormatValidator } from './formats.ts';
import { compileGoRegexp } from './go-regexp.ts';
import { type Issue, NO_ISSUES, appendIssues, inBody, invalid, invalidType } from './issues.ts';
import { codePoints, goFloat, isInt64, ownSchema, quote } from './json.ts';
import { type JSONSchemaProps } from './types.ts';

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
    if (best) appendErrors(issues, best);
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
      if (best) appendErrors(issues, best);
    }
  }
  if (schema.allOf?.length) {
    let valid = 0;
    for (const part of schema.allOf) {
      const result = validateValue(value, part, name);
      if (result.length === 0) valid++;
      appendErrors(issues, result);
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

/** A schema's `pattern`, compiled as Go's regexp (RE2, linear time): see go-regexp.ts. */
export function compilePattern(pattern: string): RE2JS | Error {
  return compileGoRegexp(pattern);
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
  if (enumIncludes(schema.enum, value)) return NO_ISSUES;
  return [
    {
      kind: 'field',
      code: 'enum',
      name,
      value: value === null ? undefined : value,
      values: schema.enum,
      message: inBody(name, `should be one of ${enumJson(schema.enum)}`),
    },
  ];
}

export function childName(name: string, key: string): string {
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
export function validateValue(value: unknown, schema: JSONSchemaProps, name: string): Issue[] {
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
