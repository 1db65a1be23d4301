import { Environment, Optional } from '@marcbachmann/cel-js';
import { registerLists } from './library-lists.ts';
import { registerNet } from './library-net.ts';
import { registerQuantity } from './library-quantity.ts';
import { registerSetsAndMath } from './library-sets-math.ts';
import { registerStrings } from './library-strings.ts';
import { goRegexpFind, goRegexpFindAll, goRegexpMatch } from '../go-regexp.ts';

/**
 * The CEL environment kube-apiserver gives `x-kubernetes-validations` rules: the standard library (from
 * @marcbachmann/cel-js, with optional types for `optionalOldSelf` and `self.?field`), plus the Kubernetes
 * extension functions the library lacks (k8s.io/apiserver/pkg/cel/library): the regex functions here;
 * lists, strings, quantity, URL/IP/CIDR, sets and math in library-*.ts. See ADR 1701 for what is still missing.
 */

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
 * The library's own matches() runs ECMAScript's backtracking RegExp, exponential on patterns such as
 * `^(a+)+$`; its overload cannot be replaced either, so calls are renamed to this one, which runs Go's
 * regexp semantics in linear time (go-regexp.ts).
 */
const MATCHES = 'k8s_matches';

/**
 * Renamed calls, each renamed only where the character before it cannot be part of a longer name (nor,
 * for the has() macro, which is never a method, a dot). The same prefix is added to each (`k8s_`), which
 * compile.ts relies on to map offsets back.
 */
const RENAMED_CALLS: readonly { from: string; to: string; notAfter: RegExp }[] = [
  { from: 'has(', to: `${HAS_MACRO}(`, notAfter: /[A-Za-z0-9_.]/ },
  { from: 'matches(', to: `${MATCHES}(`, notAfter: /[A-Za-z0-9_]/ },
];
/** What a rename adds to the text, per renamed call. */
export const RENAMED_CALL_PREFIX = 'k8s_';

/**
 * The rule text with has( and matches( calls outside string literals renamed to the functions above (the
 * library's has() and matches() cannot be replaced: their overloads are fixed).
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
    } else {
      const renamed = RENAMED_CALLS.find(
        ({ from, notAfter }) => text.startsWith(from, i) && !notAfter.test(text[i - 1] ?? ''),
      );
      if (renamed) {
        out += renamed.to;
        i += renamed.from.length - 1;
      } else out += c;
    }
  }
  return out;
}

/** Builds the environment once per process; each rule is then parsed and checked against it. */
export function kubernetesEnvironment(): Environment {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  env.registerFunction(`${HAS_MACRO}(ast): bool`, hasMacro as never);
  env.registerFunction({
    name: MATCHES,
    receiverType: 'string',
    returnType: 'bool',
    params: [{ name: 'regex', type: 'string' }],
    handler: (s: string, re: string) => goRegexpMatch(re, s),
  });
  env.registerFunction({
    name: MATCHES,
    returnType: 'bool',
    params: [
      { name: 'string', type: 'string' },
      { name: 'regex', type: 'string' },
    ],
    handler: (s: string, re: string) => goRegexpMatch(re, s),
  });
  registerStrings(env);
  registerQuantity(env);
  registerNet(env);
  registerSetsAndMath(env);
  registerLists(env);
  env.registerFunction({
    name: 'find',
    receiverType: 'string',
    returnType: 'string',
    params: [{ name: 'regex', type: 'string' }],
    handler: (s: string, re: string) => goRegexpFind(re, s),
  });
  env.registerFunction({
    name: 'findAll',
    receiverType: 'string',
    returnType: 'list<string>',
    params: [{ name: 'regex', type: 'string' }],
    handler: (s: string, re: string) => goRegexpFindAll(re, s),
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
      const all = goRegexpFindAll(re, s);
      return limit < 0n ? all : all.slice(0, Number(limit));
    },
  });
  return env;
}

export { Optional };
