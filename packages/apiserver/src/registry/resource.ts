import type { FieldError, KubeObject, StoredObject } from '@certkit/apimachinery';
import type { ApplySchema } from './apply.ts';
import type { SmpSchema } from './patch.ts';
import type { JSONSchemaProps } from './schema.ts';

/** A column of a `Table` response (`kubectl get`). */
export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
}

/**
 * Everything the server needs to know to serve one resource (group + plural name): its names and scope, how
 * its objects are validated and printed, and which fields it can be selected by. Built-in resources are
 * written in builtins.ts; custom resources are derived from their CRD in crd.ts.
 */
export interface ResourceDefinition {
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
  verbs: string[];
  /** True when `status` is a subresource: the main resource ignores status changes and vice versa. */
  statusSubresource: boolean;
  /** True when metadata.generation counts changes outside metadata and status. */
  tracksGeneration: boolean;
  /** False for custom resources: an update must then carry metadata.resourceVersion. */
  allowUnconditionalUpdate: boolean;
  /** True when this is a custom resource (served from a CRD). */
  custom: boolean;
  columns: TableColumn[];
  /** The cells of the object's Table row, one per column, `Name` first. */
  cells(obj: StoredObject, now: number): unknown[];
  /** Fields a field selector may name, besides metadata.name and metadata.namespace. */
  selectableFields: string[];
  /** Values of the selectable fields for an object. */
  fieldValues?(obj: StoredObject): Record<string, string>;
  /** Normalises an incoming object before validation (e.g. Secret stringData into data). */
  normalize?(obj: KubeObject): void;
  /** Kind-specific validation of a new object (old is the current one for updates). */
  validate?(obj: StoredObject, old: StoredObject | undefined, version: string): FieldError[];
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
  /** Unknown fields of an incoming object below the top level (custom resources: what pruning removes). */
  unknownFields?(obj: KubeObject, version: string): string[];
  /**
   * The built-in kind's Kubernetes type, as @kubernetes/client-node names its model (`V1Secret`): what writes
   * are decoded with (kube-models.ts) and what OpenAPI describes the kind with.
   */
  model?: string;
  /** A custom kind's schema at a version (its CRD's openAPIV3Schema), for OpenAPI. */
  openApiSchema?(version: string): JSONSchemaProps | undefined;
  /** Lists merged by strategic merge patch; absent means the kind takes merge patches only. */
  strategicMerge?: SmpSchema;
  /** How server-side apply merges and tracks fields (custom resources: from the CRD schema). */
  applySchema?(version: string): ApplySchema;
  /** Fields set on create when absent (beyond metadata). */
  defaults?(obj: StoredObject): void;
  /** Set on creation for kinds that are created with server-managed finalizers or status (namespaces). */
  onCreate?(obj: StoredObject): void;
}

export function qualifiedName(def: Pick<ResourceDefinition, 'group' | 'resource'>): string {
  return def.group === '' ? def.resource : `${def.resource}.${def.group}`;
}

export function apiVersionOf(def: Pick<ResourceDefinition, 'group'>, version: string): string {
  return def.group === '' ? version : `${def.group}/${version}`;
}

/** The storage prefix under which every object of a resource lives; namespaced objects add `ns/`. */
export function resourcePrefix(def: Pick<ResourceDefinition, 'group' | 'resource'>): string {
  return `/registry/${def.group === '' ? 'core' : def.group}/${def.resource}/`;
}

export function objectKey(def: ResourceDefinition, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${resourcePrefix(def)}${namespace}/${name}` : `${resourcePrefix(def)}${name}`;
}

/** Prefix for a list: one namespace, or every object of the resource when namespace is empty. */
export function listPrefix(def: ResourceDefinition, namespace: string | undefined): string {
  return def.namespaced && namespace ? `${resourcePrefix(def)}${namespace}/` : resourcePrefix(def);
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** How kubectl shows ages: 5s, 3m, 2h, 4d, 3y (k8s.io/apimachinery duration.HumanDuration, short form). */
export function humanAge(timestamp: string | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  const seconds = Math.floor((now - Date.parse(timestamp)) / 1000);
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60 === 0 ? '' : `${seconds % 60}s`}`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return `${hours}h${minutes % 60 === 0 ? '' : `${minutes % 60}m`}`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return `${days}d${hours % 24 === 0 ? '' : `${hours % 24}h`}`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};
