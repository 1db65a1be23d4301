/**
 * Label and field selectors on a resource's objects: the fields a resource can be selected by, and matchers.
 */

import {
  type FieldSelector,
  type LabelSelector,
  newBadRequest,
  type StoredObject,
} from '@certkit/apimachinery';
import type { ObjectStore } from './store.ts';

/** Fields a field selector can name on this resource. */
export function fieldsOf(store: ObjectStore, obj: StoredObject): Record<string, string> {
  const fields = metadataFields(store, obj.metadata);
  return store.def.fieldValues ? { ...fields, ...store.def.fieldValues(obj) } : fields;
}

export function metadataFields(store: ObjectStore, meta: StoredObject['metadata']): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': meta.name ?? '' };
  if (store.def.namespaced) fields['metadata.namespace'] = meta.namespace ?? '';
  return fields;
}

/** 400 for a field selector naming a field this resource cannot be selected by. */
export function checkFieldSelector(store: ObjectStore, selector: FieldSelector): void {
  for (const r of selector.requirements) {
    const known =
      r.field === 'metadata.name' ||
      (store.def.namespaced && r.field === 'metadata.namespace') ||
      store.def.selectableFields.includes(r.field);
    if (!known) throw newBadRequest(`field label not supported: ${r.field}`);
  }
}

export function matcher(
  store: ObjectStore,
  labels: LabelSelector,
  fields: FieldSelector,
): (obj: StoredObject) => boolean {
  if (labels.empty && fields.empty) return () => true;
  return (obj) =>
    labels.matches(obj.metadata.labels) && (fields.empty || fields.matches(fieldsOf(store, obj)));
}

/**
 * matcher() on an object's metadata alone, for selectors that name nothing else (labels, metadata.name,
 * metadata.namespace); undefined for selectors that do.
 */
export function metadataMatcher(
  store: ObjectStore,
  labels: LabelSelector,
  fields: FieldSelector,
): ((meta: StoredObject['metadata']) => boolean) | undefined {
  if (fields.requirements.some((r) => r.field !== 'metadata.name' && r.field !== 'metadata.namespace')) {
    return undefined;
  }
  return (meta) =>
    labels.matches(meta.labels) && (fields.empty || fields.matches(metadataFields(store, meta)));
}
