import { Environment, Optional } from '@marcbachmann/cel-js';
import { registerNet } from './library-net.ts';
import { registerQuantity } from './library-quantity.ts';
import { registerSetsAndMath } from './library-sets-math.ts';
import { registerStrings } from './library-strings.ts';

/**
 * The CEL environment kube-apiserver gives `x-kubernetes-validations` rules: the standard library (from
 * @marcbachmann/cel-js, with optional types for `optionalOldSelf` and `self.?field`), plus the Kubernetes
 * extension functions the library lacks (k8s.io/apiserver/pkg/cel/library): the list and regex functions
 * here; strings, quantity, URL/IP/CIDR, sets and math in library-*.ts. See ADR 1701 for what is still missing.
 */

type Comparable = bigint | number | string;

function compare(a: Comparable, b: Comparable): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isSorted(list: readonly Comparable[]): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1]!, list[i]!) > 0) return false;
  return true;
}

function extreme(list: readonly Comparable[], sign: 1 | -1): Comparable {
  // kube: min()/max() of an empty list is a runtime error.
  if (list.length === 0) throw new Error(sign === 1 ? 'max of empty list' : 'min of empty list');
  let best = list[0]!;
  for (const item of list) if (compare(item, best) * sign > 0) best = item;
  return best;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a, bigintJson) === JSON.stringify(b, bigintJson);
}

function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

function compileRegex(pattern: string): RegExp {
  // RE2 and ECMAScript agree on the syntax rules use; `u` makes character classes count code points.
  return new RegExp(pattern, 'gu');
}

const LIST_ELEMENT_TYPES = ['int', 'double', 'string'] as const;

interface MacroNode {
  op: string;
  args: unknown;
}
interface MacroChecker {
  check(node: MacroNode, ctx: unknown): unknown;
  createError(code: string, message: string, node: MacroNode): Error;
  getType(name: string): unknown;
}
interface MacroEvaluator {
  run(node: MacroNode, ctx: unknown): unknown;
  debugType(value: unknown): {
    fieldLazy(value: unknown, name: string, node: MacroNode, ev: unknown): unknown;
  };
}

/**
 * has(e.f) for any expression e, as the CEL spec and kube's rules (`has(self.matches[0].path)` in Gateway
 * API's HTTPRoute) use it: the library's own macro accepts only chains of fields from a variable.
 */
function hasMacro({ args }: { args: MacroNode[] }): unknown {
  return {
    args,
    async: false,
    typeCheck(checker: MacroChecker, macro: { args: MacroNode[] }, ctx: unknown): unknown {
      const node = macro.args[0]!;
      if (node.op !== '.' && node.op !== '.?')
        throw checker.createError('invalid_macro_argument', 'invalid argument to has() macro', node);
      checker.check((node.args as [MacroNode, string])[0], ctx);
      return checker.getType('bool');
    },
    evaluate(ev: MacroEvaluator, macro: { args: MacroNode[] }, ctx: unknown): boolean {
      const node = macro.args[0]!;
      const [target, name] = node.args as [MacroNode, string];
      const value = ev.run(target, ctx);
      return ev.debugType(value).fieldLazy(value, name, node, ev) !== undefined;
    },
  };
}

const HAS_MACRO = 'k8s_has';

/**
 * The rule text with has( calls outside string literals renamed to the macro above (the library's has()
 * cannot be replaced: its overload is fixed).
 */
export function withPortableHas(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      const raw = /[rR]/.test(text[i - 1] ?? '');
      let j = i + quote.length;
      while (j < text.length && !text.startsWith(quote, j)) j += !raw && text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + quote.length);
      i = j + quote.length - 1;
    } else if (text.startsWith('has(', i) && !/[A-Za-z0-9_.]/.test(text[i - 1] ?? '')) {
      out += `${HAS_MACRO}(`;
      i += 3;
    } else out += c;
  }
  return out;
}

/** Builds the environment once per process; each rule is then parsed and checked against it. */
export function kubernetesEnvironment(): Environment {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  env.registerFunction(`${HAS_MACRO}(ast): bool`, hasMacro as never);
  registerStrings(env);
  registerQuantity(env);
  registerNet(env);
  registerSetsAndMath(env);
  for (const element of LIST_ELEMENT_TYPES) {
    const list = `list<${element}>`;
    env.registerFunction({
      name: 'isSorted',
      receiverType: list,
      returnType: 'bool',
      params: [],
      handler: (l: Comparable[]) => isSorted(l),
    });
    env.registerFunction({
      name: 'min',
      receiverType: list,
      returnType: element,
      params: [],
      handler: (l: Comparable[]) => extreme(l, -1),
    });
    env.registerFunction({
      name: 'max',
      receiverType: list,
      returnType: element,
      params: [],
      handler: (l: Comparable[]) => extreme(l, 1),
    });
  }
  env.registerFunction({
    name: 'sum',
    receiverType: 'list<int>',
    returnType: 'int',
    params: [],
    handler: (l: bigint[]) => l.reduce((a, b) => a + b, 0n),
  });
  env.registerFunction({
    name: 'sum',
    receiverType: 'list<double>',
    returnType: 'double',
    params: [],
    handler: (l: number[]) => l.reduce((a, b) => a + b, 0),
  });
  env.registerFunction({
    name: 'indexOf',
    receiverType: 'list<dyn>',
    returnType: 'int',
    params: [{ name: 'value', type: 'dyn' }],
    handler: (l: unknown[], v: unknown) => BigInt(l.findIndex((item) => sameValue(item, v))),
  });
  env.registerFunction({
    name: 'lastIndexOf',
    receiverType: 'list<dyn>',
    returnType: 'int',
    params: [{ name: 'value', type: 'dyn' }],
    handler: (l: unknown[], v: unknown) => BigInt(l.findLastIndex((item) => sameValue(item, v))),
  });
  env.registerFunction({
    name: 'find',
    receiverType: 'string',
    returnType: 'string',
    params: [{ name: 'regex', type: 'string' }],
    handler: (s: string, re: string) => compileRegex(re).exec(s)?.[0] ?? '',
  });
  env.registerFunction({
    name: 'findAll',
    receiverType: 'string',
    returnType: 'list<string>',
    params: [{ name: 'regex', type: 'string' }],
    handler: (s: string, re: string) => [...s.matchAll(compileRegex(re))].map((m) => m[0]),
  });
  env.registerFunction({
    name: 'findAll',
    receiverType: 'string',
    returnType: 'list<string>',
    params: [
      { name: 'regex', type: 'string' },
      { name: 'limit', type: 'int' },
    ],
    handler: (s: string, re: string, limit: bigint) => {
      const all = [...s.matchAll(compileRegex(re))].map((m) => m[0]);
      return limit < 0n ? all : all.slice(0, Number(limit));
    },
  });
  return env;
}

export { Optional };
