/**
 * The `scale` subresource (`kubectl scale`, HorizontalPodAutoscalers): a kind's replicas read and written as
 * an autoscaling/v1 Scale. GET answers the Scale; PUT and PATCH (JSON, merge or strategic merge patch, applied
 * to the Scale) set spec.replicas of the object, retried on conflicts unless the client named a
 * resourceVersion, as kube-apiserver's scale REST does.
 */

import {
  isObject,
  type KubeObject,
  newBadRequest,
  newInvalid,
  newMethodNotAllowed,
  newUnsupportedMediaType,
  parseListOptions,
  type StoredObject,
} from '@certkit/apimachinery';
import { applyJsonPatch } from '../../patch/json-patch.ts';
import { applyMergePatch } from '../../patch/merge-patch.ts';
import { patchTypeFromContentType } from '../../patch/patch-type.ts';
import { applyStrategicMergePatch } from '../../patch/strategic-merge-patch.ts';
import type { ScaleSubresource } from '../../registry/resource.ts';
import { patchOptions, updateOptions } from '../request-options.ts';
import { parseJsonBody, readBody, sendJson } from '../respond.ts';
import type { VerbRequest } from './verb-request.ts';

interface Scale {
  kind: 'Scale';
  apiVersion: 'autoscaling/v1';
  metadata: Record<string, unknown>;
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

function toScale(scale: ScaleSubresource, obj: StoredObject): Scale {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  const selector = scale.selector(obj);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, ...(namespace ? { namespace } : {}), uid, resourceVersion, creationTimestamp },
    spec: { replicas: scale.specReplicas(obj) },
    status: {
      replicas: scale.statusReplicas(obj),
      ...(selector && selector !== '<none>' ? { selector } : {}),
    },
  };
}

/** The replicas a written Scale asks for; 422 as ValidateScale when they are not a count. */
function replicasOf(verb: VerbRequest, name: string, scale: unknown): number {
  const replicas = isObject(scale) && isObject(scale.spec) ? scale.spec.replicas : undefined;
  if (replicas === undefined || replicas === null) return 0;
  if (!Number.isInteger(replicas) || (replicas as number) < 0) {
    throw newInvalid('autoscaling', 'Scale', name, [
      {
        type: 'FieldValueInvalid',
        field: 'spec.replicas',
        value: replicas,
        detail: 'must be greater than or equal to 0',
      },
    ]);
  }
  return replicas as number;
}

export async function handleScale(verb: VerbRequest, name: string, scale: ScaleSubresource): Promise<void> {
  const method = verb.req.method ?? 'GET';
  if (method === 'GET') {
    const { resourceVersion } = parseListOptions(verb.query, 'get');
    sendJson(verb.res, 200, toScale(scale, await verb.reader.get(verb.namespace, name, resourceVersion)));
    return;
  }
  if (method !== 'PUT' && method !== 'PATCH') throw newMethodNotAllowed();
  const raw = await readBody(verb.req, verb.res, verb.context.bodyTimeoutMs);
  const body = parseJsonBody(raw);
  const type =
    method === 'PATCH' ? patchTypeFromContentType(verb.req.headers['content-type'] ?? '') : undefined;
  if (method === 'PATCH' && (!type || type === 'apply')) {
    throw newUnsupportedMediaType(verb.req.headers['content-type'] ?? '', [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
  }
  const options = method === 'PATCH' ? patchOptions(verb.query, false) : updateOptions(verb.query);
  if (method === 'PUT' && !isObject(body)) throw newBadRequest('the body of a Scale must be a JSON object');
  const updated = await verb.store.guaranteedUpdate(
    verb.namespace,
    name,
    (current) => {
      const before = toScale(scale, current);
      const written =
        type === 'json'
          ? applyJsonPatch(before, body)
          : type === 'merge'
            ? applyMergePatch(before, body)
            : type === 'strategic'
              ? applyStrategicMergePatch(before, body, {})
              : body;
      const next = structuredClone(current) as KubeObject & StoredObject;
      scale.setReplicas(next, replicasOf(verb, name, written));
      // A resourceVersion the client sent is a precondition (409 on a mismatch); otherwise conflicts retry.
      const requested =
        isObject(written) && isObject(written.metadata) ? written.metadata.resourceVersion : undefined;
      if (
        typeof requested === 'string' &&
        requested !== '' &&
        (type === undefined || requested !== before.metadata.resourceVersion)
      ) {
        next.metadata.resourceVersion = requested;
      } else delete next.metadata.resourceVersion;
      return next;
    },
    { dryRun: options.dryRun, version: verb.request.version },
  );
  sendJson(verb.res, 200, toScale(scale, updated));
}
