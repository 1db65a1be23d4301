/** Namespaces (core/v1, cluster-scoped). */

import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';

export const namespaces = builtin({
  resource: 'namespaces',
  model: 'V1Namespace',
  singular: 'namespace',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  selectableFields: ['status.phase'],
  columns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the namespace' },
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name, (obj.status as { phase?: string })?.phase ?? '', age(obj, now)],
  fieldValues: (obj) => ({ 'status.phase': (obj.status as { phase?: string })?.phase ?? '' }),
  onCreate(obj) {
    // The "kubernetes" finalizer keeps a deleted namespace until its contents are gone
    // (controllers/namespaces.ts).
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  },
});
