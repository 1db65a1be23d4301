/** ConfigMaps (core/v1). */

import { appendErrors, type FieldError, tooLong } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import { immutableData, MAX_SECRET_BYTES, validateDataMap } from './data-maps.ts';

export const configmaps = builtin({
  resource: 'configmaps',
  model: 'V1ConfigMap',
  singular: 'configmap',
  kind: 'ConfigMap',
  namespaced: true,
  shortNames: ['cm'],
  columns: [nameColumn, { name: 'Data', type: 'string', description: 'Number of data keys.' }, ageColumn],
  cells: (obj, now) => [
    obj.metadata.name,
    Object.keys((obj.data as object) ?? {}).length + Object.keys((obj.binaryData as object) ?? {}).length,
    age(obj, now),
  ],
  validate(obj, old) {
    const errs: FieldError[] = [];
    const size =
      validateDataMap(obj.data, 'data', errs, 'string') +
      validateDataMap(obj.binaryData, 'binaryData', errs, 'base64');
    // The whole object's path is '' in kube-apiserver's error (field.NewPath("")).
    if (size > MAX_SECRET_BYTES) errs.push(tooLong('', MAX_SECRET_BYTES));
    const data = (obj.data as object) ?? {};
    for (const key of Object.keys((obj.binaryData as object) ?? {})) {
      if (key in data)
        errs.push({
          type: 'FieldValueInvalid',
          field: 'binaryData',
          value: key,
          detail: 'duplicate of key present in data',
        });
    }
    appendErrors(errs, immutableData(obj, old, ['data', 'binaryData']));
    return errs;
  },
});
