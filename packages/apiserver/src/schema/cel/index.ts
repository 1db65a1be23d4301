import type { FieldError } from '@certkit/apimachinery';
import type { JSONSchemaProps } from '../types.ts';
import { compileValidationRules, type CompiledNode } from './compile.ts';
import { validateWithRules } from './validate.ts';

/** CEL validation rules (`x-kubernetes-validations`) of custom resources, as kube-apiserver evaluates them. */

export { compileValidationRules, hasValidationRules } from './compile.ts';

/** Error types after which kube does not run CEL rules: the rules could not rely on the schema's types. */
const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** A CRD version's rules, compiled once when the CRD is served and run on every write. */
export class CustomResourceRules {
  readonly #root: CompiledNode | undefined;
  readonly #estimatedCost: number;

  constructor(schema: JSONSchemaProps) {
    // A CRD reaches here only after validation compiled the same rules without errors.
    const { root, estimatedCost } = compileValidationRules(schema, '');
    this.#root = root;
    this.#estimatedCost = estimatedCost;
  }

  /** The rules' errors for a write, given the schema validation's errors so far (kube's hasBlockingErr). */
  validate(
    object: Record<string, unknown>,
    old: Record<string, unknown> | undefined,
    schemaErrors: readonly FieldError[],
  ): FieldError[] {
    if (this.#root === undefined) return [];
    if (schemaErrors.some((e) => BLOCKING.has(e.type))) {
      return [
        {
          type: 'FieldValueInvalid',
          field: '<nil>',
          value: null,
          detail:
            'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        },
      ];
    }
    return validateWithRules(this.#root, this.#estimatedCost, object, old);
  }
}
