/**
 * Deletion: preconditions, graceful deletion while finalizers hold an object (deletionTimestamp, the orphan and
 * foreground finalizers of propagationPolicy), and deletecollection.
 */

import {
  formatTime,
  type ListOptions,
  newConflict,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { ConflictError } from '../../storage/types.ts';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../metadata.ts';
import { rememberStoredValue } from '../stored-json.ts';
import type { DeleteOptions } from './types.ts';
import { MAX_PATCH_RETRIES, type ObjectStore } from './store.ts';
import { list } from './list.ts';

/** True while something still holds a deleting object: finalizers, or a namespace's own spec finalizers. */
export function held(store: ObjectStore, obj: StoredObject): boolean {
  if ((obj.metadata.finalizers ?? []).length > 0) return true;
  return (
    store.def.resource === 'namespaces' &&
    ((obj.spec as { finalizers?: string[] })?.finalizers ?? []).length > 0
  );
}

export async function deleteObject(
  store: ObjectStore,
  namespace: string | undefined,
  name: string,
  options: DeleteOptions = {},
): Promise<StoredObject> {
  const request = options.admission;
  const webhooks = request ? store.context.webhooks : undefined;
  // As kube-apiserver's delete handler: mutating webhooks are called with no object (they cannot change one).
  if (webhooks) {
    const mutated = webhooks.mutate(store.def, {
      operation: 'DELETE',
      object: undefined,
      oldObject: undefined,
      request: request!,
      name,
      namespace: namespace ?? '',
    });
    if (mutated instanceof Promise) await mutated;
  }
  for (let attempt = 0; ; attempt++) {
    const { obj: current, value } = await store.getStored(namespace, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw newConflict(
        store.def,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw newConflict(
        store.def,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const validated = webhooks?.validate(store.def, {
      operation: 'DELETE',
      object: undefined,
      oldObject: current,
      request: request!,
    });
    if (validated) await validated;
    const next = markDeleting(store, current, options);
    if (options.dryRun) return next;
    const key = store.key(namespace, name);
    try {
      if (held(store, next)) return await store.write(current, next, options);
      const { revision } = await store.storage.delete(key, Number(current.metadata.resourceVersion));
      current.metadata.resourceVersion = String(revision);
      rememberStoredValue(current, value);
      return current;
    } catch (err) {
      if (err instanceof ConflictError && attempt < MAX_PATCH_RETRIES) continue;
      throw store.writeError(err, name);
    }
  }
}

/** The object as it is once deletion starts: GC finalizers per propagation policy, deletionTimestamp if held. */
export function markDeleting(
  store: ObjectStore,
  current: StoredObject,
  options: DeleteOptions,
): StoredObject {
  const policy =
    options.propagationPolicy ??
    (options.orphanDependents === true
      ? 'Orphan'
      : options.orphanDependents === false
        ? 'Background'
        : undefined);
  // Only metadata (and a namespace's status) change, by replacing members: a copy of those two levels
  // leaves current as it was, without a deep copy of the whole object.
  const next: StoredObject = { ...current, metadata: { ...current.metadata } };
  let finalizers = [...(next.metadata.finalizers ?? [])];
  if (policy === 'Foreground') {
    finalizers = [
      ...finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
      FOREGROUND_FINALIZER,
    ];
  } else if (policy === 'Orphan') {
    finalizers = [
      ...finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER),
      ORPHAN_FINALIZER,
    ];
  } else if (policy === 'Background') {
    finalizers = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  }
  if (finalizers.length > 0) next.metadata.finalizers = finalizers;
  else delete next.metadata.finalizers;
  if (held(store, next) && !next.metadata.deletionTimestamp) {
    next.metadata.deletionTimestamp = formatTime(new Date());
    next.metadata.deletionGracePeriodSeconds = 0;
    if (store.def.tracksGeneration && (next.metadata.generation ?? 0) > 0) next.metadata.generation! += 1;
    if (store.def.resource === 'namespaces')
      next.status = { ...(next.status as object), phase: 'Terminating' };
  }
  return next;
}

export async function deleteCollection(
  store: ObjectStore,
  namespace: string | undefined,
  listOptions: ListOptions,
  options: DeleteOptions = {},
): Promise<StoredObject[]> {
  const { items } = await list(store, namespace, { ...listOptions, limit: 0, continue: '' });
  const deleted: StoredObject[] = [];
  for (const item of items) {
    try {
      deleted.push(await deleteObject(store, item.metadata.namespace, item.metadata.name!, options));
    } catch (err) {
      if ((err as StatusError).status?.reason !== 'NotFound') throw err;
    }
  }
  return deleted;
}
