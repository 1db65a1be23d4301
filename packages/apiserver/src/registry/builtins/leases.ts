/** Leases (coordination.k8s.io/v1). */

import type { FieldError } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';

export const leases = builtin({
  group: 'coordination.k8s.io',
  resource: 'leases',
  model: 'V1Lease',
  singular: 'lease',
  kind: 'Lease',
  namespaced: true,
  columns: [
    nameColumn,
    { name: 'Holder', type: 'string', description: 'The holder of the lease.' },
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name,
    (obj.spec as { holderIdentity?: string })?.holderIdentity ?? '',
    age(obj, now),
  ],
  validate(obj) {
    const errs: FieldError[] = [];
    const spec = (obj.spec as Record<string, unknown>) ?? {};
    for (const field of ['leaseDurationSeconds', 'leaseTransitions']) {
      const v = spec[field];
      if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < 0)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `spec.${field}`,
          value: v,
          detail: 'must be greater than or equal to 0',
        });
      }
    }
    return errs;
  },
});
