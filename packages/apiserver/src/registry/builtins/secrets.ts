/** Secrets (core/v1), with the type requirements and size limit kube-apiserver enforces. */

import {
  type FieldError,
  invalid,
  type KubeObject,
  required,
  type StoredObject,
  tooLong,
  appendErrors,
} from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import { immutableData, MAX_SECRET_BYTES, validateDataMap } from './data-maps.ts';

const SERVICE_ACCOUNT_NAME = 'kubernetes.io/service-account.name';

/** Go's kind word for a JSON value, as json.Unmarshal names it in a type error. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

/**
 * A docker config key: required, and JSON that unmarshals into a map (null does). The value is never shown,
 * as kube-apiserver redacts it; a syntax error is worded by JSON.parse, not Go's scanner.
 */
function dockerConfigErrors(data: Record<string, string>, key: string): FieldError[] {
  if (!(key in data)) return [required(`data[${key}]`)];
  const redacted = '<secret contents redacted>';
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data[key] ?? '', 'base64').toString('utf8'));
  } catch (err) {
    return [invalid(`data[${key}]`, redacted, (err as Error).message)];
  }
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return [];
  return [
    invalid(
      `data[${key}]`,
      redacted,
      `json: cannot unmarshal ${jsonKind(value)} into Go value of type map[string]interface {}`,
    ),
  ];
}

/** What each Secret type requires of it, as ValidateSecret (pkg/apis/core/validation) checks. */
function secretTypeErrors(obj: StoredObject, type: string): FieldError[] {
  const data = (obj.data as Record<string, string>) ?? {};
  switch (type) {
    case 'kubernetes.io/service-account-token':
      // The rest (the token, the uid annotation) a controller adds later.
      return obj.metadata.annotations?.[SERVICE_ACCOUNT_NAME]
        ? []
        : [required(`metadata.annotations[${SERVICE_ACCOUNT_NAME}]`)];
    case 'kubernetes.io/dockercfg':
      return dockerConfigErrors(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return dockerConfigErrors(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one of the keys must be there.
      return 'username' in data || 'password' in data
        ? []
        : [required('data[username]'), required('data[password]')];
    case 'kubernetes.io/ssh-auth':
      return data['ssh-privatekey'] ? [] : [required('data[ssh-privatekey]')];
    case 'kubernetes.io/tls':
      return ['tls.crt', 'tls.key'].filter((k) => !(k in data)).map((k) => required(`data[${k}]`));
    default:
      return [];
  }
}

export const secrets = builtin({
  resource: 'secrets',
  model: 'V1Secret',
  singular: 'secret',
  kind: 'Secret',
  namespaced: true,
  selectableFields: ['type'],
  columns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.' },
    { name: 'Data', type: 'string', description: 'The number of keys in the secret.' },
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name,
    obj.type ?? '',
    Object.keys((obj.data as object) ?? {}).length,
    age(obj, now),
  ],
  fieldValues: (obj) => ({ type: String(obj.type ?? '') }),
  normalize(obj: KubeObject) {
    // stringData is write-only: merged into data (base64) and never stored, as kube-apiserver does.
    const stringData = obj.stringData;
    if (stringData && typeof stringData === 'object' && !Array.isArray(stringData)) {
      const data = { ...((obj.data as Record<string, string>) ?? {}) };
      for (const [k, v] of Object.entries(stringData)) {
        if (typeof v === 'string') data[k] = Buffer.from(v).toString('base64');
      }
      obj.data = data;
    }
    delete obj.stringData;
  },
  defaults(obj) {
    if (!obj.type) obj.type = 'Opaque';
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const size = validateDataMap(obj.data, 'data', errs, 'base64');
    if (size > MAX_SECRET_BYTES) errs.push(tooLong('data', MAX_SECRET_BYTES));
    const type = String(obj.type ?? 'Opaque');
    appendErrors(errs, secretTypeErrors(obj, type));
    if (old && (old.type ?? 'Opaque') !== type) {
      errs.push({ type: 'FieldValueInvalid', field: 'type', value: type, detail: 'field is immutable' });
    }
    appendErrors(errs, immutableData(obj, old, ['data']));
    return errs;
  },
});
