import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  escapeFieldValue,
  goQuote,
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
  type StoredObject,
} from '@certkit/apimachinery';
import { applyJsonPatch } from '../patch/json-patch.ts';
import { applyMergePatch } from '../patch/merge-patch.ts';
import { applyStrategicMergePatch } from '../patch/strategic-merge-patch.ts';
import { patchTypeFromContentType } from '../patch/patch-type.ts';
import { objectMetaTypeError } from '../registry/go-decode.ts';
import { exceedsMaxDepth, maxDepthMessage } from '../registry/json-depth.ts';
import type { Registry } from '../registry/registry.ts';
import { apiVersionOf, type ResourceDefinition } from '../registry/resource.ts';
import type { WatchCaches } from '../watchcache/caches.ts';
import type { ReadRendering } from '../watchcache/reader.ts';
import { managerFromUserAgent } from '../fieldmanager/managed-fields.ts';
import { serverSideApply } from '../fieldmanager/server-side-apply.ts';
import {
  decodePatchedObject,
  decodeStoredObject,
  decodeWriteBody,
  patchTextErrors,
  writeTypes,
} from './field-validation.ts';
import { negotiate } from './negotiate.ts';
import { parseObjectBody, PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import {
  cachedListEncoding,
  type IncludeObject,
  listMeta,
  objectBody,
  objectListEncoding,
  type RenderOptions,
  storedListEncoding,
} from './render.ts';
import type { KeyValue } from '../storage/types.ts';
import { ListBodyWriter, writeList } from './list-writer.ts';
import type { ResourceRequest } from './request-info.ts';
import { createOptions, deleteOptions, patchOptions, updateOptions } from './request-options.ts';
import { parseJsonBody, readBody, sendJsonText } from './respond.ts';
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

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? 'Metadata';
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object')
    throw newBadRequest(`includeObject: unsupported value "${v}"`);
  return v;
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
  /** How long a list waits for a client that reads nothing before cutting it off (default 1 min). */
  listStallTimeoutMs?: number;
  /** How long a request body may take to arrive before 504 and the connection closed (default 1 min). */
  bodyTimeoutMs?: number;
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
  // The manager of an ordinary write, worked out only for objects that carry managedFields (were applied);
  // an empty fieldManager is unset, as in kube-apiserver's managerOrUserAgent.
  const managerOf = (options: { fieldManager: string }) => () =>
    options.fieldManager || managerFromUserAgent(req.headers['user-agent']);

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
      // Written as encoded, with back-pressure: never the whole list as one string.
      const writer = new ListBodyWriter(res, context.listStallTimeoutMs);
      if ('entries' in result)
        await writeList(writer, cachedListEncoding(def, result, render), [result.entries]);
      else if ('pages' in result) {
        const metadata = { resourceVersion: result.resourceVersion };
        const decode = (kv: KeyValue<Uint8Array>) => store.decodeBytes(kv);
        await writeList(writer, storedListEncoding(def, render, metadata, decode), result.pages);
      } else await writeList(writer, objectListEncoding(def, render, listMeta(result)), [result.items]);
      return;
    }
    case 'POST': {
      if (name !== undefined) throw newMethodNotAllowed();
      if (def.namespaced && namespace === undefined) throw notFoundResource();
      const render = renderFor('single');
      const raw = await readBody(req, res, context.bodyTimeoutMs);
      const options = createOptions(query);
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const body = parseObjectBody(raw, req.headers['content-type']) as KubeObject;
      decodeWriteBody(def, types, body, request.version, options.fieldValidation, jsonText(raw, req), res);
      // The parsed body is this request's alone: the store may keep and change it rather than copy it.
      const created = await store.create(namespace, body, {
        dryRun: options.dryRun,
        version: request.version,
        inputOwned: true,
      });
      sendJsonText(res, 201, objectBody(def, created, render));
      return;
    }
    case 'PUT': {
      if (name === undefined) throw newMethodNotAllowed();
      const render = renderFor('single');
      const raw = await readBody(req, res, context.bodyTimeoutMs);
      const options = updateOptions(query);
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const body = parseObjectBody(raw, req.headers['content-type']) as KubeObject;
      decodeWriteBody(def, types, body, request.version, options.fieldValidation, jsonText(raw, req), res);
      const updated = await store.update(namespace, name, body, {
        dryRun: options.dryRun,
        subresource,
        version: request.version,
        inputOwned: true,
        fieldManager: managerOf(options),
      });
      sendJsonText(res, 200, objectBody(def, updated, render));
      return;
    }
    case 'PATCH': {
      if (name === undefined) throw newMethodNotAllowed();
      const render = renderFor('single');
      const type = patchTypeFromContentType(req.headers['content-type'] ?? '');
      if (!type || (type === 'strategic' && !def.strategicMerge)) {
        const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
        if (def.strategicMerge) accepted.push('application/strategic-merge-patch+json');
        accepted.push('application/apply-patch+yaml');
        throw newUnsupportedMediaType(req.headers['content-type'] ?? '', accepted);
      }
      const raw = await readBody(req, res, context.bodyTimeoutMs);
      const options = patchOptions(query, type === 'apply');
      if (type === 'apply') {
        const applied = await serverSideApply({
          store,
          namespace,
          name,
          subresource,
          version: request.version,
          body: raw,
          dryRun: options.dryRun,
          fieldManager: options.fieldManager,
          force: options.force,
        });
        sendJsonText(res, applied.created ? 201 : 200, objectBody(def, applied.object, render));
        return;
      }
      const loaded = writeTypes(def);
      const types = loaded instanceof Promise ? await loaded : loaded;
      const patch = parseJsonBody(raw);
      const patchErrors = patchTextErrors(type, raw, patch, options.fieldValidation);
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
          decodePatchedObject(def, types, next, request.version, options.fieldValidation, patchErrors, res);
          if (!setsVersion && next.metadata) delete next.metadata.resourceVersion;
          return next;
        },
        // Patching builds a new object (the current one is copied, never changed): the store may keep it.
        {
          dryRun: options.dryRun,
          subresource,
          version: request.version,
          inputOwned: true,
          fieldManager: managerOf(options),
        },
      );
      sendJsonText(res, 200, objectBody(def, patched, render));
      return;
    }
    case 'DELETE': {
      const render = renderFor(name === undefined ? 'list' : 'single');
      const readOptions = async () =>
        deleteOptions(query, await readBody(req, res, context.bodyTimeoutMs), req.headers['content-type']);
      if (name === undefined) {
        // A collection's ListOptions are read (and refused) before its DeleteOptions, as upstream does.
        const listOptions = parseListOptions(query, 'list');
        const deleted = await store.deleteCollection(namespace, listOptions, await readOptions());
        const resourceVersion = deleted.at(-1)?.metadata.resourceVersion ?? '';
        const metadata = listMeta({ items: deleted, resourceVersion });
        const writer = new ListBodyWriter(res, context.listStallTimeoutMs);
        await writeList(writer, objectListEncoding(def, render, metadata), [deleted]);
        return;
      }
      const deleted = await store.delete(namespace, name, await readOptions());
      sendJsonText(res, 200, objectBody(def, deleted, render));
      return;
    }
    default:
      throw newMethodNotAllowed();
  }
}

/**
 * The body's JSON text, for the checks that need it; none for protobuf bodies, nor for YAML ones, whose
 * repeated keys the YAML parser has already refused.
 */
function jsonText(raw: Buffer, req: IncomingMessage): { raw?: Buffer } {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === PROTOBUF_MEDIA_TYPE || type === 'application/yaml' ? {} : { raw };
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
