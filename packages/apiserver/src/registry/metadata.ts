import { randomBytes, randomUUID } from 'node:crypto';
import type { StoredObject } from '@certkit/apimachinery';

/** Server-owned object metadata, set the way kube-apiserver sets it. */

export function newUid(): string {
  return randomUUID();
}

// k8s.io/apiserver/pkg/storage/names: vowels and confusable characters left out so names never spell words.
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATE_PREFIX = 58;

const SUFFIX_LENGTH = 5;
/**
 * Random bytes for name suffixes, drawn from the system's generator a batch at a time: a call to it costs
 * as much as a whole create's worth of other work, where the bytes of one suffix are next to nothing.
 */
const SUFFIX_BATCH = 64 * SUFFIX_LENGTH;
let suffixBytes = Buffer.alloc(0);
let suffixOffset = 0;

export function generateName(prefix: string): string {
  if (suffixOffset === suffixBytes.length) {
    suffixBytes = randomBytes(SUFFIX_BATCH);
    suffixOffset = 0;
  }
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++)
    suffix += GENERATE_ALPHABET[suffixBytes[suffixOffset++] % GENERATE_ALPHABET.length];
  return prefix.slice(0, MAX_GENERATE_PREFIX) + suffix;
}

/** Attempts before a create with generateName gives up on name collisions (RetryGenerateName). */
export const GENERATE_NAME_ATTEMPTS = 8;

/** Everything but metadata and (when it is a subresource) status: what generation counts changes of. */
export function specChanged(a: StoredObject, b: StoredObject, excludeStatus: boolean): boolean {
  // Every member of either object, without building their union: runs on every update.
  for (const key in a) if (Object.hasOwn(a, key) && memberChanged(a, b, key, excludeStatus)) return true;
  for (const key in b) {
    if (Object.hasOwn(b, key) && !Object.hasOwn(a, key) && memberChanged(a, b, key, excludeStatus))
      return true;
  }
  return false;
}

function memberChanged(a: StoredObject, b: StoredObject, key: string, excludeStatus: boolean): boolean {
  if (key === 'metadata' || key === 'apiVersion' || key === 'kind') return false;
  if (excludeStatus && key === 'status') return false;
  return a[key] !== b[key] && JSON.stringify(a[key]) !== JSON.stringify(b[key]);
}

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** Go's omitempty: empty lists and maps in metadata are not serialised, so clients never see `[]` or `{}`. */
export function dropEmptyMetadataFields(obj: StoredObject): void {
  const meta = obj.metadata;
  for (const field of ['labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'] as const) {
    const value = meta[field];
    if (
      value === null ||
      (value !== undefined && (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0))
    ) {
      delete meta[field];
    }
  }
}
