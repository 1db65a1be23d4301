import type { Environment } from '@marcbachmann/cel-js';

/**
 * cel-go's sets extension and the most used functions of its math extension, which kube-apiserver enables:
 * `sets.contains`, `sets.equivalent`, `sets.intersects`, `math.greatest`, `math.least`, `math.abs`,
 * `math.ceil`, `math.floor`, `math.round`, `math.trunc`, `math.sign`, `math.isNaN`, `math.isInf`,
 * `math.isFinite`. As strings.quote, the namespaces are constants whose methods these are.
 */

class SetsNamespace {}
class MathNamespace {}

type Scalar = bigint | number | string | boolean;

/** CEL equality across numeric types (1 == 1.0), as the sets functions compare elements. */
function same(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return Number(a) === Number(b);
  return a === b || JSON.stringify(a, bigints) === JSON.stringify(b, bigints);
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

function contains(list: readonly unknown[], sub: readonly unknown[]): boolean {
  return sub.every((item) => list.some((other) => same(item, other)));
}

function compareNumbers(a: Scalar, b: Scalar): number {
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function extreme(values: readonly Scalar[], sign: 1 | -1): Scalar {
  if (values.length === 0)
    throw new Error(`math.${sign === 1 ? 'greatest' : 'least'}() requires at least one argument`);
  let best = values[0]!;
  for (const value of values) if (compareNumbers(value, best) * sign > 0) best = value;
  return best;
}

export function registerSetsAndMath(env: Environment): void {
  env.registerType('k8s.SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'k8s.SetsNamespace', new SetsNamespace());
  env.registerType('k8s.MathNamespace', MathNamespace);
  env.registerConstant('math', 'k8s.MathNamespace', new MathNamespace());
  const fn = (
    namespace: string,
    name: string,
    params: string[],
    returnType: string,
    handler: (...args: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType: namespace,
      returnType,
      params: params.map((type, i) => ({ name: `arg${i}`, type })),
      handler: ((_ns: unknown, ...args: never[]) => handler(...args)) as (...args: unknown[]) => unknown,
    });
  const sets = 'k8s.SetsNamespace';
  fn(sets, 'contains', ['list<dyn>', 'list<dyn>'], 'bool', (a: unknown[], b: unknown[]) => contains(a, b));
  fn(
    sets,
    'equivalent',
    ['list<dyn>', 'list<dyn>'],
    'bool',
    (a: unknown[], b: unknown[]) => contains(a, b) && contains(b, a),
  );
  fn(sets, 'intersects', ['list<dyn>', 'list<dyn>'], 'bool', (a: unknown[], b: unknown[]) =>
    a.some((item) => b.some((other) => same(item, other))),
  );
  const math = 'k8s.MathNamespace';
  for (const type of ['int', 'double']) {
    fn(math, 'greatest', [`list<${type}>`], type, (values: Scalar[]) => extreme(values, 1));
    fn(math, 'least', [`list<${type}>`], type, (values: Scalar[]) => extreme(values, -1));
    for (let arity = 1; arity <= 4; arity++) {
      const params = Array.from({ length: arity }, () => type);
      fn(math, 'greatest', params, type, (...values: Scalar[]) => extreme(values, 1));
      fn(math, 'least', params, type, (...values: Scalar[]) => extreme(values, -1));
    }
  }
  fn(math, 'abs', ['int'], 'int', (n: bigint) => {
    if (n === -(2n ** 63n)) throw new Error('integer overflow');
    return n < 0n ? -n : n;
  });
  fn(math, 'abs', ['double'], 'double', (n: number) => Math.abs(n));
  fn(math, 'sign', ['int'], 'int', (n: bigint) => (n > 0n ? 1n : n < 0n ? -1n : 0n));
  fn(math, 'sign', ['double'], 'double', (n: number) => Math.sign(n));
  fn(math, 'ceil', ['double'], 'double', (n: number) => Math.ceil(n));
  fn(math, 'floor', ['double'], 'double', (n: number) => Math.floor(n));
  // CEL rounds half away from zero; Math.round rounds half up.
  fn(math, 'round', ['double'], 'double', (n: number) => Math.sign(n) * Math.round(Math.abs(n)));
  fn(math, 'trunc', ['double'], 'double', (n: number) => Math.trunc(n));
  fn(math, 'isNaN', ['double'], 'bool', (n: number) => Number.isNaN(n));
  fn(math, 'isInf', ['double'], 'bool', (n: number) => n === Infinity || n === -Infinity);
  fn(math, 'isFinite', ['double'], 'bool', (n: number) => Number.isFinite(n));
}
