/**
 * A webhook's matchConditions: CEL expressions over `object`, `oldObject` and `request` (the AdmissionRequest)
 * that must all be true for the webhook to be called (kube-apiserver's matchconditions matcher), on the
 * repository's CEL environment (schema/cel). A false condition skips the webhook whatever the others do; an
 * error without a false one is a failed call, under failurePolicy. The `authorizer` variable is not offered.
 */

import type { Environment } from '@marcbachmann/cel-js';
import { kubernetesEnvironment, withPortableHas } from '../schema/cel/library.ts';
import { toCelValue } from '../schema/cel/values.ts';
import type { MatchCondition } from './webhook-types.ts';

type Program = (context: Record<string, unknown>) => unknown;

let environment: Environment | undefined;
function env(): Environment {
  environment ??= kubernetesEnvironment()
    .clone()
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn');
  return environment;
}

const compiled = new Map<string, Program | string>();

/** The expression's program, or why it cannot be one (kube's compile error wording, shortened). */
export function compileMatchCondition(expression: string): Program | string {
  let result = compiled.get(expression);
  if (result === undefined) {
    try {
      const parsed = env().parse(withPortableHas(expression));
      const checked = parsed.check();
      if (!checked.valid) result = `compilation failed: ${checked.error?.message ?? 'invalid expression'}`;
      else if (checked.type !== 'bool' && checked.type !== 'dyn') result = 'must evaluate to bool';
      else result = parsed as unknown as Program;
    } catch (error) {
      result = `compilation failed: ${(error as Error).message}`;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(expression, result);
  }
  return result;
}

/** true: call the webhook; false: skip it; a string: the evaluation failed (a failed call). */
export function evaluateMatchConditions(
  conditions: MatchCondition[],
  request: Record<string, unknown>,
): boolean | string {
  const context = {
    object: toCelValue(request.object ?? null, undefined),
    oldObject: toCelValue(request.oldObject ?? null, undefined),
    request: toCelValue(request, undefined),
  };
  const errors: string[] = [];
  for (const condition of conditions) {
    const program = compileMatchCondition(condition.expression ?? '');
    if (typeof program === 'string') {
      errors.push(`compilation error for condition ${JSON.stringify(condition.name)}: ${program}`);
      continue;
    }
    try {
      const result = program(context);
      if (result === false) return false;
      if (result !== true)
        errors.push(`condition ${JSON.stringify(condition.name)} did not evaluate to a bool`);
    } catch (error) {
      errors.push(
        `failed to evaluate condition ${JSON.stringify(condition.name)}: ${(error as Error).message}`,
      );
    }
  }
  return errors.length > 0 ? errors.join('; ') : true;
}
