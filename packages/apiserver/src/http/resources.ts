import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  escapeFieldValue,
  isWatchRequested,
  type KubeObject,
  type ListOptions,
  newBadRequest,
  newInvalid,
  newMethodNotAllowed,
  newNotFound,
  newUnsupportedMediaType,
  parseFieldSelector,
  parseListOptions,
  queryBool,
  type StoredObject,
} from '@certkit/apimachinery';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  patchTypeFromContentType,
} from '../registry/patch.ts';
import { deleteOptionsTypeError, objectMetaTypeError } from '../registry/go-types.ts';
import { exceedsMaxDepth, maxDepthMessage } from '../registry/json-depth.ts';
import type { Registry } from '../registry/registry.ts';
import { apiVersionOf, type ResourceDefinition } from '../registry/resource.ts';
import type { WatchCaches } from '../watchcache/caches.ts';
import type { ReadRendering } from '../watchcache/reader.ts';
import type { DeleteOptions, ObjectStore } from '../registry/store.ts';
import { managerFromUserAgent } from '../registry/managed-fields.ts';
import { checkForce, serverSideApply } from './apply.ts';
import {
  decodePatchedObject,
  decodeStoredObject,
  decodeWriteBody,
  fieldValidationMode,
  patchTextErrors,
  writeTypes,
} from './field-validation.ts';
import { negotiate } from './negotiate.ts';
import { parseObjectBody, PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import {
  type IncludeObject,
  type RenderOptions,
  objectBody,
  renderCachedList,
  renderList,
} from './render.ts';
import type { ResourceRequest } from './request-info.ts';
import { parseJsonBody, readBody, sendJson, sendJsonText } from './respond.ts';
import { serveWatch, type WatchCounters } from './watch.ts';

/** The verbs on resources: get, list, watch, create, update, patch, delete, deletecollection. */

const NOT_FOUND_MESSAGE = 'the server could not find the requested resource';

function notFoundResource(): Error {
  const err = newNotFound({ group: '', resource: '' }, '');
  err.status.message = NOT_FOUND_MESSAGE;
  err.status.details = {};
  return err;
}

function isWatch(query: URLSearchParams, request: ResourceRequest): boolean {
  return request.legacyWatch || isWatchRequested(query);
}

function dryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values)
    if (v !== 'All') throw newBadRequest(`Invalid dry run value: ${v}; only "All" is supported`);
  return values.length > 0;
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? 'Metadata';
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object')
    throw newBadRequest(`includeObject: unsupported value "${v}"`);
  return v;
}

function deleteOptions(query: URLSearchParams, body: Buffer, contentType: string | undefined): DeleteOptions {
  const options: DeleteOptions = {};
  if (body.length > 0) {
    const decoded = parseObjectBody(body, contentType);
    const wrongType = deleteOptionsTypeError(decoded);
    if (wrongType) throw newBadRequest(wrongType);
    const parsed = decoded as {
      propagationPolicy?: string;
      orphanDependents?: boolean;
      preconditions?: { uid?: string; resourceVersion?: string };
      dryRun?: string[];
    };
    if (parsed.propagationPolicy)
      options.propagationPolicy = parsed.propagationPolicy as DeleteOptions['propagationPolicy'];
    if (parsed.orphanDependents !== undefined) options.orphanDependents = parsed.orphanDependents;
    if (parsed.preconditions) options.preconditions = parsed.preconditions;
    if (parsed.dryRun?.includes('All')) options.dryRun = true;
  }
  const policy = query.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = queryBool(query, 'orphanDependents');
  if (orphan !== undefined) options.orphanDependents = orphan;
  if (dryRun(query)) options.dryRun = true;
  if (
    options.propagationPolicy &&
    !['Orphan', 'Background', 'Foreground'].includes(options.propagationPolicy)
  ) {
    throw newBadRequest(
      `DeleteOptions.propagationPolicy: Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  if (options.propagationPolicy && options.orphanDependents !== undefined) {
    throw newBadRequest(
      'DeleteOptions.propagationPolicy: Invalid value: cannot set both OrphanDependents and PropagationPolicy',
    );
  }
  return options;
}

/**
 * kube-apiserver decodes a patched object as it decodes a body; when that fails, the patch is what was
 * invalid (handlers/patch.go: 422 with the field `patch`, the patched object as its value and the
 * decoder's error). Wrong member types and nesting past the JSON limit, which a patch can build from a
 * shallower object, end here.
 */
function checkPatchedDecodable(def: ResourceDefinition, patched: KubeObject): void {
  const err = exceedsMaxDepth(patched)
    ? maxDepthMessage()
    : objectMetaTypeError(patched, def.custom ? undefined : def.kind);
  if (err === undefined) return;
  throw newInvalid('', '', '', [
    { type: 'FieldValueInvalid', field: 'patch', value: JSON.stringify(patched), detail: err },
  ]);
}

/** True when a patch document itself sets metadata.resourceVersion (then a conflict is the client's, not retried). */
function patchSetsResourceVersion(type: string, patch: unknown): boolean {
  if (type === 'json') {
    return (
      Array.isArray(patch) &&
      patch.some((op) => (op as { path?: string })?.path === '/metadata/resourceVersion')
    );
  }
  const meta = (patch as { metadata?: { resourceVersion?: unknown } })?.metadata;
  return meta?.resourceVersion !== undefined && meta.resourceVersion !== null;
}

/** What the resource handlers need from the server around them. */
export interface ResourceContext {
  registry: Registry;
  caches: WatchCaches;
  watchCounters(def: ResourceDefinition): WatchCounters | undefined;
}

function readRendering(render: RenderOptions): ReadRendering {
  if (render.rendering === 'metadata') return { kind: 'metadata' };
  if (render.rendering === 'table') return { kind: 'table' };
  return { kind: 'object', apiVersion: render.apiVersion };
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
  if (
    request.subresource !== undefined &&
    !(request.subresource === 'status' && (def.statusSubresource || def.resource === 'namespaces'))
  ) {
    throw notFoundResource();
  }
  const namespace = def.namespaced ? request.namespace : undefined;
  const apiVersion = apiVersionOf(def, request.version);
  const method = req.method ?? 'GET';
  const name = request.name;
  const subresource = request.subresource;
  // The manager of an ordinary write, worked out only for objects that carry managedFields (were applied).
  const fieldManager = () => query.get('fieldManager') ?? managerFromUserAgent(req.headers['user-agent']);

  const renderFor = (shape: 'single' | 'list' | 'watch'): RenderOptions => ({
    rendering: negotiate(req.headers.accept, shape),
    apiVersion,
    includeObject: includeObject(query),
  });

  switch (method) {
    case 'GET': {
      if (isWatch(query, request)) {
        const options = parseListOptions(query, 'watch');
        const watchOptions: ListOptions = name
          ? { ...options, fieldSelector: withName(options, name) }
          : options;
        const render = renderFor('watch');
        const rendering = readRendering(render);
        await serveWatch(
          req,
          res,
          def,
          watchOptions,
          render,
          (sink) => reader.watch(namespace, watchOptions, rendering, sink),
          context.watchCounters(def),
        );
        return;
      }
      if (name !== undefined) {
        const render = renderFor('single');
        const { resourceVersion } = parseListOptions(query, 'get');
        const obj = await reader.get(namespace, name, resourceVersion);
        sendJsonText(res, 200, objectBody(def, obj, render));
        return;
      }
      const render = renderFor('list');
      const result = await reader.list(namespace, parseListOptions(query, 'list'));
      if ('entries' in result) sendJsonText(res, 200, renderCachedList(def, result, render));
      else sendJson(res, 200, renderList(def, result, render));
      return;
    }
    case 'POST': {
      if (name !== undefined) throw newMethodNotAllowed('POST', 'a named resource');
      if (def.namespaced && namespace === undefined) throw notFoundResource();
      const render = renderFor('single');
      const mode = fieldValidationMode(query);
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const raw = await readBody(req);
      const body = parseObjectBody(raw, req.headers['content-type']) as KubeObject;
      decodeWriteBody(def, types, body, request.version, mode, jsonText(raw, req), res);
      // The parsed body is this request's alone: the store may keep and change it rather than copy it.
      const created = await store.create(namespace, body, {
        dryRun: dryRun(query),
        version: request.version,
        inputOwned: true,
      });
      sendJsonText(res, 201, objectBody(def, created, render));
      return;
    }
    case 'PUT': {
      if (name === undefined) throw newMethodNotAllowed('PUT', 'a collection');
      const render = renderFor('single');
      const mode = fieldValidationMode(query);
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const raw = await readBody(req);
      const body = parseObjectBody(raw, req.headers['content-type']) as KubeObject;
      decodeWriteBody(def, types, body, request.version, mode, jsonText(raw, req), res);
      const updated = await store.update(namespace, name, body, {
        dryRun: dryRun(query),
        subresource,
        version: request.version,
        inputOwned: true,
        fieldManager,
      });
      sendJsonText(res, 200, objectBody(def, updated, render));
      return;
    }
    case 'PATCH': {
      if (name === undefined) throw newMethodNotAllowed('PATCH', 'a collection');
      const render = renderFor('single');
      const type = patchTypeFromContentType(req.headers['content-type'] ?? '');
      if (!type || (type === 'strategic' && !def.strategicMerge)) {
        const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
        if (def.strategicMerge) accepted.push('application/strategic-merge-patch+json');
        accepted.push('application/apply-patch+yaml');
        throw newUnsupportedMediaType(req.headers['content-type'] ?? '', accepted);
      }
      if (type === 'apply') {
        const applied = await serverSideApply({
          store,
          namespace,
          name,
          subresource,
          version: request.version,
          query,
          body: await readBody(req),
          dryRun: dryRun(query),
        });
        sendJsonText(res, 200, objectBody(def, applied, render));
        return;
      }
      checkForce(query);
      const mode = fieldValidationMode(query);
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const raw = await readBody(req);
      const patch = parseJsonBody(raw);
      const patchErrors = patchTextErrors(type, raw, patch, mode);
      const setsVersion = patchSetsResourceVersion(type, patch);
      const patched = await store.guaranteedUpdate(
        namespace,
        name,
        (current) => {
          const base = { ...current, apiVersion } as StoredObject;
          decodeStoredObject(types, base);
          const next = (
            type === 'json'
              ? applyJsonPatch(base, patch)
              : type === 'merge'
                ? applyMergePatch(base, patch)
                : applyStrategicMergePatch(base, patch, def.strategicMerge!)
          ) as KubeObject;
          if (next === null || typeof next !== 'object' || Array.isArray(next)) {
            throw newBadRequest('the patch must produce a JSON object');
          }
          checkPatchedDecodable(def, next);
          decodePatchedObject(def, types, next, request.version, mode, patchErrors, res);
          if (!setsVersion && next.metadata) delete next.metadata.resourceVersion;
          return next;
        },
        // Patching builds a new object (the current one is copied, never changed): the store may keep it.
        {
          dryRun: dryRun(query),
          subresource,
          version: request.version,
          inputOwned: true,
          fieldManager,
        },
      );
      sendJsonText(res, 200, objectBody(def, patched, render));
      return;
    }
    case 'DELETE': {
      const render = renderFor(name === undefined ? 'list' : 'single');
      const options = deleteOptions(query, await readBody(req), req.headers['content-type']);
      if (name === undefined) {
        const deleted = await store.deleteCollection(namespace, parseListOptions(query, 'list'), options);
        const resourceVersion = deleted.at(-1)?.metadata.resourceVersion ?? '';
        sendJson(res, 200, renderList(def, { items: deleted, resourceVersion }, render));
        return;
      }
      const deleted = await store.delete(namespace, name, options);
      sendJsonText(res, 200, objectBody(def, deleted, render));
      return;
    }
    default:
      throw newMethodNotAllowed(method, `${request.resource}`);
  }
}

/** The body's JSON text, for the checks that need it; none for protobuf bodies. */
function jsonText(raw: Buffer, req: IncomingMessage): { raw?: Buffer } {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === PROTOBUF_MEDIA_TYPE ? {} : { raw };
}

/** A watch of one named object is a watch of the collection selected by metadata.name. */
function withName(options: ListOptions, name: string): ListOptions['fieldSelector'] {
  const existing = options.fieldSelector.requiresExactMatch('metadata.name');
  if (existing !== undefined && existing !== name) {
    throw newBadRequest(
      `field selector "${options.fieldSelector.toString()}" conflicts with the name "${name}"`,
    );
  }
  // Reuse the selector parser so the combined selector behaves like one the client sent.
  const text = [options.fieldSelector.toString(), `metadata.name=${escapeFieldValue(name)}`]
    .filter(Boolean)
    .join(',');
  return parseFieldSelector(text);
}
