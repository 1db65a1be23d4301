import type { StoredObject } from '@certkit/apimachinery';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from '@certkit/apimachinery/json-bytes';
import { metadataStart } from './stored-json.ts';

type ObjectMeta = StoredObject['metadata'];

/**
 * An object's metadata read from its stored value without parsing the whole object. The server's own
 * controllers and the watch cache's label selectors need the metadata of objects that are kilobytes long
 * (Secrets, CertificateRequests): cutting the metadata out of the text and parsing that alone costs a
 * fraction of parsing everything, and keeps no parsed copy of the rest around.
 */
export function parseMetadata(value: string): ObjectMeta {
  const text = metadataJson(value);
  if (text !== undefined) return JSON.parse(text) as ObjectMeta;
  // Not laid out as the store writes values (see stored-json.ts): parse it all.
  return (JSON.parse(value) as StoredObject).metadata;
}

/** The JSON text of a stored value's metadata, or undefined when the value is laid out otherwise. */
export function metadataJson(value: string): string | undefined {
  const start = metadataStart(value);
  if (start < 0) return undefined;
  const end = objectEnd(value, start - 1);
  return end < 0 ? undefined : value.slice(start - 1, end);
}

const RESOURCE_VERSION_MEMBER = '"resourceVersion":';
const PARTIAL_OBJECT_METADATA_HEAD =
  '{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":';

/**
 * Where a stored value's metadata ends, for partialObjectMetadataParts: the index just past its closing brace,
 * or -1 when the value is laid out otherwise or its metadata may already name a resourceVersion (decode would
 * then keep it where it is). Found once and kept, it makes the metadata's text a slice of the value.
 */
export function metadataEnd(value: string): number {
  const start = metadataStart(value);
  const end = start < 0 ? -1 : objectEnd(value, start - 1);
  // Searched in the metadata only (a slice is a view, not a copy), not through the kilobytes after it.
  return end < 0 || value.slice(start, end).includes(RESOURCE_VERSION_MEMBER) ? -1 : end;
}

/**
 * The JSON of toPartialObjectMetadata of the object ObjectStore.decode makes of a stored value (its metadata
 * with the resourceVersion appended), cut out of the value's text rather than parsed and serialised again: a
 * stored value is JSON.stringify's own output, which parsing and serialising gives back unchanged. In parts,
 * the middle one a slice of the value (no copy), for a list or a watch frame to write out one by one.
 * `end` is metadataEnd(value); undefined when that is -1.
 */
export function partialObjectMetadataParts(
  value: string,
  end: number,
  resourceVersion: string | number,
): [string, string, string] | undefined {
  const start = metadataStart(value);
  if (start < 0 || end <= start) return undefined;
  const separator = end - 1 === start ? '' : ',';
  return [
    PARTIAL_OBJECT_METADATA_HEAD,
    value.slice(start - 1, end - 1),
    `${separator}"resourceVersion":"${resourceVersion}"}}`,
  ];
}

/**
 * Whether `other` begins as `value` does up to the end of its metadata (`metadata` being metadataJson(value)):
 * then its metadata is the same text, found without looking through it for where it ends.
 */
export function sameMetadataAs(value: string, metadata: string, other: string): boolean {
  const end = metadataStart(value) - 1 + metadata.length;
  return other.startsWith(value.slice(0, end));
}

/**
 * The index just past the object or array opening at `at`, or -1 if it does not close. Brackets inside
 * strings do not count; stored values are JSON.stringify output, so the brackets are balanced.
 */
function objectEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i) - 1;
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
      return i + 1;
    }
  }
  return -1;
}

/** The index just past the string opening at `at` (a `"`), or -1 if it does not end. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
  }
  return -1;
}
