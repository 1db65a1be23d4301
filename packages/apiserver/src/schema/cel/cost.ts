import type { ASTNode } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../types.ts';
import { escapeProperty } from './names.ts';

/**
 * An approximate version of kube-apiserver's CEL cost model (k8s.io/apiserver/pkg/cel/library/cost.go and
 * cel-go's checker/cost.go): every AST node costs 1, a comprehension costs its body times the size of what
 * it iterates, string scans cost a tenth of the string's length. Sizes come from a Shape: the schema's
 * maxItems/maxLength/maxProperties for the estimate made when a CRD is written, the actual values for the
 * cost charged on each write (ADR 1701 explains why the runtime cost is computed this way).
 */

/** kube's limits (k8s.io/apiserver/pkg/apis/cel/config.go). */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_COST_BUDGET = 10_000_000;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** What the cost model needs to know about a value: how large it can be, and its parts. */
export interface Shape {
  size(): number;
  field(name: string): Shape;
  element(): Shape;
}

/** The property a rule names (rules spell properties escaped, see names.ts). */
function propertyByRuleName(
  properties: Record<string, JSONSchemaProps> | undefined,
  name: string,
): JSONSchemaProps | undefined {
  if (properties === undefined) return undefined;
  if (Object.hasOwn(properties, name) && escapeProperty(name) === name) return properties[name];
  for (const [key, property] of Object.entries(properties)) if (escapeProperty(key) === name) return property;
  return undefined;
}

const UNKNOWN: Shape = { size: () => 1, field: () => UNKNOWN, element: () => UNKNOWN };

/** The largest value a schema node admits; unbounded nodes are bounded by the request size, as in kube. */
export class SchemaShape implements Shape {
  readonly schema: JSONSchemaProps | undefined;
  constructor(schema: JSONSchemaProps | undefined) {
    this.schema = schema;
  }
  size(): number {
    const s = this.schema;
    if (s === undefined) return 1;
    const bound = s.maxItems ?? s.maxLength ?? s.maxProperties;
    if (bound !== undefined) return bound;
    // A list or map element takes at least a few bytes of JSON ("",); a string one byte per character.
    if (s.type === 'array' || s.type === 'object') return Math.floor(MAX_REQUEST_SIZE_BYTES / 3);
    if (s.type === 'string') return MAX_REQUEST_SIZE_BYTES;
    return 1;
  }
  field(name: string): Shape {
    const s = this.schema;
    const child =
      propertyByRuleName(s?.properties, name) ??
      (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
    return child === undefined ? UNKNOWN : new SchemaShape(child);
  }
  element(): Shape {
    const s = this.schema;
    if (s?.type === 'array') return new SchemaShape(s.items);
    // Iterating a map yields its keys, which kube's declared types leave without a size (MaxElements 0): a
    // key costs nothing to scan in its estimate, and so it does here, so that CRDs kube accepts are accepted.
    return new SchemaShape({ type: 'string', maxLength: 0 });
  }
}

function sizeOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.length;
  if (value !== null && typeof value === 'object') return Object.keys(value).length;
  return 1;
}

/** The values actually present at a path (several when the path goes through an iteration variable). */
export class ValueShape implements Shape {
  readonly values: readonly unknown[];
  constructor(values: readonly unknown[]) {
    this.values = values;
  }
  size(): number {
    let max = 0;
    for (const value of this.values) max = Math.max(max, sizeOf(value));
    return max;
  }
  field(name: string): Shape {
    const out: unknown[] = [];
    for (const value of this.values) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, name))
        out.push((value as Record<string, unknown>)[name]);
    }
    return new ValueShape(out);
  }
  element(): Shape {
    const out: unknown[] = [];
    for (const value of this.values) {
      // One by one: a spread passes each member as an argument, past ~120,000 a stack overflow.
      if (Array.isArray(value)) for (const item of value as unknown[]) out.push(item);
      else if (value !== null && typeof value === 'object')
        for (const key of Object.keys(value)) out.push(key);
    }
    return new ValueShape(out);
  }
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const STRING_SCANS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'matches',
  'split',
  'find',
  'findAll',
  'indexOf',
  'lastIndexOf',
  'replace',
  'lowerAscii',
  'upperAscii',
  'trim',
]);

interface Estimate {
  cost: number;
  shape: Shape;
}

function scanCost(length: number): number {
  return Math.ceil(length * 0.1);
}

function estimateNode(node: ASTNode, scope: ReadonlyMap<string, Shape>): Estimate {
  const args = node.args as unknown;
  switch (node.op) {
    case 'value':
      return { cost: 0, shape: new ValueShape([args]) };
    case 'id':
      return { cost: 1, shape: scope.get(args as string) ?? UNKNOWN };
    case '.':
    case '.?': {
      const [target, name] = args as [ASTNode, string];
      const inner = estimateNode(target, scope);
      return { cost: inner.cost + 1, shape: inner.shape.field(name) };
    }
    case '[]':
    case '[?]': {
      const [target, index] = args as [ASTNode, ASTNode];
      const inner = estimateNode(target, scope);
      const key = estimateNode(index, scope);
      const literal = index.op === 'value' && typeof index.args === 'string' ? index.args : undefined;
      const shape = literal === undefined ? inner.shape.element() : inner.shape.field(literal);
      return { cost: inner.cost + key.cost + 1, shape };
    }
    case 'call': {
      const [name, callArgs] = args as [string, ASTNode[]];
      let cost = 1;
      let shape: Shape = UNKNOWN;
      for (const arg of callArgs) {
        const e = estimateNode(arg, scope);
        cost += e.cost;
        if (name === 'size' || name === 'has') shape = e.shape;
      }
      if (name === 'has') return { cost, shape: UNKNOWN };
      return { cost, shape: name === 'size' ? UNKNOWN : shape };
    }
    case 'rcall': {
      const [rawName, receiver, callArgs] = args as [string, ASTNode, ASTNode[]];
      // k8s_matches is matches, renamed to run Go's regexp (library.ts): it costs the same.
      const name = rawName === 'k8s_matches' ? 'matches' : rawName;
      const target = estimateNode(receiver, scope);
      if (COMPREHENSIONS.has(name) && callArgs.length >= 2 && callArgs[0]!.op === 'id') {
        const variable = callArgs[0]!.args as string;
        const inner = new Map(scope);
        inner.set(variable, target.shape.element());
        let body = 0;
        for (const arg of callArgs.slice(1)) body += estimateNode(arg, inner).cost;
        return { cost: target.cost + target.shape.size() * (body + 1), shape: target.shape };
      }
      let cost = target.cost + 1;
      for (const arg of callArgs) {
        const e = estimateNode(arg, scope);
        cost += e.cost;
        if (STRING_SCANS.has(name))
          cost +=
            name === 'matches'
              ? scanCost(target.shape.size()) * Math.max(1, scanCost(e.shape.size()))
              : scanCost(e.shape.size());
      }
      if (STRING_SCANS.has(name) || name === 'isSorted' || name === 'sum' || name === 'min' || name === 'max')
        cost += scanCost(target.shape.size());
      return { cost, shape: name === 'split' || name === 'findAll' ? target.shape : UNKNOWN };
    }
    default: {
      // Operators, literals of lists and maps, the ternary: the cost of their operands, plus one.
      let cost = 1;
      const operands = Array.isArray(args) ? (args as unknown[]).flat() : [args];
      for (const operand of operands) {
        if (operand !== null && typeof operand === 'object' && 'op' in operand)
          cost += estimateNode(operand as ASTNode, scope).cost;
      }
      return { cost, shape: UNKNOWN };
    }
  }
}

/** The cost of an expression with `self` (and `oldSelf`) of the given shape. */
export function estimateCost(ast: ASTNode, self: Shape): number {
  return estimateNode(
    ast,
    new Map([
      ['self', self],
      ['oldSelf', self],
    ]),
  ).cost;
}

/** How many times a rule at a schema node can run for one object: the product of the enclosing lists' and maps' sizes. */
export function cardinality(path: readonly JSONSchemaProps[]): number {
  let n = 1;
  for (const schema of path) n *= new SchemaShape(schema).size();
  return n;
}

/** kube's "by factor of" text: the cost over the limit, with one decimal. */
export function exceedFactor(cost: number, limit: number): string {
  return `${(cost / limit).toFixed(1)}x`;
}
