/**
 * Routing of the requests on resources (`/api/v1/...`, `/apis/<group>/<version>/...`): looks the resource up
 * in the Registry, checks scope, name and subresource, and hands the request to its verb's handler in
 * handlers/ (get, list, watch, create, update, patch and apply, delete, deletecollection).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { goQuote, newBadRequest, newMethodNotAllowed, newNotFound } from '@certkit/apimachinery';
import type { Registry } from '../registry/registry.ts';
import { apiVersionOf, qualifiedName, type ResourceDefinition } from '../registry/resource.ts';
import type { WatchCaches } from '../watchcache/caches.ts';
import { handleCreate } from './handlers/create.ts';
import { handleCreateOnly } from './handlers/create-only.ts';
import { handleDelete } from './handlers/delete.ts';
import { handleDeleteCollection } from './handlers/deletecollection.ts';
import { handleGet } from './handlers/get.ts';
import { handleList } from './handlers/list.ts';
import { handlePatch } from './handlers/patch.ts';
import { handleScale } from './handlers/scale.ts';
import { handleUpdate } from './handlers/update.ts';
import type { VerbRequest } from './handlers/verb-request.ts';
import { handleWatch, isWatch } from './handlers/watch.ts';
import type { ResourceRequest } from './request-info.ts';
import type { WatchCounters } from './watch.ts';

const NOT_FOUND_MESSAGE = 'the server could not find the requested resource';

function notFoundResource(): Error {
  const err = newNotFound({ group: '', resource: '' }, '');
  err.status.message = NOT_FOUND_MESSAGE;
  err.status.details = {};
  return err;
}

/** What the resource handlers need from the server around them. */
export interface ResourceContext {
  registry: Registry;
  caches: WatchCaches;
  watchCounters(def: ResourceDefinition): WatchCounters | undefined;
  /** How long a list waits for a client that reads nothing before cutting it off (default 1 min). */
  listStallTimeoutMs?: number;
  /** How long a request body may take to arrive before 504 and the connection closed (default 1 min). */
  bodyTimeoutMs?: number;
  /**
   * Subresources served by a handler of their own rather than the verbs, by `<resource>.<group>/<subresource>`
   * (the group part left out for the core group): `serviceaccounts/token`.
   */
  subresources?: Map<string, (verb: VerbRequest) => Promise<void>>;
}

export async function handleResource(
  context: ResourceContext,
  req: IncomingMessage,
  res: ServerResponse,
  request: ResourceRequest,
  query: URLSearchParams,
): Promise<void> {
  const store = context.registry.lookup(request.group, request.version, request.resource);
  if (!store) throw notFoundResource();
  if (request.name !== undefined) checkPathSegmentName(request.name);
  const reader = context.caches.reader(store);
  const def = store.def;
  if (request.namespace !== undefined && !def.namespaced) throw notFoundResource();
  if (
    def.namespaced &&
    request.name !== undefined &&
    request.namespace === undefined &&
    !request.legacyWatch
  ) {
    throw notFoundResource();
  }
  const own =
    request.subresource === undefined
      ? undefined
      : context.subresources?.get(`${qualifiedName(def)}/${request.subresource}`);
  if (
    request.subresource !== undefined &&
    own === undefined &&
    !servesSubresource(def, request.subresource)
  ) {
    throw notFoundResource();
  }
  const name = request.name;
  const verb: VerbRequest = {
    context,
    req,
    res,
    request,
    query,
    store,
    def,
    reader,
    namespace: def.namespaced ? request.namespace : undefined,
    name,
    subresource: request.subresource,
    apiVersion: apiVersionOf(def, request.version),
  };

  if (own) return own(verb);
  if (def.createOnly) return handleCreateOnly(verb);
  if (request.subresource !== undefined)
    checkSubresourceMethod(def, request.subresource, req.method ?? 'GET');
  if (request.subresource === 'scale' && def.scale) {
    if (name === undefined) throw notFoundResource();
    return handleScale(verb, name, def.scale);
  }
  switch (req.method ?? 'GET') {
    case 'GET':
      if (isWatch(query, request)) return handleWatch(verb);
      return name !== undefined ? handleGet(verb, name) : handleList(verb);
    case 'POST':
      if (name !== undefined) throw newMethodNotAllowed();
      if (def.namespaced && verb.namespace === undefined) throw notFoundResource();
      return handleCreate(verb);
    case 'PUT':
      if (name === undefined) throw newMethodNotAllowed();
      return handleUpdate(verb, name);
    case 'PATCH':
      if (name === undefined) throw newMethodNotAllowed();
      return handlePatch(verb, name);
    case 'DELETE':
      return name !== undefined ? handleDelete(verb, name) : handleDeleteCollection(verb);
    default:
      throw newMethodNotAllowed();
  }
}

/**
 * Subresources the verbs serve: status, the kind's status-like ones (a CSR's approval), its update-only ones
 * (a Namespace's finalize) and scale.
 */
function servesSubresource(def: ResourceDefinition, subresource: string): boolean {
  if (subresource === 'status') return def.statusSubresource;
  if (subresource === 'scale') return def.scale !== undefined;
  return (
    (def.statusLikeSubresources?.includes(subresource) ?? false) ||
    (def.updateOnlySubresources?.includes(subresource) ?? false)
  );
}

/**
 * The methods a subresource has routes for in kube-apiserver: GET, PUT and PATCH (its REST storage is a Getter
 * and an Updater, never a Deleter), PUT alone for an update-only one; any other is a 405, so that a DELETE of
 * `…/status` never reaches the object.
 */
function checkSubresourceMethod(def: ResourceDefinition, subresource: string, method: string): void {
  const allowed = def.updateOnlySubresources?.includes(subresource) ? ['PUT'] : ['GET', 'PUT', 'PATCH'];
  if (!allowed.includes(method)) throw newMethodNotAllowed();
}

/**
 * A name from the path must be usable as one path segment, as kube-apiserver's storage key functions check
 * (apimachinery's IsValidPathSegmentName): `.` and `..` are no names, nor is anything with `/` or `%`.
 */
function checkPathSegmentName(name: string): void {
  const problems =
    name === '.' || name === '..'
      ? [`may not be '${name}'`]
      : ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
  if (problems.length > 0)
    throw newBadRequest(`Name parameter invalid: ${goQuote(name)}: ${problems.join(';')}`);
}
