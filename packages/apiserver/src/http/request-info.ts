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
    if (segment !== '') parts.push(segment.includes('%') ? decodeURIComponent(segment) : segment);
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length < 2) return { kind: 'other' };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 2) return { kind: 'group', group: parts[1] };
    if (parts.length < 3) return { kind: 'other' };
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { kind: 'other' };
  }
  if (rest.length === 0) return { kind: 'groupVersion', group, version };
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
    if (rest.length === 0) return { kind: 'other' };
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (extra.length > 0) return { kind: 'other' };
  // `/api/v1/namespaces/x` names namespace x; it is not "inside" a namespace.
  if (resource === 'namespaces') namespace = undefined;
  return {
    kind: 'resource',
    request: { group, version, namespace, resource, name, subresource, legacyWatch },
  };
}
