/**
 * List continue tokens in kube-apiserver's format (k8s.io/apiserver/pkg/storage/continue.go), so that a
 * token is opaque to clients yet byte-compatible with upstream's: base64url without padding of
 * `{"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key relative to the resource prefix>"}`.
 */
import { newBadRequest } from './status.ts';

const TOKEN_VERSION = 'meta.k8s.io/v1';

/** What a continue token carries: the revision of the first page and the key the next page starts at. */
export interface ContinueToken {
  /** The revision every page is read at; -1 means "continue at the latest revision" (inconsistent). */
  resourceVersion: number;
  /** Where the next page starts, relative to the resource prefix. */
  startKey: string;
}

/**
 * Go's json.Marshal escapes `<`, `>`, `&`, U+2028 and U+2029 where JSON.stringify does not; doing the
 * same keeps tokens byte-identical to upstream's for the same key.
 */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Encodes a continue token. `startKey` is relative to the resource prefix and, when the next page starts
 * after the last returned key, already ends with "\u0000".
 */
export function encodeContinueToken(resourceVersion: number, startKey: string): string {
  if (!Number.isSafeInteger(resourceVersion)) {
    throw new TypeError(`continue token resourceVersion must be an integer, got ${resourceVersion}`);
  }
  const json = goJson({ v: TOKEN_VERSION, rv: resourceVersion, start: startKey });
  return Buffer.from(json, 'utf8').toString('base64url');
}

function invalidToken(reason: string): Error {
  return newBadRequest(`invalid continue token: continue key is not valid${reason ? `: ${reason}` : ''}`);
}

/**
 * base64.RawURLEncoding.DecodeString: URL alphabet, no padding, CR/LF ignored. Node's decoder silently
 * skips bad characters, so the input is checked first.
 */
function decodeRawUrlBase64(token: string): Buffer {
  let significant = 0;
  for (let i = 0; i < token.length; i++) {
    const ch = token[i];
    if (ch === '\r' || ch === '\n') continue;
    if (!/[A-Za-z0-9_-]/.test(ch)) throw invalidToken(`illegal base64 data at input byte ${i}`);
    significant++;
  }
  // A final group of one character cannot carry a whole byte.
  if (significant % 4 === 1) throw invalidToken(`illegal base64 data at input byte ${token.length - 1}`);
  return Buffer.from(token.replace(/[\r\n]/g, ''), 'base64url');
}

/**
 * path.Clean for a rooted path: collapses `//`, drops `.`, resolves `..` and never climbs above `/`, and
 * drops a trailing slash.
 */
function cleanRootedPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/**
 * Decodes a continue token, returning the start key relative to the resource prefix. Throws 400
 * BadRequest (`invalid continue token: …`) on bad base64 or JSON, an unknown version, rv 0, an empty
 * start key, or a start key that `path.Clean` would change — the guard against `../` walking out of the
 * resource's prefix.
 */
export function decodeContinueToken(token: string): ContinueToken {
  const bytes = decodeRawUrlBase64(token);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: false }).decode(bytes));
  } catch (err) {
    throw invalidToken(err instanceof Error ? err.message : String(err));
  }
  // json.Unmarshal of `null` into a struct leaves it zero; anything else that is not an object fails.
  if (parsed === null) parsed = {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidToken(
      `json: cannot unmarshal ${Array.isArray(parsed) ? 'array' : typeof parsed} into continue token`,
    );
  }
  const { v = '', rv = 0, start = '' } = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof v !== 'string')
    throw invalidToken('json: cannot unmarshal non-string into continue token field v');
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv)) {
    throw invalidToken('json: cannot unmarshal non-integer into continue token field rv of type int64');
  }
  if (typeof start !== 'string') {
    throw invalidToken('json: cannot unmarshal non-string into continue token field start');
  }
  if (v !== TOKEN_VERSION)
    throw invalidToken(`server does not recognize this encoded version ${JSON.stringify(v)}`);
  if (rv === 0) {
    throw newBadRequest(
      `invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`,
    );
  }
  if (start === '') {
    throw newBadRequest(
      `invalid continue token: continue key is not valid: encoded start key empty (version ${TOKEN_VERSION})`,
    );
  }
  const rooted = start.startsWith('/') ? start : `/${start}`;
  const cleaned = cleanRootedPath(rooted);
  if (cleaned !== rooted) throw invalidToken(start);
  return { resourceVersion: rv, startKey: cleaned.slice(1) };
}
