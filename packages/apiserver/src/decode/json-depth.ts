import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from '@certkit/apimachinery/json-bytes';

/**
 * The nesting limit for JSON bodies and objects. kube-apiserver's decoders refuse a value nested more than
 * 10000 arrays and objects deep (Go's encoding/json scanner, `invalid character '{' exceeded max depth`;
 * k8s.io/apimachinery's util/json walks stop at the same 10000). Node cannot process that much: V8's
 * structuredClone gives up at about 2,500 levels, its general JSON.stringify at about 5,000, and the
 * recursive merges here (strategic merge patch, server-side apply) near that. A body within the limit must
 * stay usable by every verb (an object accepted and then impossible to patch is the failure this prevents),
 * so the limit is 2000, half the depth at which every verb was seen to work, with Go's error text.
 * docs/adr/0401-json-nesting-limit.md records the choice.
 */
export const MAX_JSON_DEPTH = 2000;

/** Go's error for a value nested past the limit; `opener` is the bracket that went one level too far. */
export function maxDepthMessage(opener: '{' | '[' = '{'): string {
  return `invalid character '${opener}' exceeded max depth`;
}

/**
 * Go's error for JSON text nested deeper than the limit, or undefined. Only the brackets outside strings
 * count; the text need not be valid JSON (the parser judges that). A text too short to hold that many
 * brackets is not scanned at all, which is every ordinary body.
 */
export function jsonDepthError(text: Uint8Array): string | undefined {
  const at = depthExceededAt(text, MAX_JSON_DEPTH);
  return at === undefined ? undefined : maxDepthMessage(text[at] === OPEN_BRACE ? '{' : '[');
}

/** Whether JSON (or flow-style YAML) text nests more than `limit` levels deep somewhere. */
export function deeperThan(text: Uint8Array, limit: number): boolean {
  return depthExceededAt(text, limit) !== undefined;
}

/** How many bytes of the text are `byte`, counting no further than `stopAbove`. */
function countByte(text: Uint8Array, byte: number, stopAbove: number): number {
  let count = 0;
  for (let i = text.indexOf(byte); i !== -1 && count <= stopAbove; i = text.indexOf(byte, i + 1)) count++;
  return count;
}

/** Where the bracket that goes past `limit` levels is, or undefined. */
function depthExceededAt(text: Uint8Array, limit: number): number | undefined {
  if (text.length <= 2 * limit) return undefined;
  // Going past `limit` levels takes more than `limit` opening brackets. Counted with indexOf (native), this
  // spares the byte-by-byte walk below to every body that is long without being deep: a Secret or a
  // CertificateRequest with its base64 data is past the length test above, and the walk cost more than
  // JSON.parse of the same body. Brackets inside strings are counted too, which only makes the count larger.
  const opening = countByte(text, OPEN_BRACE, limit);
  if (opening + countByte(text, OPEN_BRACKET, limit - opening) <= limit) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

/**
 * Whether a parsed value nests deeper than the limit (a patch can build such a value from shallower ones).
 * Iterative, so that the check itself cannot overflow the stack.
 */
export function exceedsMaxDepth(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, parentDepth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    const depth = parentDepth + 1;
    if (depth > MAX_JSON_DEPTH) return true;
    const members = Array.isArray(item) ? item : Object.values(item);
    for (const member of members) {
      if (typeof member === 'object' && member !== null) stack.push([member, depth]);
    }
  }
  return false;
}
