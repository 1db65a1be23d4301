import type { IncomingMessage, ServerResponse } from 'node:http';
import { newNotAcceptable } from '@certkit/apimachinery';
import type { SwaggerDocument } from './openapi.ts';

/**
 * Serving /openapi/v2 as kube-openapi does: JSON, or gnostic's protobuf `Document` (openapi-v2-protobuf.ts) to
 * a client that asks for it by either of its names (kubectl sends the `@v1.0` one and only that), the first
 * Accept entry by preference that matches winning. Both carry the JSON's ETag, and `If-None-Match` with it is
 * a 304. An Accept naming neither is a 406, as is one that names them only with `q=0` (kube-openapi ranks a
 * `q=0` entry last but still serves it; HTTP says it means "not acceptable").
 */

const PROTOBUF_TYPES = new Set([
  'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
]);
/** The name kube-openapi answers with, whichever of the two was asked for. */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

interface Clause {
  type: string;
  q: number;
  wildcards: number;
}

/** Accept entries, most preferred first: by q, then the more specific, then in the order sent. */
function acceptClauses(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!type) continue;
    const qParam = params.find((p) => /^q\s*=/.test(p));
    const q = qParam === undefined ? 1 : Number(qParam.slice(qParam.indexOf('=') + 1));
    if (!(q > 0)) continue;
    clauses.push({ type, q, wildcards: (type.match(/\*/g) ?? []).length });
  }
  return clauses.sort((a, b) => b.q - a.q || a.wildcards - b.wildcards);
}

function encodingFor(accept: string): 'json' | 'protobuf' | undefined {
  for (const { type } of acceptClauses(accept)) {
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return 'json';
    if (PROTOBUF_TYPES.has(type)) return 'protobuf';
  }
  return undefined;
}

export function serveSwagger(req: IncomingMessage, res: ServerResponse, doc: SwaggerDocument): void {
  const encoding = encodingFor(req.headers.accept || '*/*');
  if (!encoding)
    throw newNotAcceptable(
      `only the following media types are accepted: application/json, ${OPENAPI_V2_PROTOBUF_CONTENT_TYPE}`,
    );
  const headers = {
    'Cache-Control': 'no-cache, private',
    ETag: doc.etag,
    Vary: 'Accept',
  };
  if (req.headers['if-none-match'] === doc.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const body = encoding === 'json' ? Buffer.from(doc.text) : doc.protobuf;
  res.writeHead(200, {
    ...headers,
    'Content-Type': encoding === 'json' ? 'application/json' : OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
    'Content-Length': String(body.length),
  });
  res.end(body);
}
