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
  // kube-apiserver defaults this label (SetDefaults_Namespace), so admission webhooks and their
  // namespaceSelectors see it on a Namespace's own create and update; onCreate sets it again after them.
  defaults(obj) {
    if (obj.metadata.name)
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name };
  },
  onCreate(obj) {
    // The "kubernetes" finalizer keeps a deleted namespace until its contents are gone
    // (controllers/namespaces.ts).
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  },
});
