/** Secrets (core/v1), with the type requirements and size limit kube-apiserver enforces. */

import type { FieldError, KubeObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import { immutableData, MAX_SECRET_BYTES, validateDataMap } from './data-maps.ts';

/** Secret type requirements kube-apiserver enforces (pkg/apis/core/validation ValidateSecret). */
const requiredSecretKeys: Record<string, string[]> = {
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/basic-auth': [],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

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
    if (size > MAX_SECRET_BYTES) {
      errs.push({
        type: 'FieldValueTooLong',
        field: 'data',
        detail: `may not be more than ${MAX_SECRET_BYTES} bytes`,
      });
    }
    const type = String(obj.type ?? 'Opaque');
    const data = (obj.data as Record<string, string>) ?? {};
    for (const key of requiredSecretKeys[type] ?? []) {
      if (!(key in data)) errs.push({ type: 'FieldValueRequired', field: `data[${key}]` });
    }
    if (old && (old.type ?? 'Opaque') !== type) {
      errs.push({ type: 'FieldValueInvalid', field: 'type', value: type, detail: 'field is immutable' });
    }
    errs.push(...immutableData(obj, old, ['data']));
    return errs;
  },
});
