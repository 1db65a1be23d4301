import { type StoredObject, toPartialObjectMetadata } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { ListResult } from '../registry/generic/types.ts';
import {
  partialObjectMetadataBytes,
  storedJson,
  withResourceVersionLastBytes,
} from '../registry/stored-json.ts';
import type { KeyValue } from '../storage/types.ts';
import { type FrameRendering, objectJsonParts } from '../watchcache/frames.ts';
import type { CachedObject } from '../watchcache/cache.ts';
import type { CachedListResult } from '../watchcache/reader.ts';
import type { Rendering } from './negotiate.ts';

/** Shapes responses: full objects in the requested version, PartialObjectMetadata, or Tables for kubectl. */

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface RenderOptions {
  rendering: Rendering;
  /** The apiVersion the client asked for (custom resources may serve several). */
  apiVersion: string;
  includeObject: IncludeObject;
}

export function inVersion(obj: StoredObject, apiVersion: string): StoredObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

function tableRow(def: ResourceDefinition, obj: StoredObject, options: RenderOptions, now: number): unknown {
  const row: Record<string, unknown> = { cells: def.cells(obj, now) };
  if (options.includeObject === 'Metadata') row.object = toPartialObjectMetadata(obj);
  else if (options.includeObject === 'Object') row.object = inVersion(obj, options.apiVersion);
  return row;
}

export function table(
  def: ResourceDefinition,
  objects: StoredObject[],
  options: RenderOptions,
  listMeta: Record<string, unknown>,
  withColumns = true,
): unknown {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumns ? def.columns : [],
    rows: objects.map((o) => tableRow(def, o, options, now)),
  };
}

export function renderObject(def: ResourceDefinition, obj: StoredObject, options: RenderOptions): unknown {
  switch (options.rendering) {
    case 'metadata':
      return toPartialObjectMetadata(obj);
    case 'table':
      return table(def, [obj], options, { resourceVersion: obj.metadata.resourceVersion });
    default:
      return inVersion(obj, options.apiVersion);
  }
}

/**
 * An object's response body. An object as the store returned it from a write or read is sent as its stored
 * JSON with the resourceVersion spliced in, when the client wants it whole in its stored version: serialising
 * it again would give the same object.
 */
export function objectBody(def: ResourceDefinition, obj: StoredObject, options: RenderOptions): string {
  const stored =
    options.rendering === 'object' && obj.apiVersion === options.apiVersion ? storedJson(obj) : undefined;
  return stored ?? JSON.stringify(renderObject(def, obj, options));
}

export function listMeta(result: ListResult): Record<string, unknown> {
  const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) meta.continue = result.continue;
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
  return meta;
}

export function renderList(def: ResourceDefinition, result: ListResult, options: RenderOptions): unknown {
  const metadata = listMeta(result);
  switch (options.rendering) {
    case 'metadata':
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata,
        items: result.items.map(toPartialObjectMetadata),
      };
    case 'table':
      return table(def, result.items, options, metadata);
    default:
      return {
        kind: def.listKind,
        apiVersion: options.apiVersion,
        metadata,
        items: result.items.map((o) => inVersion(o, options.apiVersion)),
      };
  }
}

/**
 * A list's body in parts, so that it can be written out item by item (list-writer.ts): the bytes are those
 * of renderList's list serialised whole, or for the watch cache's entries, their shared JSON (frames.ts)
 * without serialising them again.
 */
export interface ListEncoding<T> {
  /** Everything before the first item: `{"kind":…,"apiVersion":…,"metadata":{…},"items":[`. */
  head: string;
  /** An item's JSON, or its JSON in parts (text, or UTF-8 bytes) to be written one after the other. */
  item(entry: T): string | readonly (string | Uint8Array)[];
  /** What closes the list after the last item. */
  tail: string;
}

function listHead(
  def: ResourceDefinition,
  options: RenderOptions,
  metadata: Record<string, unknown>,
): string {
  const meta = JSON.stringify(metadata);
  switch (options.rendering) {
    case 'metadata':
      return `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${meta},"items":[`;
    case 'table':
      // As table() orders a Table's members.
      return `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":${meta},"columnDefinitions":${JSON.stringify(def.columns)},"rows":[`;
    default:
      return `{"kind":${JSON.stringify(def.listKind)},"apiVersion":${JSON.stringify(options.apiVersion)},"metadata":${meta},"items":[`;
  }
}

/** A list of objects, item by item as renderList renders them. */
export function objectListEncoding(
  def: ResourceDefinition,
  options: RenderOptions,
  metadata: Record<string, unknown>,
): ListEncoding<StoredObject> {
  const now = Date.now();
  const item =
    options.rendering === 'metadata'
      ? (o: StoredObject) => JSON.stringify(toPartialObjectMetadata(o))
      : options.rendering === 'table'
        ? (o: StoredObject) => JSON.stringify(tableRow(def, o, options, now))
        : (o: StoredObject) => JSON.stringify(inVersion(o, options.apiVersion));
  return { head: listHead(def, options, metadata), item, tail: ']}' };
}

/**
 * A list of stored key-values as bytes (ObjectStore.listPaged), item by item as renderList renders the
 * decoded objects. Whole objects in their stored version are their stored bytes with the resourceVersion
 * spliced in where decoding puts it (stored-json.ts), and PartialObjectMetadata is a view of their stored
 * metadata with it appended: the same bytes, without decoding and serialising each object, nor making a
 * string of it.
 */
export function storedListEncoding(
  def: ResourceDefinition,
  options: RenderOptions,
  metadata: Record<string, unknown>,
  decode: (kv: KeyValue<Uint8Array>) => StoredObject,
): ListEncoding<KeyValue<Uint8Array>> {
  const objects = objectListEncoding(def, options, metadata);
  const decoded = (kv: KeyValue<Uint8Array>) => objects.item(decode(kv));
  if (options.rendering === 'metadata')
    return { ...objects, item: (kv) => partialObjectMetadataBytes(kv.value, kv.modRevision) ?? decoded(kv) };
  if (options.rendering !== 'object') return { ...objects, item: decoded };
  const head = Buffer.from(`{"apiVersion":${JSON.stringify(options.apiVersion)},`);
  const inVersion = (value: Uint8Array) =>
    value.length > head.length && head.equals(value.subarray(0, head.length));
  return {
    ...objects,
    item: (kv) =>
      (inVersion(kv.value) ? withResourceVersionLastBytes(kv.value, kv.modRevision) : undefined) ??
      decoded(kv),
  };
}

/** A list from the watch cache: entries as their shared JSON, Table rows from their objects. */
export function cachedListEncoding(
  def: ResourceDefinition,
  result: CachedListResult,
  options: RenderOptions,
): ListEncoding<CachedObject> {
  const metadata = { resourceVersion: result.resourceVersion };
  if (options.rendering === 'table') {
    const rows = objectListEncoding(def, options, metadata);
    return { ...rows, item: (entry) => rows.item(entry.obj) };
  }
  const rendering: FrameRendering =
    options.rendering === 'metadata'
      ? { kind: 'metadata' }
      : { kind: 'object', apiVersion: options.apiVersion };
  return {
    head: listHead(def, options, metadata),
    item: (entry) => objectJsonParts(entry, rendering),
    tail: ']}',
  };
}
