import type { FieldError } from '@certkit/apimachinery';
import { GoSyntax, goQuote } from '@certkit/apimachinery/go-format';
import type { ASTNode, Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../types.ts';
import {
  cardinality,
  estimateCost,
  exceedFactor,
  SchemaShape,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cost.ts';
import { findUndefinedField } from './fields.ts';
import { kubernetesEnvironment, RENAMED_CALL_PREFIX, withPortableHas } from './library.ts';

/**
 * Compiles a CRD version's `x-kubernetes-validations` once, into a tree that mirrors the schema but holds
 * only the nodes with rules at or below them: parse and type-check each rule against the type its node
 * declares (as k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go does), and estimate
 * its cost.
 */

export type RuleReason =
  'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
const REASONS: readonly RuleReason[] = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];

interface ValidationRule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

type Program = (context: Record<string, unknown>) => unknown;

export interface CompiledRule {
  rule: string;
  program: Program;
  usesOldSelf: boolean;
  optionalOldSelf: boolean;
  message: string | undefined;
  messageProgram: Program | undefined;
  reason: RuleReason;
  /** fieldPath without its leading dot, appended to the node's path in errors. */
  fieldPath: string | undefined;
  ast: ASTNode;
  /** The estimated cost with the schema's bounds: the most one evaluation can cost. */
  estimatedCost: number;
}

export interface CompiledNode {
  schema: JSONSchemaProps;
  rules: CompiledRule[];
  /** Whether a rule here or below names oldSelf: only those run on a value an update left unchanged. */
  transitionRulesBelow: boolean;
  properties: Map<string, CompiledNode>;
  items: CompiledNode | undefined;
  additionalProperties: CompiledNode | undefined;
}

let baseEnvironment: Environment | undefined;

/** One environment per declared type of `self`: the base one (extension functions) is built once. */
const environments = new Map<string, Environment>();

function environmentFor(selfType: string, oldSelfOptional: boolean): Environment {
  const key = `${selfType}|${oldSelfOptional}`;
  let env = environments.get(key);
  if (env === undefined) {
    baseEnvironment ??= kubernetesEnvironment();
    env = baseEnvironment
      .clone()
      .registerVariable('self', selfType)
      .registerVariable('oldSelf', oldSelfOptional ? `optional<${selfType}>` : selfType);
    environments.set(key, env);
  }
  return env;
}

/**
 * The CEL type a schema node declares. Scalars, lists and maps are typed as kube types them; objects with
 * properties are `map<string, dyn>` (kube declares a type per object; see ADR 1701), int-or-string and
 * preserved-unknown nodes are `dyn`.
 */
export function celType(schema: JSONSchemaProps | undefined): string {
  if (schema === undefined || schema['x-kubernetes-int-or-string']) return 'dyn';
  switch (schema.type) {
    case 'string':
      // As kube's declared types: date-time and date strings are timestamps, duration strings durations.
      if (schema.format === 'date-time' || schema.format === 'date') return 'google.protobuf.Timestamp';
      return schema.format === 'duration' ? 'google.protobuf.Duration' : 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${celType(schema.items)}>`;
    case 'object':
      if (typeof schema.additionalProperties === 'object' && !schema.properties)
        return `map<string, ${celType(schema.additionalProperties)}>`;
      return 'map<string, dyn>';
    default:
      return 'dyn';
  }
}

function referencesOldSelf(node: ASTNode): boolean {
  if (node.op === 'id') return node.args === 'oldSelf';
  const args = node.args as unknown;
  const parts = Array.isArray(args) ? (args as unknown[]).flat() : [args];
  return parts.some(
    (part) => part !== null && typeof part === 'object' && 'op' in part && referencesOldSelf(part as ASTNode),
  );
}

/**
 * A compile error as cel-go prints it after "compilation failed: ": `ERROR: <input>:line:column: text`. The
 * library's own wording is kept, except for undeclared names, which kube users know by cel-go's words.
 */
function celErrorText(error: unknown, text: string): string {
  const e = error as { message?: string; summary?: string; code?: string; range?: { start: number } };
  let summary = e.summary ?? (e.message ?? String(error)).split('\n')[0]!.trim();
  const unknown = /^Unknown variable: (.*)$/.exec(summary);
  if (e.code === 'unknown_variable' && unknown)
    summary = `undeclared reference to '${unknown[1]}' (in container '')`;
  if (e.range === undefined) return `ERROR: <input>: ${summary}`;
  // Offsets are in the rewritten text (has → k8s_has, matches → k8s_matches, see withPortableHas): map them back.
  const offset = Math.max(
    0,
    Math.min(
      text.length,
      e.range.start - RENAMED_CALL_PREFIX.length * countRenamedBefore(text, e.range.start),
    ),
  );
  const before = text.slice(0, offset).split('\n');
  return `ERROR: <input>:${before.length}:${before.at(-1)!.length + 1}: ${summary}`;
}

function countRenamedBefore(text: string, offset: number): number {
  const rewritten = withPortableHas(text);
  let count = 0;
  for (const name of ['k8s_has(', 'k8s_matches(']) {
    for (let i = rewritten.indexOf(name, 0); i >= 0 && i < offset; i = rewritten.indexOf(name, i + 1))
      count++;
  }
  return count;
}

/** The rule as Go's %#v prints apiextensions.ValidationRule, which kube shows as the invalid value. */
function goRule(rule: ValidationRule): GoSyntax {
  const reason =
    rule.reason === undefined ? '(*apiextensions.FieldValueErrorReason)(nil)' : `"${rule.reason}"`;
  const optional = rule.optionalOldSelf === undefined ? '(*bool)(nil)' : `${rule.optionalOldSelf}`;
  return new GoSyntax(
    `apiextensions.ValidationRule{Rule:${goQuote(rule.rule ?? '')}, Message:${goQuote(rule.message ?? '')}, MessageExpression:${goQuote(rule.messageExpression ?? '')}, Reason:${reason}, FieldPath:${goQuote(rule.fieldPath ?? '')}, OptionalOldSelf:${optional}}`,
  );
}

const WRONG_TYPE = 'wrong type';

/** A compiled expression, refused when it selects a field its node's schema does not have (fields.ts). */
function withFieldsChecked(
  compiled: ReturnType<typeof compileChecked>,
  schema: JSONSchemaProps,
  isRoot: boolean,
  text: string,
): ReturnType<typeof compileChecked> {
  if (typeof compiled === 'string') return compiled;
  const undefinedField = findUndefinedField(compiled.ast, schema, isRoot);
  if (undefinedField === undefined) return compiled;
  return celErrorText(
    { summary: `undefined field '${undefinedField.name}'`, range: { start: undefinedField.offset } },
    text,
  );
}

/**
 * Parses and type-checks an expression that must give `type` (or dyn, decided at runtime); returns the
 * program, or the compile error's text (WRONG_TYPE when it compiles to another type).
 */
function compileChecked(
  text: string,
  env: Environment,
  type: string,
): { ast: ASTNode; program: Program } | string {
  try {
    const parsed = env.parse(withPortableHas(text));
    const checked = parsed.check();
    if (!checked.valid) return celErrorText(checked.error, text);
    if (checked.type !== type && checked.type !== 'dyn') return WRONG_TYPE;
    return { ast: parsed.ast, program: parsed as unknown as Program };
  } catch (error) {
    return celErrorText(error, text);
  }
}

/** A fieldPath must name a property below the node: `.a.b`, `['a.b']`. Returns the path's schema, or undefined. */
function resolveFieldPath(schema: JSONSchemaProps, fieldPath: string): string | undefined {
  const parts = /^(?:\.[A-Za-z_][A-Za-z0-9_-]*|\['[^']*'\])+$/.test(fieldPath)
    ? [...fieldPath.matchAll(/\.([A-Za-z_][A-Za-z0-9_-]*)|\['([^']*)'\]/g)].map((m) => m[1] ?? m[2]!)
    : undefined;
  if (parts === undefined) return undefined;
  let node: JSONSchemaProps | undefined = schema;
  for (const part of parts) {
    node =
      node?.properties?.[part] ??
      (typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined);
    if (node === undefined) return undefined;
  }
  return fieldPath.replace(/^\./, '');
}

interface CompileState {
  errors: FieldError[];
  totalCost: number;
}

function compileRules(
  isRoot: boolean,
  schema: JSONSchemaProps,
  path: string,
  ancestors: JSONSchemaProps[],
  state: CompileState,
): CompiledRule[] {
  const compiled: CompiledRule[] = [];
  const rules = (schema['x-kubernetes-validations'] ?? []) as ValidationRule[];
  const selfType = celType(schema);
  rules.forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (!rule.rule?.trim()) {
      state.errors.push({ type: 'FieldValueRequired', field: `${at}.rule`, detail: 'rule is not specified' });
      return;
    }
    if (rule.reason !== undefined && !REASONS.includes(rule.reason as RuleReason)) {
      state.errors.push({
        type: 'FieldValueNotSupported',
        field: `${at}.reason`,
        value: rule.reason,
        detail: `supported values: ${REASONS.map((r) => `"${r}"`).join(', ')}`,
      });
      return;
    }
    let fieldPath: string | undefined;
    if (rule.fieldPath) {
      fieldPath = resolveFieldPath(schema, rule.fieldPath);
      if (fieldPath === undefined) {
        state.errors.push({
          type: 'FieldValueInvalid',
          field: `${at}.fieldPath`,
          value: rule.fieldPath,
          detail: `fieldPath must be a valid path`,
        });
        return;
      }
    }
    const optionalOldSelf = rule.optionalOldSelf === true;
    const main = withFieldsChecked(
      compileChecked(rule.rule, environmentFor(selfType, optionalOldSelf), 'bool'),
      schema,
      isRoot,
      rule.rule,
    );
    if (typeof main === 'string') {
      state.errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail:
          main === WRONG_TYPE ? 'cel expression must evaluate to a bool' : `compilation failed: ${main}`,
      });
      return;
    }
    const usesOldSelf = referencesOldSelf(main.ast);
    if (optionalOldSelf && !usesOldSelf) {
      state.errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.optionalOldSelf`,
        value: true,
        detail: 'may not be set if oldSelf is not used in rule',
      });
      return;
    }
    let messageProgram: Program | undefined;
    if (rule.messageExpression) {
      const message = withFieldsChecked(
        compileChecked(rule.messageExpression, environmentFor(selfType, optionalOldSelf), 'string'),
        schema,
        isRoot,
        rule.messageExpression,
      );
      if (typeof message === 'string') {
        state.errors.push({
          type: 'FieldValueInvalid',
          field: `${at}.messageExpression`,
          value: goRule(rule),
          detail:
            message === WRONG_TYPE
              ? 'must evaluate to a string'
              : `messageExpression compilation failed: ${message}`,
        });
        return;
      }
      messageProgram = message.program;
    }
    const cost = estimateCost(main.ast, new SchemaShape(schema));
    if (cost > STATIC_ESTIMATED_COST_LIMIT) {
      state.errors.push({
        type: 'FieldValueForbidden',
        field: `${at}.rule`,
        detail: `estimated rule cost exceeds budget by factor of ${exceedFactor(cost, STATIC_ESTIMATED_COST_LIMIT)} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      });
    }
    state.totalCost += cost * cardinality(ancestors);
    compiled.push({
      rule: rule.rule,
      program: main.program,
      usesOldSelf,
      optionalOldSelf,
      message: rule.message,
      messageProgram,
      reason: (rule.reason as RuleReason | undefined) ?? 'FieldValueInvalid',
      fieldPath,
      ast: main.ast,
      estimatedCost: cost,
    });
  });
  return compiled;
}

function compileNode(
  isRoot: boolean,
  schema: JSONSchemaProps,
  path: string,
  ancestors: JSONSchemaProps[],
  state: CompileState,
): CompiledNode | undefined {
  const rules = compileRules(isRoot, schema, path, ancestors, state);
  const properties = new Map<string, CompiledNode>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const child = compileNode(false, property, `${path}.properties[${name}]`, ancestors, state);
    if (child) properties.set(name, child);
  }
  const items = schema.items
    ? compileNode(false, schema.items, `${path}.items`, [...ancestors, schema], state)
    : undefined;
  const additionalProperties =
    typeof schema.additionalProperties === 'object'
      ? compileNode(
          false,
          schema.additionalProperties,
          `${path}.additionalProperties`,
          [...ancestors, schema],
          state,
        )
      : undefined;
  if (rules.length === 0 && properties.size === 0 && !items && !additionalProperties) return undefined;
  const transitionRulesBelow =
    rules.some((rule) => rule.usesOldSelf) ||
    [...properties.values(), items, additionalProperties].some(
      (child) => child?.transitionRulesBelow === true,
    );
  return { schema, rules, transitionRulesBelow, properties, items, additionalProperties };
}

/** True when any node of the schema carries rules (the common case, none, costs nothing more). */
export function hasValidationRules(schema: JSONSchemaProps | undefined): boolean {
  if (schema === undefined) return false;
  if (schema['x-kubernetes-validations']?.length) return true;
  if (Object.values(schema.properties ?? {}).some(hasValidationRules)) return true;
  if (hasValidationRules(schema.items)) return true;
  return typeof schema.additionalProperties === 'object' && hasValidationRules(schema.additionalProperties);
}

/**
 * Compiles a version's rules. `path` is where the schema sits in the CRD, for the errors (compile errors,
 * cost over the limits) kube returns when the CRD is written.
 */
export function compileValidationRules(
  schema: JSONSchemaProps,
  path: string,
): { root: CompiledNode | undefined; errors: FieldError[]; estimatedCost: number } {
  if (!hasValidationRules(schema)) return { root: undefined, errors: [], estimatedCost: 0 };
  const state: CompileState = { errors: [], totalCost: 0 };
  const root = compileNode(true, schema, path, [], state);
  if (state.totalCost > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    state.errors.push({
      type: 'FieldValueForbidden',
      field: path,
      detail: `total CRD cost exceeds budget by factor of ${exceedFactor(state.totalCost, STATIC_ESTIMATED_CRD_COST_LIMIT)} (try adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    });
  }
  return { root, errors: state.errors, estimatedCost: state.totalCost };
}
