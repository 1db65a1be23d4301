import {
  type KubeObject,
  newBadRequest,
  newInvalid,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { isObject, type JsonObject } from '../registry/json.ts';
import { applyConfiguration, applySchemaFor, type FieldManagerInfo } from '../registry/managed-fields.ts';
import { apiVersionOf } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/store.ts';
import { parseYamlBody } from './yaml-body.ts';

/** Server-side apply (PATCH with application/apply-patch+yaml): merge, field ownership, create if missing. */

/** `force` is apply's alone: kube-apiserver refuses it on other patches (ValidatePatchOptions). */
export function checkForce(query: URLSearchParams): void {
  if (query.has('force')) {
    throw newInvalid('meta.k8s.io', 'PatchOptions', '', [
      { type: 'FieldValueForbidden', field: 'force', detail: 'may not be specified for non-apply patch' },
    ]);
  }
}

function parseConfiguration(body: Buffer): JsonObject {
  let config: unknown;
  try {
    config = parseYamlBody(body.toString('utf8'));
  } catch (err) {
    throw newBadRequest(`error decoding YAML: ${(err as Error).message}`);
  }
  if (!isObject(config)) throw newBadRequest('the apply configuration must be a YAML or JSON object');
  if (typeof config.kind !== 'string' || config.kind === '') {
    throw newBadRequest(`Object 'Kind' is missing in '${JSON.stringify(config)}'`);
  }
  if (typeof config.apiVersion !== 'string' || config.apiVersion === '') {
    throw newBadRequest(`Object 'apiVersion' is missing in '${JSON.stringify(config)}'`);
  }
  return config;
}

export interface ApplyRequest {
  store: ObjectStore;
  namespace: string | undefined;
  name: string;
  subresource: string | undefined;
  version: string;
  query: URLSearchParams;
  body: Buffer;
  dryRun: boolean;
}

export async function serverSideApply(request: ApplyRequest): Promise<StoredObject> {
  const { store, namespace, name, subresource, version, query, dryRun } = request;
  const manager = query.get('fieldManager') ?? '';
  if (manager === '') {
    throw newInvalid('meta.k8s.io', 'PatchOptions', '', [
      { type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' },
    ]);
  }
  const forceText = query.get('force');
  if (forceText !== null && forceText !== 'true' && forceText !== 'false') {
    throw newBadRequest(`invalid value for force: ${JSON.stringify(forceText)}`);
  }
  const force = forceText === 'true';
  const config = parseConfiguration(request.body);
  const meta = isObject(config.metadata) ? { ...config.metadata } : {};
  if (meta.name !== undefined && meta.name !== name) {
    throw newBadRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
    );
  }
  if (store.def.namespaced && meta.namespace && namespace && meta.namespace !== namespace) {
    throw newBadRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  delete meta.managedFields;
  const setsVersion = meta.resourceVersion !== undefined && meta.resourceVersion !== null;
  config.metadata = meta;
  const info: FieldManagerInfo = {
    manager,
    apiVersion: apiVersionOf(store.def, version),
    subresource,
    statusSubresource: store.def.statusSubresource,
    schema: applySchemaFor(store.def, version),
  };
  const options = {
    dryRun,
    subresource,
    version,
    inputOwned: true,
    applied: true,
    fieldManager: () => manager,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.guaranteedUpdate(
        namespace,
        name,
        (current) => {
          const next = applyConfiguration(current, config, info, force) as KubeObject;
          if (!setsVersion && next.metadata) delete next.metadata.resourceVersion;
          return next;
        },
        options,
      );
    } catch (err) {
      if ((err as StatusError).status?.reason !== 'NotFound' || subresource !== undefined) throw err;
    }
    // Applying to a missing object creates it, through the normal create path.
    const created = applyConfiguration(undefined, config, info, force) as KubeObject;
    created.metadata = { ...(created.metadata as JsonObject), name };
    try {
      return await store.create(namespace, created, { ...options, subresource: undefined });
    } catch (err) {
      if ((err as StatusError).status?.reason !== 'AlreadyExists' || attempt >= 3) throw err;
    }
  }
}
