import type { StoredObject } from '@certkit/apimachinery';

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
