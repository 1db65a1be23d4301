import { isWatchRequested, newBadRequest } from '@certkit/apimachinery';

/**
 * Parses a Kubernetes API path into what it addresses, as kube-apiserver's RequestInfoFactory does:
 * `/api/v1/namespaces/ns/secrets/name/status`, `/apis/group/version/resource`, the legacy `/watch/` prefix.
 */
export interface ResourceRequest {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** The `/watch/` path prefix (deprecated but still served). */
  legacyWatch: boolean;
}

/** Subresources of a namespace: `/api/v1/namespaces/x/status` addresses namespace x, not a resource "status". */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Whether a GET watches, as kube's RequestInfo decides: under the legacy `/watch/` path, or of a collection
 * with `watch` set. A GET of a named object is a get whatever `watch` says (kube reads ListOptions only when
 * the path names no object), so `…/configmaps/name?watch=true` answers the object, and RBAC asks for `get`.
 */
export function isWatchRequest(request: ResourceRequest, query: URLSearchParams): boolean {
  return request.legacyWatch || (request.name === undefined && isWatchRequested(query));
}

export type ParsedPath =
  | { kind: 'resource'; request: ResourceRequest }
  | { kind: 'groupVersion'; group: string; version: string }
  | { kind: 'group'; group: string }
  | { kind: 'other' };

/**
 * Parses of recent paths: a client repeats the same few (a collection it creates in, an object it updates
 * twice). Bounded, as paths are the client's; the results are shared, so read-only.
 */
const parsedPaths = new Map<string, ParsedPath>();
const MAX_PARSED_PATHS = 1024;

/**
 * A path segment's escapes decoded. Escapes that do not form UTF-8 (`%ff`) cannot be a name, a namespace or a
 * resource: a 400, as for any other undecodable path, rather than the URIError decodeURIComponent throws.
 */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw newBadRequest(`invalid URL escape in path segment ${JSON.stringify(segment)}: not UTF-8`);
  }
}

export function parseApiPath(pathname: string): ParsedPath {
  let parsed = parsedPaths.get(pathname);
  if (parsed === undefined) {
    parsed = parseApiPathUncached(pathname);
    if (parsedPaths.size >= MAX_PARSED_PATHS) parsedPaths.clear();
    parsedPaths.set(pathname, parsed);
  }
  return parsed;
}

function parseApiPathUncached(pathname: string): ParsedPath {
  const parts: string[] = [];
  for (const segment of pathname.split('/')) {
    // Parsed on every request: only segments with an escape need decoding.
    if (segment !== '') parts.push(segment.includes('%') ? decodeSegment(segment) : segment);
  }
  let group: string;
  let version: string;
  // The rest of the path is parts[at] on: indices rather than copies of the array (a request's worth of them).
  let at: number;
  if (parts[0] === 'api') {
    if (parts.length < 2) return { kind: 'other' };
    group = '';
    version = parts[1];
    at = 2;
  } else if (parts[0] === 'apis') {
    if (parts.length === 2) return { kind: 'group', group: parts[1] };
    if (parts.length < 3) return { kind: 'other' };
    group = parts[1];
    version = parts[2];
    at = 3;
  } else {
    return { kind: 'other' };
  }
  if (at === parts.length) return { kind: 'groupVersion', group, version };
  let legacyWatch = false;
  if (parts[at] === 'watch') {
    legacyWatch = true;
    at++;
    if (at === parts.length) return { kind: 'other' };
  }
  let namespace: string | undefined;
  if (parts[at] === 'namespaces' && parts.length - at > 1) {
    namespace = parts[at + 1];
    if (parts.length - at > 2 && !NAMESPACE_SUBRESOURCES.has(parts[at + 2])) at += 2;
  }
  // resource, name, subresource: no more.
  if (parts.length - at > 3) return { kind: 'other' };
  const resource = parts[at];
  const name = parts[at + 1];
  const subresource = parts[at + 2];
  // `/api/v1/namespaces/x` names namespace x; it is not "inside" a namespace.
  if (resource === 'namespaces') namespace = undefined;
  return {
    kind: 'resource',
    request: { group, version, namespace, resource, name, subresource, legacyWatch },
  };
}
