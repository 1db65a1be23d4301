import { toPartialObjectMetadata } from '@certkit/apimachinery';
import { metadataEnd, partialObjectMetadataParts } from '../registry/metadata-text.ts';
import { withResourceVersion, withResourceVersionParts } from '../registry/stored-json.ts';
import type { CacheEvent, CacheEventType, CachedObject } from './cache.ts';

/**
 * Shared serialisations. A cached object's JSON is its stored value with the resourceVersion spliced in
 * (no parse or stringify; see stored-json.ts); its PartialObjectMetadata JSON is cut out of that value likewise
 * (metadata-text.ts); a watch event's
 * bytes are built once per rendering and dispatch, and written to every watcher that wants them.
 */

/** How a watcher or list wants objects: full objects at an apiVersion, or metadata only. */
export type FrameRendering = { kind: 'object'; apiVersion: string } | { kind: 'metadata' };

function renderingKey(r: FrameRendering): string {
  return r.kind === 'metadata' ? 'm' : `o:${r.apiVersion}`;
}

/** `{"apiVersion":<apiVersion>,`: how a stored value begins when apiVersion is its first member. */
const apiVersionHeads = new Map<string, string>();

/**
 * Whether the stored object has this apiVersion. Stored values usually name it first, and then the text
 * answers without parsing the object (JSON.stringify writes no member twice).
 */
function hasApiVersion(entry: CachedObject, apiVersion: string): boolean {
  let head = apiVersionHeads.get(apiVersion);
  if (head === undefined) {
    head = `{"apiVersion":${JSON.stringify(apiVersion)},`;
    apiVersionHeads.set(apiVersion, head);
  }
  return entry.value.startsWith(head) || entry.obj.apiVersion === apiVersion;
}

/**
 * An entry's PartialObjectMetadata JSON in parts, cut out of its stored value (metadata-text.ts): neither the
 * object nor its metadata is parsed, and nothing but where the metadata ends is kept.
 */
function metadataParts(entry: CachedObject): readonly string[] | undefined {
  entry.metadataEnd ??= metadataEnd(entry.value);
  return partialObjectMetadataParts(entry.value, entry.metadataEnd, entry.revision);
}

export function objectJson(entry: CachedObject, rendering: FrameRendering): string {
  // The stored value with the resourceVersion spliced in costs next to nothing to make again, and keeping
  // it would double what the cache holds: only renderings that serialise are kept.
  if (rendering.kind === 'object' && hasApiVersion(entry, rendering.apiVersion)) {
    const spliced = withResourceVersion(entry.value, entry.revision);
    if (spliced !== undefined) return spliced;
  }
  if (rendering.kind === 'metadata') {
    const parts = metadataParts(entry);
    if (parts !== undefined) return parts.join('');
  }
  const key = renderingKey(rendering);
  const hit = entry.rendered?.get(key);
  if (hit !== undefined) return hit;
  let json: string;
  if (rendering.kind === 'metadata') {
    json = JSON.stringify(toPartialObjectMetadata(entry.obj));
  } else if (hasApiVersion(entry, rendering.apiVersion)) {
    json = JSON.stringify(entry.obj);
  } else {
    json = JSON.stringify({ ...entry.obj, apiVersion: rendering.apiVersion });
  }
  entry.rendered ??= new Map();
  entry.rendered.set(key, json);
  return json;
}

/**
 * objectJson in parts where it is a splice: slices of the stored value around the resourceVersion, for a
 * list that writes them out one by one rather than copying each object into a new string.
 */
export function objectJsonParts(entry: CachedObject, rendering: FrameRendering): string | readonly string[] {
  if (rendering.kind === 'object' && hasApiVersion(entry, rendering.apiVersion)) {
    const parts = withResourceVersionParts(entry.value, entry.revision);
    if (parts !== undefined) return parts;
  }
  if (rendering.kind === 'metadata') {
    const parts = metadataParts(entry);
    if (parts !== undefined) return parts;
  }
  return objectJson(entry, rendering);
}

/** The bytes of one watch event line; a selector transition may turn the event's type, hence the parameter. */
export function eventFrame(
  event: CacheEvent,
  type: CacheEventType,
  object: CachedObject,
  rendering: FrameRendering,
): Buffer {
  const key = `${type}|${object === event.current ? 'c' : 'p'}|${renderingKey(rendering)}`;
  const hit = event.frames?.get(key);
  if (hit) return hit;
  const frame = Buffer.from(`{"type":"${type}","object":${objectJson(object, rendering)}}\n`);
  event.frames ??= new Map();
  event.frames.set(key, frame);
  return frame;
}

/**
 * Drops an event's frames once it has been dispatched. They were shared by every watcher of the dispatch;
 * kept on, they would live as long as the event stays in the history (75 s and more) as buffers outside
 * the JavaScript heap, whose growth makes V8 collect garbage more often. A watcher replaying the history
 * later builds them again.
 */
export function releaseFrames(event: CacheEvent): void {
  event.frames = undefined;
}

const previousAtEvent = new WeakMap<CacheEvent, CachedObject>();

/**
 * The object before the change, at the change's resourceVersion: what a watcher whose selector the object
 * stopped matching receives as DELETED (kube-apiserver sends the last matching state with the new RV).
 */
export function previousAtRevision(event: CacheEvent): CachedObject {
  const hit = previousAtEvent.get(event);
  if (hit) return hit;
  const previous = event.previous ?? event.current;
  const obj = {
    ...previous.obj,
    metadata: { ...previous.obj.metadata, resourceVersion: String(event.revision) },
  };
  const entry: CachedObject = {
    ...previous,
    obj,
    metadata: obj.metadata,
    revision: event.revision,
    rendered: undefined,
  };
  previousAtEvent.set(event, entry);
  return entry;
}
