/**
 * PATCH of one object (or its status): the patch type comes from the Content-Type (patch/patch-type.ts); a
 * JSON, merge or strategic merge patch is applied to the object read from storage inside the store's
 * guaranteedUpdate (retried on conflicts), and the result decoded as the resource's type; an apply patch goes
 * to server-side apply (apply.ts).
 */

import {
  type KubeObject,
  newBadRequest,
  newInvalid,
  newUnsupportedMediaType,
  type StoredObject,
} from '@certkit/apimachinery';
import { applyJsonPatch } from '../../patch/json-patch.ts';
import { applyMergePatch } from '../../patch/merge-patch.ts';
import { patchTypeFromContentType } from '../../patch/patch-type.ts';
import { applyStrategicMergePatch } from '../../patch/strategic-merge-patch.ts';
import { objectMetaTypeError } from '../../decode/go-decode.ts';
import { exceedsMaxDepth, maxDepthMessage } from '../../decode/json-depth.ts';
import type { ResourceDefinition } from '../../registry/resource.ts';
import { decodePatchedObject, decodeStoredObject, patchTextErrors, writeTypes } from '../field-validation.ts';
import { objectBody } from '../render.ts';
import { patchOptions } from '../request-options.ts';
import { parseJsonBody, readBody, sendJsonText } from '../respond.ts';
import { handleApply } from './apply.ts';
import { requestAdmission } from './admission-request.ts';
import { managerOf, renderFor, type VerbRequest } from './verb-request.ts';

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

export async function handlePatch(verb: VerbRequest, name: string): Promise<void> {
  const { def, req, request } = verb;
  const render = renderFor(verb, 'single');
  const type = patchTypeFromContentType(req.headers['content-type'] ?? '');
  if (!type || (type === 'strategic' && !def.strategicMerge)) {
    const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
    if (def.strategicMerge) accepted.push('application/strategic-merge-patch+json');
    accepted.push('application/apply-patch+yaml');
    throw newUnsupportedMediaType(req.headers['content-type'] ?? '', accepted);
  }
  const raw = await readBody(req, verb.res, verb.context.bodyTimeoutMs);
  const options = patchOptions(verb.query, type === 'apply');
  if (type === 'apply') {
    await handleApply(verb, name, raw, options, render);
    return;
  }
  const loaded = writeTypes(def);
  const types = loaded instanceof Promise ? await loaded : loaded;
  const patch = parseJsonBody(raw);
  const patchErrors = patchTextErrors(type, raw, patch, options.fieldValidation);
  const setsVersion = patchSetsResourceVersion(type, patch);
  const patched = await verb.store.guaranteedUpdate(
    verb.namespace,
    name,
    (current) => {
      const base = { ...current, apiVersion: verb.apiVersion } as StoredObject;
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
      decodePatchedObject(def, types, next, request.version, options.fieldValidation, patchErrors, verb.res);
      if (!setsVersion && next.metadata) delete next.metadata.resourceVersion;
      return next;
    },
    // Patching builds a new object (the current one is copied, never changed): the store may keep it.
    {
      dryRun: options.dryRun,
      subresource: verb.subresource,
      version: request.version,
      inputOwned: true,
      fieldManager: managerOf(verb, options),
      admission: requestAdmission(verb, options),
    },
  );
  sendJsonText(verb.res, 200, objectBody(def, patched, render));
}
