import { type FieldError, isObject } from '@certkit/apimachinery';
import { Optional } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../types.ts';
import type { CompiledNode, CompiledRule, RuleReason } from './compile.ts';
import { estimateCost, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, ValueShape } from './cost.ts';
import { celEqual, toCelRoot, toCelValue } from './values.ts';

/**
 * Evaluates compiled rules on a write as kube-apiserver's CEL validator does
 * (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go): at every node the object has,
 * `self` bound to the node's value; transition rules (those naming oldSelf) only where an old value
 * correlates (object properties, map values, list-type=map items by their keys; not atomic lists or sets);
 * rules on values an update left unchanged are ratcheted (not re-checked), as kube's
 * CRDValidationRatcheting does.
 */

interface Budget {
  remaining: number;
  exhausted: boolean;
  /**
   * Whether actual costs need counting at all: not when the whole version's estimate (every rule at the
   * largest sizes the schema admits) is within the per-write budget, since an actual cost never exceeds its
   * estimate. Counting walks each rule with the values' sizes, which costs more than most rules themselves.
   */
  metered: boolean;
}

function childPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function errorField(path: string): string {
  return path === '' ? '<nil>' : path;
}

function fieldErrorForReason(reason: RuleReason, field: string, type: string, detail: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return { type: 'FieldValueForbidden', field, detail };
    case 'FieldValueRequired':
      return { type: 'FieldValueRequired', field, detail };
    case 'FieldValueDuplicate':
      return { type: 'FieldValueDuplicate', field, value: type };
    default:
      return { type: 'FieldValueInvalid', field, value: type, detail };
  }
}

/** The library's runtime error as cel-go words it: its first line, lower-case (`no such key: x`). */
function celRuntimeError(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
  return line.charAt(0).toLowerCase() + line.slice(1);
}

/** How kube names a rule in evaluation errors: by its message when it has one, else by its text. */
function ruleErrorString(rule: CompiledRule): string {
  return (rule.message || rule.rule).trim();
}

function messageFor(rule: CompiledRule, context: Record<string, unknown>): string {
  const fallback = rule.message || `failed rule: ${rule.rule.trim()}`;
  if (rule.messageProgram === undefined) return fallback;
  try {
    const message = rule.messageProgram(context);
    // kube falls back to the static message when messageExpression fails or gives an empty or multi-line string.
    if (typeof message === 'string' && message.trim() !== '' && !/[\r\n]/.test(message)) return message;
  } catch {
    // fall through to the static message
  }
  return fallback;
}

function evaluateRule(
  rule: CompiledRule,
  value: unknown,
  old: { value: unknown } | undefined,
  schema: JSONSchemaProps,
  path: string,
  errors: FieldError[],
  budget: Budget,
): void {
  const type = schema.type ?? '';
  const field = errorField(path);
  const cost =
    rule.estimatedCost <= PER_CALL_LIMIT && !budget.metered
      ? 0
      : estimateCost(rule.ast, new ValueShape(old ? [value, old.value] : [value]));
  if (cost > PER_CALL_LIMIT) {
    errors.push({
      type: 'FieldValueInvalid',
      field,
      value: type,
      detail: `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`,
    });
    budget.exhausted = true;
    return;
  }
  budget.remaining -= cost;
  if (budget.remaining < 0) {
    errors.push({
      type: 'FieldValueInvalid',
      field,
      value: type,
      detail: 'validation failed due to running out of cost budget, no further validation rules will be run',
    });
    budget.exhausted = true;
    return;
  }
  const oldSelf = rule.optionalOldSelf ? (old ? Optional.of(old.value) : Optional.none()) : old?.value;
  const context = { self: value, oldSelf };
  let result: unknown;
  try {
    result = rule.program(context);
  } catch (error) {
    const text = celRuntimeError(error);
    errors.push({
      type: 'FieldValueInvalid',
      field,
      value: type,
      detail: /no (such|matching) overload/i.test(text)
        ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`
        : `${text} evaluating rule: ${ruleErrorString(rule)}`,
    });
    return;
  }
  if (result === true) return;
  const target = rule.fieldPath ? childPath(path, rule.fieldPath) : field;
  errors.push(fieldErrorForReason(rule.reason, target, type, messageFor(rule, context)));
}

function itemKey(item: unknown, keys: readonly string[]): string | undefined {
  if (!isObject(item)) return undefined;
  return JSON.stringify(keys.map((k) => (typeof item[k] === 'bigint' ? String(item[k]) : item[k])));
}

/** A node's value (and old value) as CEL values, converted once for all its rules, only when a rule runs. */
class NodeValues {
  readonly #convert: (value: unknown) => unknown;
  readonly #raw: unknown;
  readonly #rawOld: { value: unknown } | undefined;
  #value: unknown;
  #old: { value: unknown } | undefined;
  #converted = false;
  constructor(convert: (value: unknown) => unknown, raw: unknown, rawOld: { value: unknown } | undefined) {
    this.#convert = convert;
    this.#raw = raw;
    this.#rawOld = rawOld;
  }
  get(): [unknown, { value: unknown } | undefined] {
    if (!this.#converted) {
      this.#value = this.#convert(this.#raw);
      this.#old = this.#rawOld && { value: this.#convert(this.#rawOld.value) };
      this.#converted = true;
    }
    return [this.#value, this.#old];
  }
}

/** The root is unchanged when all but its metadata is, and the metadata rules can see (name, generateName). */
function rootUnchanged(value: unknown, old: unknown): boolean {
  if (!isObject(value) || !isObject(old)) return false;
  const keys = Object.keys(value).filter((k) => k !== 'metadata');
  if (keys.length !== Object.keys(old).filter((k) => k !== 'metadata').length) return false;
  if (!keys.every((k) => Object.hasOwn(old, k) && celEqual(value[k], old[k]))) return false;
  const meta = (isObject(value.metadata) ? value.metadata : {}) as Record<string, unknown>;
  const oldMeta = (isObject(old.metadata) ? old.metadata : {}) as Record<string, unknown>;
  return meta.name === oldMeta.name && meta.generateName === oldMeta.generateName;
}

/** Walks the JSON values along the compiled tree; rules see them converted (values.ts) at their node. */
function validateNode(
  node: CompiledNode,
  value: unknown,
  old: { value: unknown } | undefined,
  path: string,
  isRoot: boolean,
  errors: FieldError[],
  budget: Budget,
): void {
  if (value === undefined || value === null || budget.exhausted) return;
  const unchanged =
    old !== undefined && (isRoot ? rootUnchanged(value, old.value) : celEqual(old.value, value));
  // Ratcheting: an unchanged value's rules are not re-checked, nor anything below it (unchanged too), except
  // transition rules, which kube runs on every correlated value.
  if (unchanged && !node.transitionRulesBelow) return;
  if (node.rules.length > 0) {
    const values = new NodeValues(
      isRoot
        ? (v) => toCelRoot(v as Record<string, unknown>, node.schema)
        : (v) => toCelValue(v, node.schema),
      value,
      old,
    );
    for (const rule of node.rules) {
      if (budget.exhausted) return;
      if (rule.usesOldSelf ? old === undefined && !rule.optionalOldSelf : unchanged) continue;
      const [self, oldSelf] = values.get();
      evaluateRule(rule, self, oldSelf, node.schema, path, errors, budget);
    }
  }
  if (isObject(value)) {
    const oldObject = old !== undefined && isObject(old.value) ? old.value : undefined;
    for (const [name, child] of node.properties) {
      const before = oldObject && Object.hasOwn(oldObject, name) ? { value: oldObject[name] } : undefined;
      validateNode(child, value[name], before, childPath(path, name), false, errors, budget);
    }
    if (node.additionalProperties) {
      for (const [key, item] of Object.entries(value)) {
        if (node.schema.properties?.[key]) continue;
        const before = oldObject && Object.hasOwn(oldObject, key) ? { value: oldObject[key] } : undefined;
        validateNode(node.additionalProperties, item, before, `${path}[${key}]`, false, errors, budget);
      }
    }
  }
  if (Array.isArray(value) && node.items) {
    const keys =
      node.schema['x-kubernetes-list-type'] === 'map'
        ? (node.schema['x-kubernetes-list-map-keys'] ?? [])
        : undefined;
    let oldByKey: Map<string, unknown> | undefined;
    if (keys && old !== undefined && Array.isArray(old.value)) {
      oldByKey = new Map();
      for (const item of old.value as unknown[]) {
        const key = itemKey(item, keys);
        if (key !== undefined) oldByKey.set(key, item);
      }
    }
    value.forEach((item, i) => {
      const key = keys ? itemKey(item, keys) : undefined;
      const before =
        oldByKey && key !== undefined && oldByKey.has(key) ? { value: oldByKey.get(key) } : undefined;
      validateNode(node.items!, item, before, `${path}[${i}]`, false, errors, budget);
    });
  }
}

/**
 * Validates an object (and, on update, the stored one) against a version's compiled rules; returns kube's
 * field errors. `root` and `estimatedCost` come from
 * compileValidationRules.
 */
export function validateWithRules(
  root: CompiledNode,
  estimatedCost: number,
  object: Record<string, unknown>,
  old: Record<string, unknown> | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  const budget: Budget = {
    remaining: RUNTIME_COST_BUDGET,
    exhausted: false,
    metered: estimatedCost > RUNTIME_COST_BUDGET,
  };
  validateNode(root, object, old === undefined ? undefined : { value: old }, '', true, errors, budget);
  return errors;
}
