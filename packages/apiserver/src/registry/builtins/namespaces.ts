/**
 * Namespaces (core/v1, cluster-scoped), with kube-apiserver's three update strategies
 * (pkg/registry/core/namespace/strategy.go): the main resource keeps spec.finalizers and status as stored,
 * `status` keeps the spec and holds the phase to the deletion timestamp, and `finalize` (PUT only) writes
 * spec.finalizers alone; the namespace goes once a finalize leaves none while it is being deleted.
 */

import { type FieldError, invalid, qualifiedNameErrors, type StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';

/** The spec finalizer of the namespace lifecycle (controllers/namespaces.ts), api.FinalizerKubernetes. */
export const KUBERNETES_FINALIZER = 'kubernetes';
/** Finalizer names that need no domain (IsStandardFinalizerName). */
const STANDARD_FINALIZERS = new Set([KUBERNETES_FINALIZER, 'orphan', 'foregroundDeletion']);

interface NamespaceParts {
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

const partsOf = (obj: StoredObject) => obj as StoredObject & NamespaceParts;

/** validateFinalizerName: a qualified name, and one without a domain only if it is a standard one. */
function finalizerNameErrors(name: string, field: string): FieldError[] {
  const errors = qualifiedNameErrors(name).map((msg) => invalid(field, name, msg));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name))
    errors.push(invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  return errors;
}

/**
 * The spec's finalizers, each checked; `indexed` as the finalize strategy words the path (`spec.finalizers[0]`),
 * otherwise as ValidateNamespace does (`spec.finalizers` for each).
 */
function specFinalizerErrors(obj: StoredObject, indexed: boolean): FieldError[] {
  return (partsOf(obj).spec?.finalizers ?? []).flatMap((f, i) =>
    finalizerNameErrors(String(f ?? ''), indexed ? `spec.finalizers[${i}]` : 'spec.finalizers'),
  );
}

/** ValidateNamespaceStatusUpdate's phase rule; `status.Phase` as upstream spells the path. */
function phaseErrors(obj: StoredObject): FieldError[] {
  const phase = partsOf(obj).status?.phase ?? '';
  if (!obj.metadata.deletionTimestamp) {
    return phase === 'Active'
      ? []
      : [invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  }
  return phase === 'Terminating'
    ? []
    : [invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
}

export const namespaces = builtin({
  resource: 'namespaces',
  model: 'V1Namespace',
  singular: 'namespace',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  statusSubresource: true,
  updateOnlySubresources: ['finalize'],
  // `name` is kept by kube-apiserver for backward compatibility (NamespaceToSelectableFields).
  selectableFields: ['status.phase', 'name'],
  columns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the namespace' },
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name, partsOf(obj).status?.phase ?? '', age(obj, now)],
  fieldValues: (obj) => ({ 'status.phase': partsOf(obj).status?.phase ?? '', name: obj.metadata.name ?? '' }),
  // kube-apiserver defaults this label (SetDefaults_Namespace), so admission webhooks and their
  // namespaceSelectors see it on a Namespace's own create and update; onCreate sets it again after them.
  defaults(obj) {
    if (obj.metadata.name)
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name };
  },
  onCreate(obj) {
    // The "kubernetes" finalizer keeps a deleted namespace until its contents are gone
    // (controllers/namespaces.ts); the client's own spec finalizers stay before it (PrepareForCreate).
    const given = partsOf(obj).spec?.finalizers ?? [];
    const finalizers = given.includes(KUBERNETES_FINALIZER) ? given : [...given, KUBERNETES_FINALIZER];
    obj.spec = { ...(obj.spec as object), finalizers };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  },
  resetFields(obj, current, subresource) {
    // spec.finalizers is a Namespace's whole spec.
    if (subresource === undefined) {
      obj.spec = current.spec;
      obj.status = current.status;
    } else if (subresource === 'status') obj.spec = current.spec;
    else if (subresource === 'finalize') obj.status = current.status;
  },
  // On updates the spec is the stored one (resetFields) or finalize's, which subresourceAdmit checks.
  validate: (obj, old) => (old ? [] : specFinalizerErrors(obj, false)),
  subresourceAdmit(obj, _old, subresource) {
    if (subresource === 'status') return phaseErrors(obj);
    if (subresource === 'finalize') return specFinalizerErrors(obj, true);
    return [];
  },
});
