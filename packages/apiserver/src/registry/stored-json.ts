import type { StoredObject } from '@certkit/apimachinery';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from '@certkit/apimachinery/json-bytes';

/**
 * An object's JSON made from its stored value. A stored value is the object's JSON without
 * metadata.resourceVersion (the storage revision is the source of truth for it), with apiVersion, kind and
 * metadata as its first members (ObjectStore.encode): splicing the resourceVersion into the text gives the
 * object's JSON without parsing or serialising anything, for responses and watch events alike.
 */

/**
 * A stored value's head, up to the inside of its metadata. apiVersion and kind are strings, so the
 * `"metadata":{` after them is the object's own and not a nested one; a value in any other order (written
 * by an older version, or not by the store) does not match, and callers serialise the object instead.
 * Sticky, so that test() leaves the match's end in lastIndex without building a match.
 */
const HEAD = /\{"apiVersion":"(?:[^"\\]|\\.)*","kind":"(?:[^"\\]|\\.)*","metadata":\{/y;

/** Where the members of a stored value's metadata begin (just past its `{`), or -1 for another layout. */
export function metadataStart(value: string): number {
  HEAD.lastIndex = 0;
  return HEAD.test(value) ? HEAD.lastIndex : -1;
}

/** The stored value with metadata.resourceVersion added, or undefined when its head is not as expected. */
export function withResourceVersion(value: string, resourceVersion: string | number): string | undefined {
  const at = metadataStart(value);
  if (at < 0) return undefined;
  const separator = value[at] === '}' ? '' : ',';
  return `${value.slice(0, at)}"resourceVersion":"${resourceVersion}"${separator}${value.slice(at)}`;
}

/** Objects the store just wrote or read, with their stored value. */
const storedValues = new WeakMap<StoredObject, string>();

/** Records that obj is, as it is now, its stored value with its resourceVersion. */
export function rememberStoredValue(obj: StoredObject, value: string): void {
  storedValues.set(obj, value);
}

/**
 * The JSON of an object the store handed out, from its stored value; undefined for any other object. Only
 * for an object used as the store returned it (a response to the write or read that produced it).
 */
export function storedJson(obj: StoredObject): string | undefined {
  const value = storedValues.get(obj);
  const resourceVersion = obj.metadata.resourceVersion;
  if (value === undefined || !resourceVersion) return undefined;
  return withResourceVersion(value, resourceVersion);
}

/*
 * The same for a stored value's UTF-8 bytes, as a list read from storage gets them (Storage.rangeBytes), so
 * that it can write objects out without making a string of each. JSON's structural characters are ASCII, and
 * no byte of a multi-byte UTF-8 character is: the bytes are scanned as the text would be.
 */

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Past the JSON string that starts at `at` (its opening quote), or -1 when the bytes end first. */
function skipString(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** Whether `literal` (ASCII) is at `at`. */
function bytesAt(bytes: Uint8Array, at: number, literal: Uint8Array): boolean {
  if (at < 0 || at + literal.length > bytes.length) return false;
  for (let i = 0; i < literal.length; i++) if (bytes[at + i] !== literal[i]) return false;
  return true;
}

const API_VERSION_OPEN = Buffer.from('{"apiVersion":');
const KIND_OPEN = Buffer.from(',"kind":');
const METADATA_OPEN = Buffer.from(',"metadata":{');

/** metadataStart for a stored value's bytes: where its metadata's members begin, or -1 for another layout. */
export function metadataStartBytes(bytes: Uint8Array): number {
  if (!bytesAt(bytes, 0, API_VERSION_OPEN) || bytes[API_VERSION_OPEN.length] !== QUOTE) return -1;
  const afterApiVersion = skipString(bytes, API_VERSION_OPEN.length);
  if (!bytesAt(bytes, afterApiVersion, KIND_OPEN)) return -1;
  const kindAt = afterApiVersion + KIND_OPEN.length;
  if (bytes[kindAt] !== QUOTE) return -1;
  const afterKind = skipString(bytes, kindAt);
  return bytesAt(bytes, afterKind, METADATA_OPEN) ? afterKind + METADATA_OPEN.length : -1;
}

/**
 * Where the metadata whose members begin at `start` ends: the index of its closing brace, found by skipping
 * strings and counting brackets; -1 when the bytes end first.
 */
export function metadataEndBytes(bytes: Uint8Array, start: number): number {
  let depth = 0;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = skipString(bytes, i) - 1;
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The stored value's metadata, parsed alone (a few hundred bytes, not the object), or undefined. */
export function parseMetadataBytes(bytes: Uint8Array): StoredObject['metadata'] | undefined {
  const start = metadataStartBytes(bytes);
  const end = start < 0 ? -1 : metadataEndBytes(bytes, start);
  if (end < 0) return undefined;
  return JSON.parse(asBuffer(bytes).toString('utf8', start - 1, end + 1));
}

/** A stored value's bytes as text. */
export function utf8Text(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('utf8');
}

const RESOURCE_VERSION_MEMBER = '"resourceVersion":';

/**
 * The bytes of JSON.stringify of the object ObjectStore.decode makes of a stored value (decode appends the
 * resourceVersion to the parsed metadata), without decoding: a stored value is JSON.stringify's own output,
 * which parsing and serialising again gives back unchanged, so the one difference is the resourceVersion,
 * last in metadata. In parts: views of the stored bytes around the resourceVersion, which are written out
 * without a copy. Undefined for a value in another layout, or whose metadata may name a resourceVersion.
 */
export function withResourceVersionLastBytes(
  bytes: Uint8Array,
  resourceVersion: string | number,
): [Uint8Array, string, Uint8Array] | undefined {
  const start = metadataStartBytes(bytes);
  if (start < 0) return undefined;
  const end = metadataEndBytes(bytes, start);
  if (end < 0) return undefined;
  const named = asBuffer(bytes).indexOf(RESOURCE_VERSION_MEMBER, start);
  if (named >= 0 && named < end) return undefined;
  const separator = end === start ? '' : ',';
  return [bytes.subarray(0, end), `${separator}"resourceVersion":"${resourceVersion}"`, bytes.subarray(end)];
}

const PARTIAL_OBJECT_METADATA_HEAD =
  '{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":';

/**
 * The bytes of JSON.stringify(toPartialObjectMetadata(decode(value))) without decoding (the same reasoning as
 * withResourceVersionLastBytes): a view of the stored metadata, the resourceVersion appended. A LIST as
 * metadata then costs a scan of each object's metadata, not a parse of each object (a certificate Secret is
 * kilobytes, its metadata a few hundred bytes). Undefined for a value in another layout, or whose metadata may
 * name a resourceVersion.
 */
export function partialObjectMetadataBytes(
  bytes: Uint8Array,
  resourceVersion: string | number,
): [string, Uint8Array, string] | undefined {
  const start = metadataStartBytes(bytes);
  if (start < 0) return undefined;
  const end = metadataEndBytes(bytes, start);
  if (end < 0) return undefined;
  // Searched in the metadata only, not through the kilobytes after it.
  if (asBuffer(bytes).subarray(start, end).includes(RESOURCE_VERSION_MEMBER)) return undefined;
  const separator = end === start ? '' : ',';
  return [
    PARTIAL_OBJECT_METADATA_HEAD,
    bytes.subarray(start - 1, end),
    `${separator}"resourceVersion":"${resourceVersion}"}}`,
  ];
}

/**
 * withResourceVersion in parts, slices of the stored value around the resourceVersion, for a list that
 * writes them out one by one: joined, each object of the list would be copied into a new string.
 */
export function withResourceVersionParts(
  value: string,
  resourceVersion: string | number,
): [string, string, string] | undefined {
  const at = metadataStart(value);
  if (at < 0) return undefined;
  const separator = value[at] === '}' ? '' : ',';
  return [value.slice(0, at), `"resourceVersion":"${resourceVersion}"${separator}`, value.slice(at)];
}
