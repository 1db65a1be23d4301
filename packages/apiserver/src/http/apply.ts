import {
  isObject,
  type JsonObject,
  type KubeObject,
  newBadRequest,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { parse as parseYaml } from 'yaml';
import { applyConfiguration, applySchemaFor, type FieldManagerInfo } from '../registry/managed-fields.ts';
import { apiVersionOf } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/store.ts';

/** Server-side apply (PATCH with application/apply-patch+yaml): merge, field ownership, create if missing. */

function parseConfiguration(body: Buffer): JsonObject {
  let config: unknown;
  try {
    config = parseYaml(body.toString('utf8'));
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
  body: Buffer;
  dryRun: boolean;
  /** Validated by patchOptions: never empty for apply. */
  fieldManager: string;
  force: boolean;
}

export interface ApplyResult {
  object: StoredObject;
  /** The object did not exist and the apply created it: kube-apiserver answers 201 then. */
  created: boolean;
}

export async function serverSideApply(request: ApplyRequest): Promise<ApplyResult> {
  const { store, namespace, name, subresource, version, dryRun, force } = request;
  const manager = request.fieldManager;
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
      const object = await store.guaranteedUpdate(
        namespace,
        name,
        (current) => {
          const next = applyConfiguration(current, config, info, force) as KubeObject;
          if (!setsVersion && next.metadata) delete next.metadata.resourceVersion;
          return next;
        },
        options,
      );
      return { object, created: false };
    } catch (err) {
      if ((err as StatusError).status?.reason !== 'NotFound' || subresource !== undefined) throw err;
    }
    // Applying to a missing object creates it, through the normal create path.
    const created = applyConfiguration(undefined, config, info, force) as KubeObject;
    created.metadata = { ...(created.metadata as JsonObject), name };
    try {
      const object = await store.create(namespace, created, { ...options, subresource: undefined });
      return { object, created: true };
    } catch (err) {
      if ((err as StatusError).status?.reason !== 'AlreadyExists' || attempt >= 3) throw err;
    }
  }
}
