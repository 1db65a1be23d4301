/**
 * The names cert-manager gives Orders and Challenges (pkg/api/util/names.go ComputeName, used by
 * certificaterequests/acme buildOrder and acmeorders buildPartialChallenge): a prefix cut to at most 52
 * characters, `-`, and the decimal FNV-1 (not 1a) 32-bit hash of the Go JSON of what is being named. The
 * same CertificateRequest always yields the same Order name, and the same authorization and solver the
 * same Challenge name, so a controller that restarts finds what it created instead of duplicating it.
 */

import type { ChallengeSpec, OrderSpec } from '../api/acme-types.ts';
import { dnsSafeShorten } from '../api/names.ts';
import { ChallengeSpec as GoChallengeSpec, OrderSpec as GoOrderSpec, encodeGo, goString } from './go-json.ts';

const FNV32_OFFSET_BASIS = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1, 32 bits (Go's hash/fnv New32): multiply, then xor each byte. */
export function fnv1_32(data: Uint8Array): number {
  let hash = FNV32_OFFSET_BASIS;
  for (const byte of data) {
    hash = Math.imul(hash, FNV32_PRIME) >>> 0;
    hash = (hash ^ byte) >>> 0;
  }
  return hash;
}

/** ComputeName over bytes already encoded as Go would. */
export function computeName(prefix: string, goJson: string): string {
  return `${dnsSafeShorten(prefix, 52)}-${fnv1_32(Buffer.from(goJson, 'utf8'))}`;
}

/**
 * The Order name for a CertificateRequest and the Order spec built from it. The CSR (`request`) is left
 * out of the hash; a request name of 52 characters or more is hashed together with the spec, because its
 * shortened prefix alone would let two long names collide.
 */
export function orderName(certificateRequestName: string, spec: OrderSpec): string {
  const specJson = encodeGo({ ...spec, request: null }, GoOrderSpec);
  const hashed =
    Buffer.byteLength(certificateRequestName) >= 52
      ? `{"certificateRequestName":${goString(certificateRequestName)},"spec":${specJson}}`
      : specJson;
  return computeName(certificateRequestName, hashed);
}

/**
 * The Challenge name for an Order and the Challenge spec built for one of its authorizations, hashed
 * before the key is computed (as upstream: `key` is written as empty).
 */
export function challengeName(
  orderName: string,
  spec: Omit<ChallengeSpec, 'key'> & { key?: string },
): string {
  return computeName(orderName, encodeGo({ ...spec, key: '' }, GoChallengeSpec));
}
