import type { FieldError } from '@certkit/apimachinery';
import { GoSyntax, goQuote } from '@certkit/apimachinery/go-format';
import type { ASTNode, Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../../registry/schema.ts';
import {
  cardinality,
  estimateCost,
  exceedFactor,
  SchemaShape,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cost.ts';
import { kubernetesEnvironment, withPortableHas } from './library.ts';

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
}

export interface CompiledNode {
  schema: JSONSchemaProps;
  rules: CompiledRule[];
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
      return 'string';
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

/** The message of a CEL error as kube prints it after "compilation failed: ": the first line only. */
function celErrorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return `ERROR: <input>: ${text.split('\n')[0]!.trim()}`;
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

function compileExpression(env: Environment, text: string): { ast: ASTNode; program: Program; type: string } {
  const parsed = env.parse(withPortableHas(text));
  const checked = parsed.check();
  if (!checked.valid) throw checked.error;
  return { ast: parsed.ast, program: parsed as unknown as Program, type: checked.type ?? 'dyn' };
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
    let main: ReturnType<typeof compileExpression>;
    try {
      main = compileExpression(environmentFor(selfType, optionalOldSelf), rule.rule);
      if (main.type !== 'bool' && main.type !== 'dyn')
        throw new Error(`cel expression must evaluate to a bool`);
    } catch (error) {
      state.errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail: `compilation failed: ${celErrorText(error)}`,
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
      try {
        const message = compileExpression(environmentFor(selfType, optionalOldSelf), rule.messageExpression);
        if (message.type !== 'string' && message.type !== 'dyn') throw new Error('must evaluate to a string');
        messageProgram = message.program;
      } catch (error) {
        state.errors.push({
          type: 'FieldValueInvalid',
          field: `${at}.messageExpression`,
          value: goRule(rule),
          detail: `messageExpression compilation failed: ${celErrorText(error)}`,
        });
        return;
      }
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
    });
  });
  return compiled;
}

function compileNode(
  schema: JSONSchemaProps,
  path: string,
  ancestors: JSONSchemaProps[],
  state: CompileState,
): CompiledNode | undefined {
  const rules = compileRules(schema, path, ancestors, state);
  const properties = new Map<string, CompiledNode>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const child = compileNode(property, `${path}.properties[${name}]`, ancestors, state);
    if (child) properties.set(name, child);
  }
  const items = schema.items
    ? compileNode(schema.items, `${path}.items`, [...ancestors, schema], state)
    : undefined;
  const additionalProperties =
    typeof schema.additionalProperties === 'object'
      ? compileNode(
          schema.additionalProperties,
          `${path}.additionalProperties`,
          [...ancestors, schema],
          state,
        )
      : undefined;
  if (rules.length === 0 && properties.size === 0 && !items && !additionalProperties) return undefined;
  return { schema, rules, properties, items, additionalProperties };
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
): { root: CompiledNode | undefined; errors: FieldError[] } {
  if (!hasValidationRules(schema)) return { root: undefined, errors: [] };
  const state: CompileState = { errors: [], totalCost: 0 };
  const root = compileNode(schema, path, [], state);
  if (state.totalCost > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    state.errors.push({
      type: 'FieldValueForbidden',
      field: path,
      detail: `total CRD cost exceeds budget by factor of ${exceedFactor(state.totalCost, STATIC_ESTIMATED_CRD_COST_LIMIT)} (try adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    });
  }
  return { root, errors: state.errors };
}
