import type {
  ObjectMeta as K8sObjectMeta,
  OwnerReference as K8sOwnerReference,
} from 'kubernetes-types/meta/v1.d.ts';

/**
 * kubernetes-types marks server-set fields readonly; the server and controllers set them, so we drop that.
 */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Object metadata (metav1.ObjectMeta), writable. */
export type ObjectMeta = Mutable<K8sObjectMeta>;
/** An owner reference (metav1.OwnerReference), writable: what garbage collection follows. */
export type OwnerReference = Mutable<K8sOwnerReference>;

/** Any Kubernetes object as plain JSON: TypeMeta, ObjectMeta, and whatever else its kind carries. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** A KubeObject whose metadata is known to be present (as every stored object's is). */
export interface StoredObject extends KubeObject {
  metadata: ObjectMeta;
}

/**
 * The metadata of a list: its resourceVersion, the continue token of the next page, and how many items
 * remain.
 */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A list of objects as the API returns it (`SecretList`, `CertificateList`). */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

/** An object reduced to its metadata, as metadata-only lists, watches and informers carry it. */
export interface PartialObjectMetadata {
  apiVersion: 'meta.k8s.io/v1';
  kind: 'PartialObjectMetadata';
  metadata: ObjectMeta;
}

/** The type of a watch event; `BOOKMARK` carries only a resourceVersion, `ERROR` a Status. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One event of a watch stream. */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** Group, version and kind of an object; group is '' for the core group. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** Group, version and resource (plural, as in the URL) of a kind; group is '' for the core group. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Splits an apiVersion such as `cert-manager.io/v1` or `v1` into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Joins group and version into an apiVersion: `cert-manager.io/v1`, or `v1` for the core group. */
export function formatApiVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** The annotation that marks the bookmark ending a watch's initial events (KEP-3157). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Converts an object to PartialObjectMetadata, the shape metadata-only clients read. */
export function toPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: obj.metadata ?? {} };
}

/**
 * The owner reference that makes `owner` the controller of an object (metav1.NewControllerRef): garbage
 * collection deletes the object with its owner, and foreground deletion of the owner waits for it
 * (blockOwnerDeletion). `apiVersion` and `kind` are the owner's, given rather than read, because objects from a
 * typed cache or a metadata-only read may lack them.
 */
export function newControllerRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
