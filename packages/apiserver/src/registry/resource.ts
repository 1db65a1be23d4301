/**
 * What the server knows of a resource it serves (ResourceDefinition), and its names, scope and storage keys.
 */

import type { FieldError, KubeObject, StoredObject } from '@certkit/apimachinery';
import type { ApplySchema } from '../fieldmanager/apply-schema.ts';
import type { SmpSchema } from '../patch/strategic-merge-patch.ts';
import type { JSONSchemaProps } from '../schema/types.ts';
import type { TableColumn } from './printing.ts';
import type { StoreContext } from './generic/types.ts';
import type { UserInfo } from '../security/user.ts';
import type { Storage } from '../storage/types.ts';

/** Names and scope: how the resource is addressed (URLs, discovery, storage keys, owner references). */
export interface ResourceNaming {
  group: string;
  /** Served versions, the preferred (storage) version first. */
  versions: string[];
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** True when this is a custom resource (served from a CRD). */
  custom: boolean;
}

/** What the API allows on the resource, and how writes to it behave. */
export interface ResourceSemantics {
  verbs: string[];
  /** True when `status` is a subresource: the main resource ignores status changes and vice versa. */
  statusSubresource: boolean;
  /** True when metadata.generation counts changes outside metadata and status. */
  tracksGeneration: boolean;
  /**
   * Subresources besides status that write the status half of the object as status does (the rest is kept
   * as stored), which the kind's subresourceAdmit tells apart: a CertificateSigningRequest's `approval`.
   */
  statusLikeSubresources?: string[];
  /**
   * Subresources that take a whole object by PUT and serve no other verb, resetFields deciding what of it they
   * keep: a Namespace's `finalize`, which writes spec.finalizers alone.
   */
  updateOnlySubresources?: string[];
  /** The `scale` subresource (autoscaling/v1 Scale) over the object's replicas. */
  scale?: ScaleSubresource;
  /** False for custom resources: an update must then carry metadata.resourceVersion. */
  allowUnconditionalUpdate: boolean;
  /** Objects are answers computed on create and never stored (registry/create-only.ts). */
  createOnly?: boolean;
  /**
   * The resource lives in another resource's storage, in that one's form (kube-apiserver's cohabitating
   * resources: events.k8s.io/v1 Events are core/v1 Events): the view of the server's storage its store uses
   * (registry/converted-storage.ts).
   */
  storedAs?(storage: Storage): Storage;
}

/**
 * The strategy hooks create and update run (registry/generic/strategy.ts), in this order: normalize, defaults
 * and onCreate (on create), admit (or admitStatus), validate.
 */
export interface ResourceStrategy {
  /** Normalises an incoming object before validation (e.g. Secret stringData into data). */
  normalize?(obj: KubeObject): void;
  /** Fields set on create when absent (beyond metadata). */
  defaults?(obj: StoredObject): void;
  /** Set on creation for kinds that are created with server-managed finalizers or status (namespaces). */
  onCreate?(obj: StoredObject): void;
  /**
   * Fixes the object before it is stored on create or update (defaults, pruning). Runs after normalize and
   * before validate; for custom resources this is schema pruning and defaulting, which also reports errors,
   * and the CEL rules (old is the current object on updates, for transition rules).
   */
  admit?(obj: StoredObject, version: string, old?: StoredObject): FieldError[];
  /**
   * admit for a status update, when the kind validates those differently: custom resources validate the
   * status alone there, as kube-apiserver's status strategy does (everything else is the stored object's).
   */
  admitStatus?(obj: StoredObject, version: string, old?: StoredObject): FieldError[];
  /** What a name must be, when not a DNS subdomain (RBAC objects: any path segment, `system:basic-user`). */
  validName?(name: string, prefix?: boolean): string[];
  /**
   * Puts back, from the stored object, what an update through `subresource` (undefined: the main resource)
   * may not change, as kube-apiserver's PrepareForUpdate does: a Namespace keeps its spec.finalizers and
   * status on a main update and its status through `finalize`. Runs after defaults, before validation.
   */
  resetFields?(obj: StoredObject, current: StoredObject, subresource: string | undefined): void;
  /** Kind-specific validation of a new object (old is the current one for updates). */
  validate?(obj: StoredObject, old: StoredObject | undefined, version: string): FieldError[];
  /** Unknown fields of an incoming object below the top level (custom resources: what pruning removes). */
  unknownFields?(obj: KubeObject, version: string): string[];
  /**
   * An update through a subresource (status, or one of statusLikeSubresources), after validate: fixes what
   * that subresource may not change and returns what it may not do (a CSR's approval keeps the certificate,
   * its status may not touch the approval).
   */
  subresourceAdmit?(obj: StoredObject, old: StoredObject, subresource: string): FieldError[];
  /**
   * Writes who asked for the object into it, on create, after validation (a CertificateSigningRequest's
   * spec.username, uid, groups and extra); user is undefined on a server without authentication.
   */
  setRequester?(obj: StoredObject, user: UserInfo | undefined): void;
  /**
   * Takes, from ranges every object of the kind shares (a Service's cluster IP and node ports), the values the
   * object is to hold and `old` (the stored object on updates) does not, filling them in; runs after
   * validation, just before the object is stored. May throw a Status error (a value taken). Returns what
   * gives them back if the write then fails.
   */
  reserve?(
    obj: StoredObject,
    old: StoredObject | undefined,
    context: StoreContext,
    dryRun: boolean,
  ): Promise<(() => Promise<void>) | undefined>;
}

/** The resource's types: how bodies are decoded, patches merged, fields tracked, and OpenAPI describes it. */
export interface ResourceSchemas {
  /**
   * The built-in kind's Kubernetes type, as @kubernetes/client-node names its model (`V1Secret`): what writes
   * are decoded with (decode/kube-models.ts) and what OpenAPI describes the kind with.
   */
  model?: string;
  /** A custom kind's schema at a version (its CRD's openAPIV3Schema), for OpenAPI. */
  openApiSchema?(version: string): JSONSchemaProps | undefined;
  /** Lists merged by strategic merge patch; absent means the kind takes merge patches only. */
  strategicMerge?: SmpSchema;
  /** How server-side apply merges and tracks fields (custom resources: from the CRD schema). */
  applySchema?(version: string): ApplySchema;
}

/** Field selectors: which fields the resource can be selected by. */
export interface ResourceSelection {
  /** Fields a field selector may name, besides metadata.name and metadata.namespace. */
  selectableFields: string[];
  /** Values of the selectable fields for an object. */
  fieldValues?(obj: StoredObject): Record<string, string>;
}

/** Printing: the resource's `Table` (`kubectl get`) columns and rows (printing.ts). */
export interface ResourcePrinting {
  columns: TableColumn[];
  /** The cells of the object's Table row, one per column, `Name` first. */
  cells(obj: StoredObject, now: number): unknown[];
}

/**
 * Everything the server needs to know to serve one resource (group + plural name), one interface per
 * concern. Built-in resources are written in builtins/; custom resources are derived from their CRD in
 * crd/custom-resource.ts.
 */
export interface ResourceDefinition
  extends
    ResourceNaming,
    ResourceSemantics,
    ResourceStrategy,
    ResourceSchemas,
    ResourceSelection,
    ResourcePrinting {}

export function qualifiedName(def: Pick<ResourceNaming, 'group' | 'resource'>): string {
  return def.group === '' ? def.resource : `${def.resource}.${def.group}`;
}

export function apiVersionOf(def: Pick<ResourceNaming, 'group'>, version: string): string {
  return def.group === '' ? version : `${def.group}/${version}`;
}

/** The storage prefix under which every object of a resource lives; namespaced objects add `ns/`. */
export function resourcePrefix(def: Pick<ResourceNaming, 'group' | 'resource'>): string {
  return `/registry/${def.group === '' ? 'core' : def.group}/${def.resource}/`;
}

export function objectKey(
  def: Pick<ResourceNaming, 'group' | 'resource' | 'namespaced'>,
  namespace: string | undefined,
  name: string,
): string {
  return def.namespaced ? `${resourcePrefix(def)}${namespace}/${name}` : `${resourcePrefix(def)}${name}`;
}

/** Prefix for a list: one namespace, or every object of the resource when namespace is empty. */
export function listPrefix(
  def: Pick<ResourceNaming, 'group' | 'resource' | 'namespaced'>,
  namespace: string | undefined,
): string {
  return def.namespaced && namespace ? `${resourcePrefix(def)}${namespace}/` : resourcePrefix(def);
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** How a kind's objects read and write as an autoscaling/v1 Scale. */
export interface ScaleSubresource {
  specReplicas(obj: StoredObject): number;
  statusReplicas(obj: StoredObject): number;
  /** The pods' label selector in its string form (Scale.status.selector). */
  selector(obj: StoredObject): string;
  setReplicas(obj: StoredObject, replicas: number): void;
}
