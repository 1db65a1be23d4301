import type { FieldError } from '@certkit/apimachinery';
import { Optional } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../../registry/schema.ts';
import type { CompiledNode, CompiledRule, RuleReason } from './compile.ts';
import { estimateCost, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, ValueShape } from './cost.ts';
import { escapeProperty } from './names.ts';
import { celEqual, toCelRoot } from './values.ts';

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

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function itemKey(item: unknown, keys: readonly string[]): string | undefined {
  if (!isObject(item)) return undefined;
  return JSON.stringify(keys.map((k) => (typeof item[k] === 'bigint' ? String(item[k]) : item[k])));
}

function validateNode(
  node: CompiledNode,
  value: unknown,
  old: { value: unknown } | undefined,
  path: string,
  errors: FieldError[],
  budget: Budget,
): void {
  if (value === undefined || value === null || budget.exhausted) return;
  const unchanged = old !== undefined && celEqual(old.value, value);
  // Ratcheting: an unchanged value's rules are not re-checked, nor anything below it (unchanged too), except
  // transition rules, which kube runs on every correlated value.
  if (unchanged && !node.transitionRulesBelow) return;
  for (const rule of node.rules) {
    if (budget.exhausted) return;
    if (rule.usesOldSelf ? old === undefined && !rule.optionalOldSelf : unchanged) continue;
    evaluateRule(rule, value, old, node.schema, path, errors, budget);
  }
  if (isObject(value)) {
    const oldObject = old !== undefined && isObject(old.value) ? old.value : undefined;
    for (const [name, child] of node.properties) {
      // Values hold properties under the names rules use (values.ts); errors name them as the JSON does.
      const key = escapeProperty(name);
      if (key === undefined) continue;
      const before = oldObject && Object.hasOwn(oldObject, key) ? { value: oldObject[key] } : undefined;
      validateNode(child, value[key], before, childPath(path, name), errors, budget);
    }
    if (node.additionalProperties) {
      for (const [key, item] of Object.entries(value)) {
        if (node.schema.properties?.[key]) continue;
        const before = oldObject && Object.hasOwn(oldObject, key) ? { value: oldObject[key] } : undefined;
        validateNode(node.additionalProperties, item, before, `${path}[${key}]`, errors, budget);
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
      validateNode(node.items!, item, before, `${path}[${i}]`, errors, budget);
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
  const self = toCelRoot(object, root.schema);
  const before = old === undefined ? undefined : { value: toCelRoot(old, root.schema) };
  validateNode(root, self, before, '', errors, budget);
  return errors;
}
