import { createHash } from 'node:crypto';
import type { Registry } from '../registry/registry.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import { servedGroupVersions } from './discovery.ts';

/**
 * The OpenAPI v3 surface kubectl needs: per group/version documents whose PATCH operations carry the
 * `x-kubernetes-group-version-kind` extension and a `fieldValidation` query parameter. Seeing that, kubectl
 * skips client-side validation and sends `fieldValidation=Strict`, trusting the server (which validates).
 * PATCH operations declare no request body on purpose: kubectl then computes patches from its own types
 * (strategic merge for built-ins, merge patch for custom kinds) instead of from these schemas.
 */

const VERSION_INFO = { title: 'Kubernetes', version: 'v1.32.0' };

function queryParameter(name: string, description: string) {
  return { name, in: 'query', description, schema: { type: 'string', uniqueItems: true } };
}

const WRITE_PARAMETERS = [
  queryParameter('dryRun', 'When present, indicates that modifications should not be persisted.'),
  queryParameter(
    'fieldManager',
    'fieldManager is a name associated with the actor or entity that is making these changes.',
  ),
  queryParameter(
    'fieldValidation',
    'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.',
  ),
];

function gvkExtension(def: ResourceDefinition, version: string) {
  return { 'x-kubernetes-group-version-kind': { group: def.group, version, kind: def.kind } };
}

function resourcePaths(def: ResourceDefinition, version: string, prefix: string): Record<string, unknown> {
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
  const paths: Record<string, unknown> = {
    [base]: { get: op('list'), post: op('post', { parameters: WRITE_PARAMETERS }) },
    [`${base}/{name}`]: {
      get: op('get'),
      put: op('put', { parameters: WRITE_PARAMETERS }),
      patch: op('patch', { parameters: WRITE_PARAMETERS }),
      delete: op('delete'),
    },
  };
  if (def.statusSubresource) {
    paths[`${base}/{name}/status`] = {
      get: op('get'),
      put: op('put', { parameters: WRITE_PARAMETERS }),
      patch: op('patch', { parameters: WRITE_PARAMETERS }),
    };
  }
  return paths;
}

export function groupVersionDocument(
  registry: Registry,
  group: string,
  version: string,
): unknown | undefined {
  const defs = registry
    .all()
    .map((s) => s.def)
    .filter((d) => d.group === group && d.versions.includes(version));
  if (defs.length === 0) return undefined;
  const prefix = group === '' ? `api/${version}` : `apis/${group}/${version}`;
  const paths: Record<string, unknown> = {};
  for (const def of defs) Object.assign(paths, resourcePaths(def, version, prefix));
  return { openapi: '3.0.0', info: VERSION_INFO, paths, components: { schemas: {} } };
}

export function openApiRoot(registry: Registry): unknown {
  const paths: Record<string, unknown> = {};
  for (const gv of servedGroupVersions(registry)) {
    const doc = groupVersionDocument(registry, gv.group, gv.version);
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();
    paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${hash}` };
  }
  return { paths };
}
