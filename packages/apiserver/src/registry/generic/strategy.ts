/**
 * The strategy hooks of create and update, as kube-apiserver's rest.BeforeCreate and BeforeUpdate run them:
 * type and name checks, system fields, defaults, the kind's admit and validate, ObjectMeta validation and the
 * server's admission; a namespace must exist and not be terminating.
 */

import {
  type FieldError,
  formatTime,
  type KubeObject,
  newBadRequest,
  newForbidden,
  newInvalid,
  newNotFound,
  type StoredObject,
  appendErrors,
} from '@certkit/apimachinery';
import { dropEmptyMetadataFields, generateName, newUid, specChanged } from '../metadata.ts';
import { apiVersionOf } from '../resource.ts';
import { cloneJson, dns1123LabelErrors, dns1123SubdomainErrors, isObject } from '@certkit/apimachinery';
import { objectMetaTypeError } from '../../decode/go-decode.ts';
import { applySchemaFor, updateManagedFields } from '../../fieldmanager/managed-fields.ts';
import { type NameValidator, validateObjectMeta, validateObjectMetaUpdate } from '../validation.ts';
import type { WriteOptions } from './types.ts';
import type { RequestAdmission } from '../../admission/attributes.ts';
import type { ObjectStore } from './store.ts';
import type { UserInfo } from '../../security/user.ts';

/** Checks and fills an object for create; throws 4xx Status errors. */
export async function prepareCreate(
  store: ObjectStore,
  namespace: string | undefined,
  input: KubeObject,
  version: string,
  inputOwned: boolean,
  applied = false,
  admission?: RequestAdmission,
  user?: UserInfo,
): Promise<StoredObject> {
  const def = store.def;
  checkTypeMeta(store, input, version);
  const obj = (inputOwned ? input : cloneJson(input)) as StoredObject;
  obj.metadata = { ...(obj.metadata ?? {}) };
  let meta = obj.metadata;
  if (def.namespaced) {
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw newBadRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    meta.namespace = namespace ?? meta.namespace;
  } else {
    delete meta.namespace;
  }
  obj.apiVersion = store.apiVersion;
  obj.kind = def.kind;
  // The server's own mutating admission runs first, as a webhook configuration sorted before the others.
  if (user && store.context.mutate) store.context.mutate(def, obj, user);
  const webhooks = admission ? store.context.webhooks : undefined;
  const mutated = webhooks ? mutateOnCreate(store, obj, admission!) : false;
  if (mutated instanceof Promise ? await mutated : mutated) {
    meta = obj.metadata;
    if (def.namespaced && meta.namespace !== (namespace ?? meta.namespace)) {
      throw newBadRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }
  meta.uid = newUid();
  meta.creationTimestamp = formatTime(new Date());
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  // Objects carry managedFields once applied (server-side apply); other creates store none.
  const managedFields = applied ? meta.managedFields : undefined;
  delete meta.managedFields;
  delete meta.selfLink;
  if (def.tracksGeneration) meta.generation = 1;
  else delete meta.generation;
  if (def.custom && def.statusSubresource) delete obj.status;
  def.normalize?.(obj);
  def.defaults?.(obj);
  dropEmptyMetadataFields(obj);
  const errors: FieldError[] = [];
  if (def.admit) appendErrors(errors, def.admit(obj, version));
  // A generated name is validated as one sample of what generateName gives.
  const named =
    meta.name === undefined && meta.generateName
      ? { ...obj, metadata: { ...meta, name: generateName(meta.generateName) } }
      : obj;
  appendErrors(errors, validateObjectMeta(named, def.namespaced, nameValidator(store)));
  if (def.validate) appendErrors(errors, def.validate(obj, undefined, version));
  // Validating admission (cert-manager's webhook) sees only objects the schema and the generic checks
  // passed, as in kube-apiserver, where webhooks run after the strategy's validation: it may then rely on
  // the schema's types.
  if (store.context.admit && errors.length === 0)
    appendErrors(errors, store.context.admit(def, obj, undefined, undefined, user));
  if (errors.length > 0) throw newInvalid(def.group, def.kind, meta.name ?? meta.generateName ?? '', errors);
  def.onCreate?.(obj);
  if (managedFields) meta.managedFields = managedFields;
  if (def.namespaced) {
    const open = checkNamespaceOpen(store, meta.namespace!, meta.name ?? meta.generateName ?? '');
    if (open) await open;
  }
  const validated = webhooks?.validate(def, {
    operation: 'CREATE',
    object: obj,
    oldObject: undefined,
    request: admission!,
  });
  if (validated) await validated;
  return obj;
}

/**
 * The mutating webhooks of a create. They see the object as kube-apiserver's do: defaulted (defaulting is
 * part of decoding there), before the system fields are set. True when they changed it; its type is then
 * put back, and the system fields are set after it as for any create.
 */
function mutateOnCreate(
  store: ObjectStore,
  obj: StoredObject,
  admission: RequestAdmission,
): boolean | Promise<boolean> {
  const def = store.def;
  def.normalize?.(obj);
  def.defaults?.(obj);
  const changed = store.context.webhooks!.mutate(def, {
    operation: 'CREATE',
    object: obj,
    oldObject: undefined,
    request: admission,
  });
  const restore = (yes: boolean) => {
    if (yes) {
      obj.apiVersion = store.apiVersion;
      obj.kind = def.kind;
      obj.metadata = { ...(isObject(obj.metadata) ? obj.metadata : {}) };
    }
    return yes;
  };
  return changed instanceof Promise ? changed.then(restore) : restore(changed);
}

export function nameValidator(store: ObjectStore): NameValidator {
  if (store.def.validName) return store.def.validName;
  const dns = store.def.resource === 'namespaces' ? dns1123LabelErrors : dns1123SubdomainErrors;
  return (name, prefix) => dns(prefix ? maskTrailingDash(name) : name);
}

/**
 * apimachinery's maskTrailingDash, quirk included: a generateName ending in a dash is checked with its last
 * two characters replaced by one `a` (what matters is that the dash may end a prefix).
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/**
 * The decode kube-apiserver does before anything else: apiVersion, kind and metadata of the wrong JSON type
 * are a 400 with Go's decoding error (handlers' transformDecodeError), never seen by the checks after it.
 */
export function checkDecodable(store: ObjectStore, input: KubeObject, version: string): void {
  if (!isObject(input)) {
    throw newBadRequest(
      `the object provided is unrecognized (must be of type ${store.def.kind}): json: cannot unmarshal ${Array.isArray(input) ? 'array' : typeof input} into Go value of type map[string]interface {}`,
    );
  }
  const err = objectMetaTypeError(input, store.def.custom ? undefined : store.def.kind);
  if (err === undefined) return;
  if (err.startsWith("couldn't get version/kind")) {
    const text = JSON.stringify(input);
    const summary = text.length > 30 ? `${text.slice(0, 30)} ...` : text;
    throw newBadRequest(
      `the object provided is unrecognized (must be of type ${store.def.kind}): ${err} (${summary})`,
    );
  }
  throw newBadRequest(
    `${store.def.kind} in version "${version}" cannot be handled as a ${store.def.kind}: ${err}`,
  );
}

export function checkTypeMeta(store: ObjectStore, input: KubeObject, version: string): void {
  checkDecodable(store, input, version);
  // What nearly every request sends: its type at the storage version.
  if (input.apiVersion === store.apiVersion && input.kind === store.def.kind) return;
  const expected = apiVersionOf(store.def, version);
  if (
    input.apiVersion &&
    input.apiVersion !== expected &&
    !store.def.versions.some((v) => apiVersionOf(store.def, v) === input.apiVersion)
  ) {
    throw newBadRequest(
      `the API version in the data (${input.apiVersion}) does not match the expected API version (${expected})`,
    );
  }
  if (input.kind && input.kind !== store.def.kind) {
    throw newBadRequest(
      `the kind in the data (${input.kind}) does not match the expected kind (${store.def.kind})`,
    );
  }
}

/** Synchronous when the namespace is at hand, so that a create need not wait a turn of promises for it. */
export function checkNamespaceOpen(
  store: ObjectStore,
  namespace: string,
  name: string,
): void | Promise<void> {
  const found = store.context.getNamespace?.(namespace);
  if (found instanceof Promise) return found.then((ns) => checkOpen(store, ns, namespace, name));
  if (store.context.getNamespace) checkOpen(store, found, namespace, name);
}

export function checkOpen(
  store: ObjectStore,
  ns: StoredObject | undefined,
  namespace: string,
  name: string,
): void {
  if (!ns) throw newNotFound({ group: '', resource: 'namespaces' }, namespace);
  if (ns.metadata.deletionTimestamp) {
    throw newForbidden(
      `${store.def.resource} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    );
  }
}

/**
 * Turns the object a client sent into the object to store, given the current one: system fields kept, status
 * or spec preserved per subresource, generation bumped on spec changes, then validated. Synchronous unless
 * admission webhooks are to be called (options.admission).
 */
export function prepareUpdate(
  store: ObjectStore,
  current: StoredObject,
  input: KubeObject,
  options: WriteOptions,
  version: string,
  currentValue?: string,
): StoredObject | Promise<StoredObject> {
  const webhooks = options.admission ? store.context.webhooks : undefined;
  if (!webhooks) return prepareUpdateObject(store, current, input, options, version, currentValue);
  return admitUpdate(store, current, input, options, version, currentValue);
}

/**
 * An update through the admission webhooks, in kube-apiserver's order: the mutating webhooks change the
 * object the client sent (defaulted, as decoding defaults it there), with the current one as oldObject; it is
 * then prepared and validated as any update; the validating webhooks see the result.
 */
function admitUpdate(
  store: ObjectStore,
  current: StoredObject,
  input: KubeObject,
  options: WriteOptions,
  version: string,
  currentValue?: string,
): StoredObject | Promise<StoredObject> {
  const def = store.def;
  const webhooks = store.context.webhooks!;
  const request = options.admission!;
  checkTypeMeta(store, input, version);
  const obj = (options.inputOwned ? input : cloneJson(input)) as StoredObject;
  obj.apiVersion = store.apiVersion;
  obj.kind = def.kind;
  obj.metadata = { ...(obj.metadata ?? {}) };
  if (def.namespaced) obj.metadata.namespace ??= current.metadata.namespace;
  def.normalize?.(obj);
  def.defaults?.(obj);
  const finish = (): StoredObject | Promise<StoredObject> => {
    const owned = { ...options, inputOwned: true };
    const next = prepareUpdateObject(store, current, obj, owned, version, currentValue);
    const validated = webhooks.validate(def, {
      operation: 'UPDATE',
      object: next,
      oldObject: current,
      request,
    });
    return validated ? validated.then(() => next) : next;
  };
  const mutated = webhooks.mutate(def, { operation: 'UPDATE', object: obj, oldObject: current, request });
  return mutated instanceof Promise ? mutated.then(finish) : finish();
}

function prepareUpdateObject(
  store: ObjectStore,
  current: StoredObject,
  input: KubeObject,
  options: WriteOptions,
  version: string,
  currentValue?: string,
): StoredObject {
  const def = store.def;
  checkTypeMeta(store, input, version);
  const owned = options.inputOwned === true;
  let obj: StoredObject;
  const statusUpdate =
    options.subresource === 'status' ||
    (options.subresource !== undefined && !!def.statusLikeSubresources?.includes(options.subresource));
  if (statusUpdate) {
    // Current with the client's status. Given its stored value, current was decoded for store update alone
    // and is only compared with from here on: obj may share its members, which nothing below changes
    // (admission re-prunes and re-defaults them, which leaves them as they were stored). Otherwise
    // current is the caller's too, and copied whole.
    obj = currentValue === undefined ? cloneJson(current) : { ...current, metadata: { ...current.metadata } };
    if ('status' in input) obj.status = owned ? input.status : cloneJson(input.status);
    else delete obj.status;
  } else {
    obj = (owned ? input : cloneJson(input)) as StoredObject;
    obj.metadata = { ...(obj.metadata ?? {}) };
    if (def.statusSubresource) {
      if ('status' in current) obj.status = cloneJson(current.status);
      else delete obj.status;
    }
  }
  const meta = obj.metadata;
  const old = current.metadata;
  obj.apiVersion = store.apiVersion;
  obj.kind = def.kind;
  if (def.namespaced && meta.namespace === undefined) meta.namespace = old.namespace;
  if (!meta.uid) meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  if (old.deletionTimestamp) {
    meta.deletionTimestamp = old.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  } else {
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
  }
  const incomingFields = options.applied ? input.metadata?.managedFields : meta.managedFields;
  delete meta.managedFields;
  delete meta.selfLink;
  if (def.tracksGeneration) {
    meta.generation = old.generation ?? 1;
  } else delete meta.generation;
  def.normalize?.(obj);
  def.defaults?.(obj);
  dropEmptyMetadataFields(obj);
  def.resetFields?.(obj, current, options.subresource);
  const errors: FieldError[] = [];
  const admit = statusUpdate && def.admitStatus ? def.admitStatus : def.admit;
  if (admit) appendErrors(errors, admit(obj, version, current));
  if (def.tracksGeneration && specChanged(obj, current, def.statusSubresource))
    meta.generation = (old.generation ?? 1) + 1;
  appendErrors(errors, validateObjectMeta(obj, def.namespaced, nameValidator(store)));
  appendErrors(errors, validateObjectMetaUpdate(obj, current));
  if (def.validate) appendErrors(errors, def.validate(obj, current, version));
  if (options.subresource && def.subresourceAdmit)
    appendErrors(errors, def.subresourceAdmit(obj, current, options.subresource));
  // As on create: admission only sees objects that passed the schema and the generic checks.
  if (store.context.admit && errors.length === 0)
    appendErrors(errors, store.context.admit(def, obj, current, options.subresource, options.user));
  if (errors.length > 0) throw newInvalid(def.group, def.kind, meta.name ?? '', errors);
  if (options.applied && incomingFields) meta.managedFields = incomingFields;
  else if (
    old.managedFields !== undefined &&
    !(Array.isArray(incomingFields) && incomingFields.length === 0)
  ) {
    // Only objects that were applied carry managedFields: the cheap path above stays for the rest.
    const fields = updateManagedFields(current, obj, old.managedFields, {
      manager: options.fieldManager?.() ?? '',
      apiVersion: apiVersionOf(def, version),
      subresource: options.subresource,
      statusSubresource: def.statusSubresource,
      schema: applySchemaFor(def, version),
    });
    if (fields.length > 0) meta.managedFields = fields;
  }
  return obj;
}
