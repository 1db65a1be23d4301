/** Prefix ranges in etcd's byte order. */

import { Buffer } from 'node:buffer';

const ZERO_KEY = Buffer.from([0]);

/** The first key of a prefix range: etcd refuses an empty key, and "\0" is the smallest non-empty one. */
export function rangeStart(prefix: Buffer): Buffer {
  return prefix.length === 0 ? ZERO_KEY : prefix;
}

/** The exclusive end of the keys starting with prefix, in etcd's byte order ("\0" = no end). */
export function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.allocUnsafe(i + 1);
      prefix.copy(end, 0, 0, i + 1);
      end[i]++;
      return end;
    }
  }
  return ZERO_KEY;
}
