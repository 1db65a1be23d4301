import type { ASTNode } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../types.ts';
import { escapeProperty } from './names.ts';

/**
 * The part of kube's type checking the library cannot do, since objects are declared to it as
 * `map<string, dyn>`: a field selected from an object whose schema lists its properties must be one of them
 * (cel-go: "undefined field 'x'"). Follows `self`, `oldSelf` (and `oldSelf.value()`), iteration variables of
 * the macros, and index expressions through the schema.
 */

const RESOURCE_FIELDS: Record<string, JSONSchemaProps> = {
  apiVersion: { type: 'string' },
  kind: { type: 'string' },
  metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
};

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

export interface UndefinedField {
  name: string;
  /** Offset of the selection in the rule's (rewritten) text. */
  offset: number;
}

/** The properties a rule can select on a node, or undefined when any name may be selected. */
function selectable(schema: JSONSchemaProps, resource: boolean): Record<string, JSONSchemaProps> | undefined {
  if (schema['x-kubernetes-preserve-unknown-fields'] || schema['x-kubernetes-int-or-string'])
    return undefined;
  if (schema.properties === undefined && !resource) return undefined;
  if (typeof schema.additionalProperties === 'object' || schema.additionalProperties === true)
    return undefined;
  return resource ? { ...RESOURCE_FIELDS, ...schema.properties } : schema.properties;
}

function isResource(schema: JSONSchemaProps, root: JSONSchemaProps, isRoot: boolean): boolean {
  return (isRoot && schema === root) || schema['x-kubernetes-embedded-resource'] === true;
}

class FieldChecker {
  readonly root: JSONSchemaProps;
  readonly isRoot: boolean;
  constructor(root: JSONSchemaProps, isRoot: boolean) {
    this.root = root;
    this.isRoot = isRoot;
  }

  /** The schema of the node's value when known; throws UndefinedField. */
  check(node: ASTNode, scope: ReadonlyMap<string, JSONSchemaProps>): JSONSchemaProps | undefined {
    const args = node.args as unknown;
    switch (node.op) {
      case 'id':
        return scope.get(args as string);
      case '.':
      case '.?': {
        const [target, name] = args as [ASTNode, string];
        const schema = this.check(target, scope);
        if (schema === undefined) return undefined;
        if (typeof schema.additionalProperties === 'object') return schema.additionalProperties;
        const fields = selectable(schema, isResource(schema, this.root, this.isRoot));
        if (fields === undefined) return undefined;
        for (const [key, property] of Object.entries(fields))
          if (escapeProperty(key) === name) return property;
        throw { name, offset: Math.max(0, node.pos - 1) } satisfies UndefinedField;
      }
      case '[]':
      case '[?]': {
        const [target, index] = args as [ASTNode, ASTNode];
        const schema = this.check(target, scope);
        this.check(index, scope);
        if (schema?.type === 'array') return schema.items;
        return typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      }
      case 'rcall': {
        const [name, receiver, callArgs] = args as [string, ASTNode, ASTNode[]];
        const schema = this.check(receiver, scope);
        if (COMPREHENSIONS.has(name) && callArgs.length >= 2 && callArgs[0]!.op === 'id') {
          const inner = new Map(scope);
          const element = schema?.type === 'array' ? schema.items : schema ? { type: 'string' } : undefined;
          if (element) inner.set(callArgs[0]!.args as string, element);
          else inner.delete(callArgs[0]!.args as string);
          for (const arg of callArgs.slice(1)) this.check(arg, inner);
          return undefined;
        }
        for (const arg of callArgs) this.check(arg, scope);
        // optionalOldSelf: oldSelf.value() and oldSelf.orValue(x) have the node's schema.
        if (receiver.op === 'id' && receiver.args === 'oldSelf' && (name === 'value' || name === 'orValue'))
          return schema;
        return undefined;
      }
      default: {
        const operands = Array.isArray(args) ? (args as unknown[]).flat() : [args];
        for (const operand of operands)
          if (operand !== null && typeof operand === 'object' && 'op' in operand)
            this.check(operand as ASTNode, scope);
        return undefined;
      }
    }
  }
}

/** The first field a rule selects that its node's schema does not have, if any. */
export function findUndefinedField(
  ast: ASTNode,
  schema: JSONSchemaProps,
  isRoot: boolean,
): UndefinedField | undefined {
  try {
    new FieldChecker(schema, isRoot).check(
      ast,
      new Map([
        ['self', schema],
        ['oldSelf', schema],
      ]),
    );
    return undefined;
  } catch (error) {
    if (error !== null && typeof error === 'object' && 'offset' in error) return error as UndefinedField;
    throw error;
  }
}
