import type { Environment } from '@marcbachmann/cel-js';

/**
 * Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go): `quantity("1Gi")`,
 * `isQuantity`, comparisons, arithmetic and conversions. Values are exact fractions of bigints, so that
 * `quantity("0.1")` compares as resource.Quantity does; the parser follows resource.ParseQuantity's grammar.
 */

export class Quantity {
  /** The value is numerator / denominator (denominator > 0). */
  readonly numerator: bigint;
  readonly denominator: bigint;
  constructor(numerator: bigint, denominator: bigint) {
    this.numerator = numerator;
    this.denominator = denominator;
  }
  compare(other: Quantity): number {
    const a = this.numerator * other.denominator;
    const b = other.numerator * this.denominator;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  add(other: Quantity, sign: 1n | -1n): Quantity {
    return new Quantity(
      this.numerator * other.denominator + sign * other.numerator * this.denominator,
      this.denominator * other.denominator,
    );
  }
}

const BINARY: Record<string, bigint> = { Ki: 1n, Mi: 2n, Gi: 3n, Ti: 4n, Pi: 5n, Ei: 6n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const GRAMMAR = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Parses a quantity string; undefined when it is not one. */
export function parseQuantity(text: string): Quantity | undefined {
  const match = GRAMMAR.exec(text);
  if (!match) return undefined;
  const [, sign, number, suffix = ''] = match;
  const [whole, fraction = ''] = number!.split('.');
  let numerator = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n);
  let denominator = 10n ** BigInt(fraction.length);
  let exponent = 0;
  if (suffix in BINARY) numerator *= 1024n ** BINARY[suffix]!;
  else if (suffix in DECIMAL) exponent = DECIMAL[suffix]!;
  else exponent = Number(suffix.slice(1));
  if (Math.abs(exponent) > 1000) return undefined;
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator *= 10n ** BigInt(-exponent);
  return new Quantity(numerator, denominator);
}

function quantityOf(text: string): Quantity {
  const quantity = parseQuantity(text);
  if (quantity === undefined) throw new Error('quantities must match the regular expression');
  return quantity;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function asInteger(q: Quantity): bigint {
  if (q.numerator % q.denominator !== 0n) throw new Error('cannot convert value to integer');
  const value = q.numerator / q.denominator;
  if (value > INT64_MAX || value < INT64_MIN) throw new Error('cannot convert value to integer');
  return value;
}

export function registerQuantity(env: Environment): void {
  env.registerType('kubernetes.Quantity', Quantity);
  env.registerFunction('quantity(string): kubernetes.Quantity', (text: string) => quantityOf(text));
  env.registerFunction('isQuantity(string): bool', (text: string) => parseQuantity(text) !== undefined);
  env.registerOperator(
    'kubernetes.Quantity == kubernetes.Quantity',
    (a: Quantity, b: Quantity) => a.compare(b) === 0,
  );
  const method = (
    name: string,
    params: string[],
    returnType: string,
    handler: (q: Quantity, ...args: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType: 'kubernetes.Quantity',
      returnType,
      params: params.map((type, i) => ({ name: `arg${i}`, type })),
      handler: handler as (...args: unknown[]) => unknown,
    });
  method('sign', [], 'int', (q) => BigInt(q.compare(new Quantity(0n, 1n))));
  method('isInteger', [], 'bool', (q) => q.numerator % q.denominator === 0n && asIntegerFits(q));
  method('asInteger', [], 'int', (q) => asInteger(q));
  method('asApproximateFloat', [], 'double', (q) => Number(q.numerator) / Number(q.denominator));
  method('compareTo', ['kubernetes.Quantity'], 'int', (q, other: Quantity) => BigInt(q.compare(other)));
  method('isGreaterThan', ['kubernetes.Quantity'], 'bool', (q, other: Quantity) => q.compare(other) > 0);
  method('isLessThan', ['kubernetes.Quantity'], 'bool', (q, other: Quantity) => q.compare(other) < 0);
  method('add', ['kubernetes.Quantity'], 'kubernetes.Quantity', (q, other: Quantity) => q.add(other, 1n));
  method('add', ['int'], 'kubernetes.Quantity', (q, other: bigint) => q.add(new Quantity(other, 1n), 1n));
  method('sub', ['kubernetes.Quantity'], 'kubernetes.Quantity', (q, other: Quantity) => q.add(other, -1n));
  method('sub', ['int'], 'kubernetes.Quantity', (q, other: bigint) => q.add(new Quantity(other, 1n), -1n));
}

function asIntegerFits(q: Quantity): boolean {
  const value = q.numerator / q.denominator;
  return value <= INT64_MAX && value >= INT64_MIN;
}
