import type { ServerResponse } from 'node:http';
import { appendErrors, goQuote, type KubeObject, newBadRequest, newInvalid } from '@certkit/apimachinery';
import { loadModel, type ModelType } from '../decode/kube-models.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import { decodeTyped } from '../decode/go-decode.ts';
import { duplicateFields } from './duplicate-fields.ts';
import type { FieldValidation } from './request-options.ts';
import { addWarnings } from './warning-header.ts';

/**
 * Decoding a written object as kube-apiserver's handlers do: built-in kinds are read as their Kubernetes type
 * (a wrongly typed value is a 400 for a create or update, a 422 on `patch` for a patch; fields the type does
 * not have are dropped), and the fields dropped or repeated are handled per `fieldValidation`: Strict refuses
 * them (as the type errors are refused), Warn (the default) names each in a `Warning` header, Ignore drops
 * them silently. Custom resources are typed by their CRD's schema elsewhere (schema/admit.ts); here only
 * their metadata is read as ObjectMeta, for its unknown fields.
 */

const OBJECT_META_MODEL = 'V1ObjectMeta';

/** The types a write to the resource is decoded with, loaded: the kind's own, or ObjectMeta for custom kinds. */
export interface WriteTypes {
  model?: ModelType;
  objectMeta: ModelType;
}

/** Loaded once per resource definition (a CRD's change makes a new one). */
const loadedTypes = new WeakMap<ResourceDefinition, WriteTypes>();

/** The types, at once when loaded before: most writes need no turn of promises for them. */
export function writeTypes(def: ResourceDefinition): WriteTypes | Promise<WriteTypes> {
  return loadedTypes.get(def) ?? loadWriteTypes(def);
}

async function loadWriteTypes(def: ResourceDefinition): Promise<WriteTypes> {
  const [model, objectMeta] = await Promise.all([
    def.model ? loadModel(def.model) : undefined,
    loadModel(OBJECT_META_MODEL),
  ]);
  const types = { model, objectMeta };
  loadedTypes.set(def, types);
  return types;
}

/** What a body says in its own text, for the checks JSON.parse hides (repeated keys). */
export interface BodyText {
  /** The request body as received, when it is JSON. */
  raw?: Buffer;
}

interface Decoded {
  typeError?: string;
  strict: string[];
}

function decode(
  def: ResourceDefinition,
  types: WriteTypes,
  obj: KubeObject,
  version: string,
  mode: FieldValidation,
  /** The strict errors of the body's own text (repeated keys), as messages. */
  textErrors?: () => string[],
): Decoded {
  // Field names quoted as sigs.k8s.io/json's strict errors quote them (Go's %q): a control or format character
  // in a name is escaped, so that the message stays one printable line (in a Status and a Warning header).
  const strict: string[] = [];
  const record = obj as unknown as Record<string, unknown>;
  if (types.model) {
    const { typeError, unknown } = decodeTyped(record, types.model);
    if (typeError !== undefined) return { typeError, strict };
    for (const f of unknown) strict.push(`unknown field ${goQuote(f)}`);
  } else {
    // Custom resources: metadata is ObjectMeta (its type errors are the metadata validation's to report);
    // below the top level, the fields the CRD's schema prunes.
    const meta = record.metadata;
    if (meta !== null && typeof meta === 'object' && !Array.isArray(meta)) {
      const { unknown } = decodeTyped({ metadata: meta }, metadataHolder(types.objectMeta));
      for (const f of unknown) strict.push(`unknown field ${goQuote(f)}`);
    }
    if (def.unknownFields && mode !== 'Ignore') {
      for (const f of def.unknownFields(obj, version)) strict.push(`unknown field ${goQuote(f)}`);
    }
  }
  // appendErrors, not a spread: a body repeating one key 200,000 times has as many errors (a stack overflow).
  if (mode !== 'Ignore' && textErrors) appendErrors(strict, textErrors());
  return { strict };
}

/** A model with ObjectMeta as its `metadata`, so that metadata's fields are reported with their full paths. */
const holders = new WeakMap<ModelType, ModelType>();
function metadataHolder(objectMeta: ModelType): ModelType {
  let holder = holders.get(objectMeta);
  if (!holder) {
    holder = {
      kind: 'model',
      name: 'Object',
      fields: new Map([['metadata', objectMeta]]),
      memberNames: new Map([['metadata', 'metadata']]),
    };
    holders.set(objectMeta, holder);
  }
  return holder;
}

function warn(res: ServerResponse, messages: string[]): void {
  addWarnings(res, messages);
}

/**
 * A create's or an update's body, decoded in place as kube-apiserver's create and update handlers decode it:
 * errors are a 400 `<Kind> in version "<v>" cannot be handled as a <Kind>: …`.
 */
export function decodeWriteBody(
  def: ResourceDefinition,
  types: WriteTypes,
  body: KubeObject,
  version: string,
  mode: FieldValidation,
  text: BodyText,
  res: ServerResponse,
): void {
  const raw = text.raw;
  const { typeError, strict } = decode(
    def,
    types,
    body,
    version,
    mode,
    raw ? () => duplicateFields(raw, body).map((f) => `duplicate field ${goQuote(f)}`) : undefined,
  );
  const cannotHandle = `${def.kind} in version "${version}" cannot be handled as a ${def.kind}`;
  if (typeError !== undefined) throw newBadRequest(`${cannotHandle}: ${typeError}`);
  if (strict.length === 0) return;
  if (mode === 'Strict') throw newBadRequest(`${cannotHandle}: strict decoding error: ${strict.join(', ')}`);
  if (mode === 'Warn') warn(res, strict);
}

const JSON_PATCH_OPERATION_FIELDS = new Set(['op', 'path', 'from', 'value']);

/**
 * The strict errors of a patch document itself, found once per request (none under Ignore): repeated keys,
 * and for a JSON patch the members its operations do not have, worded as kube-apiserver words them
 * (`json patch unknown field "[0].bogus"`).
 */
export function patchTextErrors(type: string, raw: Buffer, patch: unknown, mode: FieldValidation): string[] {
  if (mode === 'Ignore') return [];
  if (type !== 'json') return duplicateFields(raw, patch).map((f) => `duplicate field ${goQuote(f)}`);
  const errors: string[] = [];
  if (Array.isArray(patch)) {
    patch.forEach((op, i) => {
      if (op === null || typeof op !== 'object' || Array.isArray(op)) return;
      for (const key of Object.keys(op)) {
        if (!JSON_PATCH_OPERATION_FIELDS.has(key)) errors.push(`json patch unknown field "[${i}].${key}"`);
      }
    });
  }
  for (const f of duplicateFields(raw, patch)) errors.push(`json patch duplicate field "${f}"`);
  return errors;
}

/**
 * The stored object a patch applies to, read as its type, as kube-apiserver reads objects from storage: fields
 * the type lacks (stored before they were dropped on write) are dropped without a word, so that a patch is
 * judged by the fields it brings.
 */
export function decodeStoredObject(types: WriteTypes, current: KubeObject): void {
  if (types.model) decodeTyped(current as unknown as Record<string, unknown>, types.model);
}

/**
 * The object a patch produced, decoded as kube-apiserver's patch handler decodes it: a type error, and under
 * Strict the unknown or repeated fields, are a 422 on `patch` showing the patched object. The patch's own
 * strict errors (patchTextErrors) are reported with the object's unknown fields.
 */
export function decodePatchedObject(
  def: ResourceDefinition,
  types: WriteTypes,
  patched: KubeObject,
  version: string,
  mode: FieldValidation,
  patchErrors: string[],
  res: ServerResponse,
): void {
  const { typeError, strict } = decode(def, types, patched, version, mode, () => patchErrors);
  const invalidPatch = (detail: string) =>
    newInvalid('', '', '', [
      { type: 'FieldValueInvalid', field: 'patch', value: JSON.stringify(patched), detail },
    ]);
  if (typeError !== undefined) throw invalidPatch(typeError);
  if (strict.length === 0) return;
  if (mode === 'Strict') throw invalidPatch(`strict decoding error: ${strict.join(', ')}`);
  if (mode === 'Warn') warn(res, strict);
}
