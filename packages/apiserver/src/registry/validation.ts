import { Buffer } from 'node:buffer';
import {
  type FieldError,
  labelValueErrors,
  qualifiedNameErrors,
  type StoredObject,
} from '@certkit/apimachinery';

/**
 * What the API server validates beyond the name and label checks of @certkit/apimachinery (its validation.ts):
 * data keys, base64, ObjectMeta, with upstream's messages.
 */

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** Keys of Secret and ConfigMap data. */
export function configMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(value)) {
    errs.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  }
  if (value === '.' || value === '..') errs.push("must not be '.' or '..'");
  return errs;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Below this length the expression is as quick as the round trip. */
const ROUND_TRIP_MIN_LENGTH = 64;

/**
 * Standard padded base64, as Go's base64.StdEncoding reads it (Secret data, the OpenAPI `byte` format).
 * Such values are mostly kilobytes of canonical base64 (certificates, keys), which a native decode and
 * encode confirm several times faster than the expression; anything else is left to the expression.
 */
export function isBase64(value: string): boolean {
  return isCanonicalBase64(value) || BASE64.test(value);
}

function isCanonicalBase64(value: string): boolean {
  // Buffer's decoder skips what is not base64 and takes base64url too: only an exact round trip proves the
  // input to be canonical base64, which the expression accepts.
  return (
    value.length >= ROUND_TRIP_MIN_LENGTH &&
    value.length % 4 === 0 &&
    Buffer.from(value, 'base64').toString('base64') === value
  );
}

/** Decoded size of a base64 string, without decoding it. */
export function base64Size(value: string): number {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return (value.length / 4) * 3 - padding;
}

/**
 * A resource's name check (kube's ValidateNameFunc). With `prefix`, the value is a generateName: only what
 * can be the start of a valid name is checked (a trailing dash, say, is fine).
 */
export type NameValidator = (name: string, prefix?: boolean) => string[];

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** ObjectMeta validation as ValidateObjectMeta: name, namespace, labels, annotations, owner references, finalizers. */
export function validateObjectMeta(
  obj: StoredObject,
  namespaced: boolean,
  validName: NameValidator,
): FieldError[] {
  const errs: FieldError[] = [];
  const meta = obj.metadata;
  // Before the name, as ValidateObjectMetaAccessor: a generateName of 300 characters would otherwise pass,
  // since the name made from it keeps only its first 58.
  if (meta.generateName) {
    for (const msg of validName(meta.generateName, true)) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'metadata.generateName',
        value: meta.generateName,
        detail: msg,
      });
    }
  }
  if (!meta.name) {
    errs.push({
      type: 'FieldValueRequired',
      field: 'metadata.name',
      detail: 'name or generateName is required',
    });
  } else {
    for (const msg of validName(meta.name)) {
      errs.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: meta.name, detail: msg });
    }
  }
  if (namespaced && !meta.namespace) {
    errs.push({ type: 'FieldValueRequired', field: 'metadata.namespace' });
  } else if (!namespaced && meta.namespace) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'metadata.namespace',
      detail: 'not allowed on this type',
    });
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const msg of qualifiedNameErrors(key)) {
      errs.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value: key, detail: msg });
    }
    if (typeof value !== 'string') {
      errs.push({ type: 'FieldValueInvalid', field: `metadata.labels`, value, detail: 'must be a string' });
      continue;
    }
    for (const msg of labelValueErrors(value)) {
      errs.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value, detail: msg });
    }
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    for (const msg of qualifiedNameErrors(key.toLowerCase())) {
      errs.push({ type: 'FieldValueInvalid', field: 'metadata.annotations', value: key, detail: msg });
    }
    annotationBytes += key.length + String(value).length;
  }
  if (annotationBytes > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push({
      type: 'FieldValueTooLong',
      field: 'metadata.annotations',
      detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
    });
  }
  // Members are of their Go types by now (checkDecodable, registry/generic/strategy.ts); a null item decodes
  // to Go's zero value.
  (meta.ownerReferences ?? []).forEach((item, i) => {
    const ref = item ?? {};
    const field = `metadata.ownerReferences[${i}]`;
    if (!ref.apiVersion)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${field}.apiVersion`,
        value: ref.apiVersion ?? '',
        detail: 'version must not be empty',
      });
    if (!ref.kind)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${field}.kind`,
        value: ref.kind ?? '',
        detail: 'kind must not be empty',
      });
    if (!ref.name)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${field}.name`,
        value: ref.name ?? '',
        detail: 'name must not be empty',
      });
    if (!ref.uid)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${field}.uid`,
        value: ref.uid ?? '',
        detail: 'uid must not be empty',
      });
  });
  const controllers = (meta.ownerReferences ?? []).filter((r) => r?.controller).length;
  if (controllers > 1) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'metadata.ownerReferences',
      value: meta.ownerReferences,
      detail: 'Only one reference can have Controller set to true',
    });
  }
  (meta.finalizers ?? []).forEach((item, i) => {
    const f = item ?? '';
    for (const msg of qualifiedNameErrors(f)) {
      errs.push({ type: 'FieldValueInvalid', field: `metadata.finalizers[${i}]`, value: f, detail: msg });
    }
  });
  return errs;
}

/** Fields a client may not change once set (ValidateObjectMetaUpdate). */
export function validateObjectMetaUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (field: 'name' | 'namespace' | 'uid' | 'creationTimestamp') => {
    if ((obj.metadata[field] ?? '') !== (old.metadata[field] ?? '')) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `metadata.${field}`,
        value: obj.metadata[field] ?? '',
        detail: 'field is immutable',
      });
    }
  };
  immutable('name');
  immutable('namespace');
  immutable('uid');
  immutable('creationTimestamp');
  if (old.metadata.deletionTimestamp) {
    const existing = new Set(old.metadata.finalizers ?? []);
    const added = (obj.metadata.finalizers ?? []).filter((f) => !existing.has(f));
    if (added.length > 0) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      });
    }
  }
  return errs;
}
