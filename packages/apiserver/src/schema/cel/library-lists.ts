import type { Environment } from '@marcbachmann/cel-js';
import { Optional } from '@marcbachmann/cel-js';

/**
 * cel-go's lists extension, which kube-apiserver enables: `slice`, `flatten`, `distinct`, `reverse`, `sort`,
 * `first`, `last` and `lists.range`, plus Kubernetes' own list functions (`isSorted`, `sum`, `min`, `max`,
 * `indexOf`, `lastIndexOf`). As strings.quote, `lists` is a constant whose method `range` is.
 */

class ListsNamespace {}

type Comparable = bigint | number | string;

function compare(a: Comparable, b: Comparable): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function key(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

function flatten(list: readonly unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  let out = [...list];
  for (let level = 0n; level < depth; level++) {
    if (!out.some(Array.isArray)) break;
    out = out.flatMap((item) => (Array.isArray(item) ? (item as unknown[]) : [item]));
  }
  return out;
}

function extreme(list: readonly Comparable[], sign: 1 | -1): Comparable {
  // kube: min()/max() of an empty list is a runtime error.
  if (list.length === 0) throw new Error(sign === 1 ? 'max of empty list' : 'min of empty list');
  let best = list[0]!;
  for (const item of list) if (compare(item, best) * sign > 0) best = item;
  return best;
}

export function registerLists(env: Environment): void {
  const method = (
    receiverType: string,
    name: string,
    params: string[],
    returnType: string,
    handler: (list: never, ...args: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType,
      returnType,
      params: params.map((type, i) => ({ name: `arg${i}`, type })),
      handler: handler as (...args: unknown[]) => unknown,
    });
  for (const element of ['int', 'double', 'string'] as const) {
    const list = `list<${element}>`;
    method(list, 'isSorted', [], 'bool', (l: Comparable[]) =>
      l.every((v, i) => i === 0 || compare(l[i - 1]!, v) <= 0),
    );
    method(list, 'min', [], element, (l: Comparable[]) => extreme(l, -1));
    method(list, 'max', [], element, (l: Comparable[]) => extreme(l, 1));
    method(list, 'sort', [], list, (l: Comparable[]) => [...l].sort(compare));
  }
  method('list<int>', 'sum', [], 'int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n));
  method('list<double>', 'sum', [], 'double', (l: number[]) => l.reduce((a, b) => a + b, 0));
  method('list<dyn>', 'indexOf', ['dyn'], 'int', (l: unknown[], v: unknown) =>
    BigInt(l.findIndex((item) => key(item) === key(v))),
  );
  method('list<dyn>', 'lastIndexOf', ['dyn'], 'int', (l: unknown[], v: unknown) =>
    BigInt(l.findLastIndex((item) => key(item) === key(v))),
  );
  method('list<dyn>', 'slice', ['int', 'int'], 'list<dyn>', (l: unknown[], from: bigint, to: bigint) => {
    if (from < 0n || to < 0n) throw new Error(`cannot slice(${from}, ${to}), negative indexes not supported`);
    if (from > to)
      throw new Error(`cannot slice(${from}, ${to}), start index must be less than or equal to end index`);
    if (to > BigInt(l.length)) throw new Error(`cannot slice(${from}, ${to}), list is length ${l.length}`);
    return l.slice(Number(from), Number(to));
  });
  method('list<dyn>', 'flatten', [], 'list<dyn>', (l: unknown[]) => flatten(l, 1n));
  method('list<dyn>', 'flatten', ['int'], 'list<dyn>', (l: unknown[], depth: bigint) => flatten(l, depth));
  method('list<dyn>', 'distinct', [], 'list<dyn>', (l: unknown[]) => {
    const seen = new Set<string>();
    return l.filter((item) => !seen.has(key(item)) && seen.add(key(item)));
  });
  method('list<dyn>', 'reverse', [], 'list<dyn>', (l: unknown[]) => [...l].reverse());
  method('list<dyn>', 'first', [], 'optional<dyn>', (l: unknown[]) =>
    l.length ? Optional.of(l[0]) : Optional.none(),
  );
  method('list<dyn>', 'last', [], 'optional<dyn>', (l: unknown[]) =>
    l.length ? Optional.of(l.at(-1)) : Optional.none(),
  );
  env.registerType('k8s.ListsNamespace', ListsNamespace);
  env.registerConstant('lists', 'k8s.ListsNamespace', new ListsNamespace());
  method('k8s.ListsNamespace', 'range', ['int'], 'list<int>', (_ns: ListsNamespace, n: bigint) =>
    Array.from({ length: Number(n > 0n ? n : 0n) }, (_, i) => BigInt(i)),
  );
}
