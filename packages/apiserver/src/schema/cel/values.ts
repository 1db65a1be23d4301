import type { JSONSchemaProps } from '../types.ts';
import { Environment } from '@marcbachmann/cel-js';
import { escapeProperty } from './names.ts';

/** Strings of `format: date-time`, `date` and `duration` are timestamps and durations to rules, as in kube. */
const conversions = new Environment().registerVariable('x', 'string');
const toTimestamp = conversions.parse('timestamp(x)');
const toDuration = conversions.parse('duration(x)');

function convertString(text: string, format: string | undefined): unknown {
  try {
    if (format === 'date-time') return toTimestamp({ x: text });
    if (format === 'date') return toTimestamp({ x: `${text}T00:00:00Z` });
    if (format === 'duration') return toDuration({ x: text });
  } catch {
    // A string the schema's format check let through but CEL cannot read stays a string.
  }
  return text;
}

/**
 * JSON values as CEL sees them: integers of `type: integer` nodes (and whole numbers where no schema says
 * otherwise, as kube's unstructured values) are CEL ints, which @marcbachmann/cel-js represents as bigint;
 * `type: number` stays a double. Properties are named as rules spell them (names.ts). At the root only
 * metadata.name and metadata.generateName are visible, as in kube.
 */
export function toCelValue(value: unknown, schema: JSONSchemaProps | undefined): unknown {
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string') return schema?.format ? convertString(value, schema.format) : value;
  if (Array.isArray(value)) return value.map((item) => toCelValue(item, schema?.items));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const additional =
      typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    const properties = schema?.properties;
    for (const [key, item] of Object.entries(value)) {
      const property = properties?.[key];
      if (properties !== undefined && property !== undefined) {
        // An object's properties go by their escaped names; a null one is absent, as in kube.
        const name = escapeProperty(key);
        if (name !== undefined && item !== null) out[name] = toCelValue(item, property);
      } else out[key] = toCelValue(item, additional);
    }
    return out;
  }
  return value;
}

export function toCelRoot(object: Record<string, unknown>, schema: JSONSchemaProps): Record<string, unknown> {
  const root = toCelValue(object, schema) as Record<string, unknown>;
  const metadata = object.metadata as Record<string, unknown> | undefined;
  if (metadata !== undefined) {
    const visible: Record<string, unknown> = {};
    if (metadata.name !== undefined) visible.name = metadata.name;
    if (metadata.generateName !== undefined) visible.generateName = metadata.generateName;
    root.metadata = visible;
  }
  return root;
}

/** Deep equality of CEL values (bigints included), for ratcheting unchanged values. */
export function celEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => celEqual(item, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every(
    (k) =>
      Object.hasOwn(b, k) && celEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}
