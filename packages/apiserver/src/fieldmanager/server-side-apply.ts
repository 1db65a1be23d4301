/**
 * The server-side apply request (PATCH with `application/apply-patch+yaml`): parses the applied
 * configuration, checks it as its type, and creates or merges it through the store with field ownership
 * (managed-fields.ts, which merges with structured-merge.ts).
 */

import {
  isObject,
  type JsonObject,
  type KubeObject,
  newBadRequest,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { loadModel, type ModelType, type TypeNode } from '../decode/kube-models.ts';
import { decodeTyped } from '../decode/go-decode.ts';
import { objectMetaTypeError } from '../decode/go-decode.ts';
import { applyConfiguration, applySchemaFor, type FieldManagerInfo } from './managed-fields.ts';
import { apiVersionOf } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { RequestAdmission } from '../admission/attributes.ts';
import type { UserInfo } from '../security/user.ts';
import { parseYamlRequestBody } from '../decode/yaml-body.ts';
import { InexactNumberError } from '../decode/exact-numbers.ts';

function parseConfiguration(body: Buffer): JsonObject {
  let config: unknown;
  try {
    config = parseYamlRequestBody(body);
  } catch (err) {
    if (err instanceof InexactNumberError) throw err.status;
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

/** structured-merge-diff's name for the kind of value a type expects. */
function expectedKind(node: TypeNode): string {
  switch (node.kind) {
    case 'model':
    case 'map':
      return 'map';
    case 'array':
      return 'list';
    case 'integer':
    case 'number':
      return 'numeric (int or float)';
    case 'boolean':
      return 'boolean';
    default:
      return 'string';
  }
}

/**
 * An apply configuration of a built-in kind is converted to the kind's type before it is merged, as
 * kube-apiserver's field manager does: a field the type lacks, or a value of the wrong type, refuses the apply
 * with structured-merge-diff's message (as a 400: the configuration is the client's).
 */
function checkConfigurationType(
  config: JsonObject,
  model: ModelType,
  store: ObjectStore,
  namespace: string | undefined,
  name: string,
  version: string,
): void {
  const { typeErrorAt, unknown } = decodeTyped(config, model, false);
  const gvk = `${apiVersionOf(store.def, version).replace(/^(?!.*\/)/, '/')}, Kind=${store.def.kind}`;
  const prefix = `failed to create typed patch object (${namespace ?? ''}/${name}; ${gvk})`;
  if (typeErrorAt) {
    const got = Array.isArray(typeErrorAt.value)
      ? 'list'
      : typeof typeErrorAt.value === 'object'
        ? 'map'
        : typeof typeErrorAt.value;
    throw newBadRequest(
      `${prefix}: .${typeErrorAt.path}: expected ${expectedKind(typeErrorAt.expected)}, got ${got}`,
    );
  }
  if (unknown.length > 0) throw newBadRequest(`${prefix}: .${unknown[0]}: field not declared in schema`);
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
  /** The request, for admission webhooks (while some are configured). */
  admission?: RequestAdmission;
  /** Who applies, for the server's own admission. */
  user?: UserInfo;
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
  // A built-in kind's configuration is converted to its type first, as structured-merge-diff does, so its
  // wrong types are reported in SMD's words; any other is decoded as any body is (checkDecodable,
  // registry/generic/strategy.ts), before the merge reads its metadata.
  if (store.def.model) {
    checkConfigurationType(config, await loadModel(store.def.model), store, namespace, name, version);
  }
  const wrongType = objectMetaTypeError(config, store.def.custom ? undefined : store.def.kind);
  if (wrongType) {
    const kind = store.def.kind;
    throw newBadRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${wrongType}`);
  }
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
    admission: request.admission,
    user: request.user,
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
