import { newNotAcceptable } from '@certkit/apimachinery';

/**
 * Content negotiation of responses. Clients ask for plain JSON, for metadata only
 * (`application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`) or for a Table (`kubectl get`), in an
 * Accept list that may also name protobuf, which this server does not speak and skips.
 */
export type Rendering = 'object' | 'metadata' | 'table';

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

/** Parsed Accept headers: clients send the same few on every request. Bounded, as headers are the client's. */
const parsedAccepts = new Map<string, readonly MediaRange[]>();
const MAX_PARSED_ACCEPTS = 64;
const ANY: readonly MediaRange[] = Object.freeze([Object.freeze({ type: '*/*', params: Object.freeze({}) })]);

function parseAccept(header: string | undefined): readonly MediaRange[] {
  if (!header) return ANY;
  let ranges = parsedAccepts.get(header);
  if (ranges === undefined) {
    ranges = parseAcceptUncached(header);
    if (parsedAccepts.size >= MAX_PARSED_ACCEPTS) parsedAccepts.clear();
    parsedAccepts.set(header, ranges);
  }
  return ranges;
}

function parseAcceptUncached(header: string): readonly MediaRange[] {
  return header.split(',').map((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    const parsed: Record<string, string> = {};
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq > 0)
        parsed[p.slice(0, eq).trim()] = p
          .slice(eq + 1)
          .trim()
          .replace(/^"|"$/g, '');
    }
    return { type: type.toLowerCase(), params: parsed };
  });
}

const JSON_TYPES = new Set(['application/json', 'application/*', '*/*']);
const META_VERSIONS = new Set(['v1', 'v1beta1']);

/**
 * Picks the rendering for a response. `list` tells whether the response is a collection (lists and watches
 * of many objects take `as=PartialObjectMetadataList` for lists, `as=PartialObjectMetadata` per watch event).
 */
export function negotiate(accept: string | undefined, shape: 'single' | 'list' | 'watch'): Rendering {
  let refusal: string | undefined;
  for (const range of parseAccept(accept)) {
    if (!JSON_TYPES.has(range.type)) continue;
    const as = range.params.as;
    if (!as) return 'object';
    if (range.params.g !== 'meta.k8s.io' || !META_VERSIONS.has(range.params.v ?? '')) {
      refusal = `only the following media types are accepted: application/json, application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io`;
      continue;
    }
    if (as === 'Table') return 'table';
    const wanted = shape === 'list' ? 'PartialObjectMetadataList' : 'PartialObjectMetadata';
    if (as === wanted) return 'metadata';
    refusal = `only the following media types are accepted: application/json, application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=${wanted};v=v1;g=meta.k8s.io`;
  }
  throw newNotAcceptable(refusal ?? 'only the following media types are accepted: application/json');
}

/** True when the client accepts JSON at all (for endpoints with a single rendering). */
export function acceptsJson(accept: string | undefined): boolean {
  return parseAccept(accept).some((r) => JSON_TYPES.has(r.type) || r.type === 'application/json');
}

/** Parameters of an Accept entry the client preferred, e.g. for aggregated discovery. */
export function acceptsMediaType(
  accept: string | undefined,
  match: (type: string, params: Record<string, string>) => boolean,
): boolean {
  return parseAccept(accept).some((r) => match(r.type, r.params));
}
