import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from '../registry/registry.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import { apiGroups, subresourcesOf } from './discovery.ts';

/**
 * Aggregated discovery (KEP-3352, `apidiscovery.k8s.io/v2`): every group, version and resource in one
 * APIGroupDiscoveryList on `/api` (the core group) and `/apis` (the others), which kubectl 1.30+ and client-go
 * ask for first with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,…`. The
 * client tells the format by the response's Content-Type, so a request that does not ask for it gets the
 * legacy documents (discovery.ts) as before. The documents are built once per change of the served resources
 * and carry an ETag, which the client sends back in If-None-Match to be told 304 Not Modified.
 */

const GROUP = 'apidiscovery.k8s.io';
const KIND = 'APIGroupDiscoveryList';
/** v2 first: kube-apiserver 1.32 still serves v2beta1 to older clients. */
const VERSIONS = ['v2', 'v2beta1'];

interface Documents {
  core: { text: string; etag: string };
  apis: { text: string; etag: string };
}

function resourceEntry(def: ResourceDefinition, version: string) {
  const responseKind = { group: def.group, version, kind: def.kind };
  return {
    resource: def.resource,
    responseKind,
    scope: def.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: def.singular,
    verbs: def.verbs,
    ...(def.shortNames.length ? { shortNames: def.shortNames } : {}),
    ...(def.categories.length ? { categories: def.categories } : {}),
    ...(() => {
      const subresources = subresourcesOf(def).map((s) => ({
        subresource: s.name,
        responseKind:
          s.group !== undefined
            ? { group: s.group, version: s.version, kind: s.kind }
            : { ...responseKind, kind: s.kind },
        verbs: s.verbs,
      }));
      return subresources.length ? { subresources } : {};
    })(),
  };
}

function groupEntry(registry: Registry, group: string, versions: string[]) {
  const defs = registry
    .all()
    .map((s) => s.def)
    .filter((d) => d.group === group);
  return {
    metadata: { ...(group ? { name: group } : {}), creationTimestamp: null },
    versions: versions.map((version) => ({
      version,
      resources: defs
        .filter((d) => d.versions.includes(version))
        .sort((a, b) => a.resource.localeCompare(b.resource))
        .map((d) => resourceEntry(d, version)),
      freshness: 'Current',
    })),
  };
}

function document(items: unknown[]): { text: string; etag: string } {
  // The apiVersion is filled in per answer: the same items serve v2 and v2beta1.
  const text = JSON.stringify({ kind: KIND, apiVersion: `${GROUP}/@VERSION@`, metadata: {}, items });
  return { text, etag: `"${createHash('sha256').update(text).digest('hex').toUpperCase()}"` };
}

/** The aggregated version the Accept header asks for before anything it would take instead, if any. */
export function aggregatedVersion(accept: string | undefined): string | undefined {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    const params = Object.fromEntries(
      rest.map((p) => {
        const eq = p.indexOf('=');
        return [p.slice(0, eq).trim(), p.slice(eq + 1).trim()];
      }),
    );
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    if (params.as === undefined && params.g === undefined) return undefined;
    if (params.as === KIND && params.g === GROUP && VERSIONS.includes(params.v)) return params.v;
  }
  return undefined;
}

export class AggregatedDiscovery {
  private readonly registry: Registry;
  private documents: Documents | undefined;

  constructor(registry: Registry) {
    this.registry = registry;
    registry.onChange(() => {
      this.documents = undefined;
    });
  }

  private build(): Documents {
    const groups = apiGroups(this.registry);
    return {
      core: document([groupEntry(this.registry, '', ['v1'])]),
      apis: document([...groups].map(([group, versions]) => groupEntry(this.registry, group, versions))),
    };
  }

  /** Answers with the aggregated document when the request asks for one; false leaves it to legacy discovery. */
  serve(req: IncomingMessage, res: ServerResponse, which: 'core' | 'apis'): boolean {
    const version = aggregatedVersion(req.headers.accept);
    if (!version) return false;
    const doc = (this.documents ??= this.build())[which];
    const headers = {
      'Content-Type': `application/json;g=${GROUP};v=${version};as=${KIND}`,
      Vary: 'Accept',
      ETag: doc.etag,
      'Cache-Control': 'no-cache, private',
    };
    if (req.headers['if-none-match'] === doc.etag) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    const body = doc.text.replace('@VERSION@', version);
    res.writeHead(200, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(body);
    return true;
  }
}

/** One per registry, built on the first request that asks for aggregated discovery. */
const byRegistry = new WeakMap<Registry, AggregatedDiscovery>();

/** AggregatedDiscovery.serve with the registry's instance. */
export function serveAggregatedDiscovery(
  registry: Registry,
  req: IncomingMessage,
  res: ServerResponse,
  which: 'core' | 'apis',
): boolean {
  let discovery = byRegistry.get(registry);
  if (!discovery) {
    discovery = new AggregatedDiscovery(registry);
    byRegistry.set(registry, discovery);
  }
  return discovery.serve(req, res, which);
}
