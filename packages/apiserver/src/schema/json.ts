/** JSON helpers the schema modules share: Go-compatible number and string rendering, own-property reads. */

import { isObject } from '@certkit/apimachinery';
import { type JSONSchemaProps } from './types.ts';

export function ownSchema(
  map: Record<string, JSONSchemaProps> | undefined,
  key: string,
): JSONSchemaProps | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** JSON with object members sorted, as Go's json.Marshal writes maps: equal values give equal text. */
export function canonicalJson(value: unknown): string {
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
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

/** Formats a float64 as Go's `%v` does: shortest digits, exponent form below 1e-4 and from 1e6. */
export function goFloat(value: number): string {
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
export function quote(text: string): string {
  return JSON.stringify(text);
}

export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
