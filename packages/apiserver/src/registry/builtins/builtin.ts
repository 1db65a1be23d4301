/** The defaults every built-in kind shares (core group, v1, all verbs, the kind's strategic merge schema). */

import type { StoredObject } from '@certkit/apimachinery';
import { smpSchemaFor } from '../../patch/strategic-merge-patch.ts';
import { ALL_VERBS, type ResourceDefinition } from '../resource.ts';
import { humanAge } from '../printing.ts';

export function age(obj: StoredObject, now: number): string {
  return humanAge(obj.metadata.creationTimestamp, now);
}

export function builtin(
  partial: Pick<ResourceDefinition, 'resource' | 'singular' | 'kind' | 'namespaced' | 'columns' | 'cells'> &
    Partial<ResourceDefinition>,
): ResourceDefinition {
  return {
    group: '',
    versions: ['v1'],
    listKind: `${partial.kind}List`,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    statusSubresource: false,
    tracksGeneration: false,
    allowUnconditionalUpdate: true,
    custom: false,
    selectableFields: [],
    strategicMerge: smpSchemaFor(partial.kind),
    ...partial,
  };
}
