import { createHash } from 'node:crypto';
import type { Registry } from '../registry/registry.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import { servedGroupVersions } from './discovery.ts';
import { encodeSwaggerProtobuf } from './openapi-v2-protobuf.ts';
import { kindSchemas } from './openapi-schemas.ts';

/**
 * The OpenAPI surface kubectl needs: per group/version v3 documents whose PATCH operations carry the
 * `x-kubernetes-group-version-kind` extension and a `fieldValidation` query parameter. Seeing that, kubectl
 * skips client-side validation and sends `fieldValidation=Strict`, trusting the server (which validates).
 * PATCH operations declare no request body on purpose: kubectl then computes patches from its own types
 * (strategic merge for built-ins, merge patch for custom kinds) instead of from these schemas. The documents'
 * schemas (openapi-schemas.ts) are what `kubectl explain` reads; /openapi/v2 carries the same as Swagger 2.0.
 */

const VERSION_INFO = { title: 'Kubernetes', version: 'v1.32.0' };

/** A query parameter as OpenAPI v3 declares it, or (`swagger`) as Swagger 2.0 does. */
function queryParameter(name: string, description: string, swagger: boolean) {
  const type = { type: 'string', uniqueItems: true };
  return swagger
    ? { name, in: 'query', description, ...type }
    : { name, in: 'query', description, schema: type };
}

function writeParameters(swagger: boolean) {
  return [
    queryParameter('dryRun', 'When present, indicates that modifications should not be persisted.', swagger),
    queryParameter(
      'fieldManager',
      'fieldManager is a name associated with the actor or entity that is making these changes.',
      swagger,
    ),
    queryParameter(
      'fieldValidation',
      'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.',
      swagger,
    ),
  ];
}

function gvkExtension(def: ResourceDefinition, version: string) {
  return { 'x-kubernetes-group-version-kind': { group: def.group, version, kind: def.kind } };
}

function resourcePaths(
  def: ResourceDefinition,
  version: string,
  prefix: string,
  swagger = false,
): Record<string, unknown> {
  const parameters = writeParameters(swagger);
  const base = def.namespaced
    ? `/${prefix}/namespaces/{namespace}/${def.resource}`
    : `/${prefix}/${def.resource}`;
  const gvk = gvkExtension(def, version);
  const op = (action: string, extra: Record<string, unknown> = {}) => ({
    operationId: `${action}${def.kind}`,
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': action,
    ...gvk,
    ...extra,
  });
  // A create-only kind (the access reviews) has the one route, as in kube-apiserver's document.
  if (def.createOnly) return { [base]: { post: op('post', { parameters }) } };
  const paths: Record<string, unknown> = {
    [base]: { get: op('list'), post: op('post', { parameters }) },
    [`${base}/{name}`]: {
      get: op('get'),
      put: op('put', { parameters }),
      patch: op('patch', { parameters }),
      delete: op('delete'),
    },
  };
  if (def.statusSubresource) {
    paths[`${base}/{name}/status`] = {
      get: op('get'),
      put: op('put', { parameters }),
      patch: op('patch', { parameters }),
    };
  }
  for (const subresource of def.updateOnlySubresources ?? [])
    paths[`${base}/{name}/${subresource}`] = { put: op('put', { parameters }) };
  return paths;
}

function servedDefinitions(registry: Registry, group: string, version: string): ResourceDefinition[] {
  return registry
    .all()
    .map((s) => s.def)
    .filter((d) => d.group === group && d.versions.includes(version));
}

function prefixOf(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

export async function groupVersionDocument(
  registry: Registry,
  group: string,
  version: string,
): Promise<unknown | undefined> {
  const defs = servedDefinitions(registry, group, version);
  if (defs.length === 0) return undefined;
  const prefix = prefixOf(group, version);
  const paths: Record<string, unknown> = {};
  for (const def of defs) Object.assign(paths, resourcePaths(def, version, prefix));
  const schemas = await kindSchemas(defs, version, '#/components/schemas/');
  return { openapi: '3.0.0', info: VERSION_INFO, paths, components: { schemas } };
}

/**
 * The OpenAPI documents served, as text with their hashes, built once per set of served resources (a CRD
 * installed, changed or removed builds them again): building them loads every served kind's types.
 */
export class OpenApiDocuments {
  private readonly registry: Registry;
  private v3 = new Map<string, Promise<{ text: string; hash: string } | undefined>>();
  private v2: Promise<SwaggerDocument> | undefined;

  constructor(registry: Registry) {
    this.registry = registry;
    registry.onChange(() => {
      this.v3 = new Map();
      this.v2 = undefined;
    });
  }

  /** The document of one group/version, by its path below /openapi/v3/ (`api/v1`, `apis/<group>/<version>`). */
  groupVersion(path: string): Promise<{ text: string; hash: string } | undefined> {
    const cached = this.v3.get(path);
    if (cached) return cached;
    const parts = path.split('/');
    const gv =
      parts[0] === 'api' && parts.length === 2
        ? { group: '', version: parts[1] }
        : parts[0] === 'apis' && parts.length === 3
          ? { group: parts[1], version: parts[2] }
          : undefined;
    // Only documents that exist are kept: a path anyone may ask for must not grow the cache.
    if (!gv || servedDefinitions(this.registry, gv.group, gv.version).length === 0)
      return Promise.resolve(undefined);
    const documents = this.v3;
    const doc = groupVersionDocument(this.registry, gv.group, gv.version).then((d) => {
      if (d === undefined) return undefined;
      const text = JSON.stringify(d);
      const hash = createHash('sha512').update(text).digest('hex').slice(0, 32).toUpperCase();
      return { text, hash };
    });
    documents.set(path, doc);
    // A build that failed is tried again on the next request rather than kept.
    doc.catch(() => documents.delete(path));
    return doc;
  }

  /** The discovery document of /openapi/v3: each group/version's document with its hash. */
  async root(): Promise<unknown> {
    const paths: Record<string, unknown> = {};
    for (const gv of servedGroupVersions(this.registry)) {
      const doc = await this.groupVersion(gv.path);
      if (doc) paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${doc.hash}` };
    }
    return { paths };
  }

  /** The Swagger 2.0 document of every served kind (/openapi/v2), which kubectl falls back to. */
  swagger(): Promise<SwaggerDocument> {
    if (!this.v2) {
      const doc = swaggerDocument(this.registry).then((d) => new SwaggerDocument(d));
      this.v2 = doc;
      doc.catch(() => {
        if (this.v2 === doc) this.v2 = undefined;
      });
    }
    return this.v2;
  }
}

/**
 * /openapi/v2 in its two encodings, which share one ETag (the JSON's SHA-512, as kube-openapi's): responses
 * vary by Accept. The protobuf is encoded on first request only, as few clients ask for it.
 */
export class SwaggerDocument {
  readonly text: string;
  readonly etag: string;
  private readonly doc: Record<string, unknown>;
  private encoded: Buffer | undefined;

  constructor(doc: Record<string, unknown>) {
    this.doc = doc;
    this.text = JSON.stringify(doc);
    this.etag = `"${createHash('sha512').update(this.text).digest('hex').toUpperCase()}"`;
  }

  get protobuf(): Buffer {
    this.encoded ??= encodeSwaggerProtobuf(this.doc);
    return this.encoded;
  }
}

async function swaggerDocument(registry: Registry): Promise<Record<string, unknown>> {
  const definitions: Record<string, unknown> = {};
  const paths: Record<string, unknown> = {};
  for (const gv of servedGroupVersions(registry)) {
    const defs = servedDefinitions(registry, gv.group, gv.version);
    Object.assign(definitions, await kindSchemas(defs, gv.version, '#/definitions/'));
    for (const def of defs)
      Object.assign(paths, resourcePaths(def, gv.version, prefixOf(gv.group, gv.version), true));
  }
  return { swagger: '2.0', info: VERSION_INFO, paths, definitions };
}
