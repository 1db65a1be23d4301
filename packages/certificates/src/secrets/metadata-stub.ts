import type { KubeObject, ObjectMeta, PartialObjectMetadata } from '@certkit/apimachinery';
import { splitKey, type TransformFunc } from '@certkit/runtime';

/**
 * What the metadata cache keeps of an unlabelled Secret: identity only (name, namespace, uid,
 * resourceVersion, ownerReferences, …). Labels, annotations and managedFields are dropped as upstream's
 * `partialMetadataRemoveAll` does (PR #5966): they can be as large as the data of the Secrets nobody here
 * cares about, and no controller may make decisions on them without reading the Secret itself.
 */
export type SecretStub = PartialObjectMetadata & KubeObject;

export const PARTIAL_OBJECT_METADATA_API_VERSION = 'meta.k8s.io/v1';
export const PARTIAL_OBJECT_METADATA_KIND = 'PartialObjectMetadata';

/**
 * The metadata informer's transform. It rebuilds the object rather than editing it, so that nothing but
 * metadata can survive even from a server that answered with a full Secret. The stub keeps the
 * PartialObjectMetadata type (the informer would otherwise label it `v1 Secret`) so that handlers can tell
 * a stub from a Secret without data. Idempotent, as transforms must be.
 */
export const toSecretStub: TransformFunc = (obj) => stubOf(obj.metadata ?? {});

export function stubOf(meta: ObjectMeta): SecretStub {
  // A rest pattern, not a copy and `delete`: deleting properties turns a V8 object into a dictionary, which
  // made every cached stub about twice its size (bench/memory.ts: 847 → 3xx bytes per unrelated Secret).
  const { labels: _labels, annotations: _annotations, managedFields: _managedFields, ...metadata } = meta;
  return { apiVersion: PARTIAL_OBJECT_METADATA_API_VERSION, kind: PARTIAL_OBJECT_METADATA_KIND, metadata };
}

/** A stub for a store key, for deletions whose last state the informer no longer had. */
export function stubForKey(key: string): SecretStub {
  const { namespace, name } = splitKey(key);
  return stubOf({ namespace, name });
}

/** True for metadata stubs, false for full Secrets (even ones without data). */
export function isSecretStub<T extends { apiVersion?: string; kind?: string }>(
  obj: T,
): obj is T & SecretStub {
  return obj.kind === PARTIAL_OBJECT_METADATA_KIND && obj.apiVersion === PARTIAL_OBJECT_METADATA_API_VERSION;
}
