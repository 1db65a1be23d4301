/**
 * What kube-apiserver's CRD controllers add to a CRD once written: the cleanup finalizer (crd/controller.ts
 * removes the custom resources before releasing it) and an established status.
 */

import { formatTime, type StoredObject } from '@certkit/apimachinery';
import type { Crd } from './crd-object.ts';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** What kube-apiserver's CRD controllers write into status once the names are accepted and served. */
export function establishedStatus(crd: Crd, now: string): Crd['status'] {
  const names = crd.spec.names;
  const acceptedNames = {
    ...names,
    singular: names.singular || names.kind.toLowerCase(),
    listKind: names.listKind || `${names.kind}List`,
  };
  const condition = (type: string, reason: string, message: string) => {
    const previous = crd.status?.conditions?.find((c) => c.type === type);
    return {
      type,
      status: 'True',
      lastTransitionTime: previous?.status === 'True' ? previous.lastTransitionTime : now,
      reason,
      message,
    };
  };
  return {
    acceptedNames,
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: [
      ...new Set([
        ...(crd.status?.storedVersions ?? []),
        ...crd.spec.versions.filter((v) => v.storage).map((v) => v.name),
      ]),
    ],
  };
}

/** Prepares a new CRD as kube-apiserver's CRD controllers would: the cleanup finalizer and an established status. */
export function prepareNewCrd(obj: StoredObject): void {
  const crd = obj as Crd;
  crd.metadata.finalizers = [...new Set([...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
  crd.status = establishedStatus(crd, formatTime(new Date()));
}
