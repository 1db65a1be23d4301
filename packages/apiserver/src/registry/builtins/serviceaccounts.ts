/** ServiceAccounts (core/v1). */

import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';

export const serviceaccounts = builtin({
  resource: 'serviceaccounts',
  model: 'V1ServiceAccount',
  singular: 'serviceaccount',
  kind: 'ServiceAccount',
  namespaced: true,
  shortNames: ['sa'],
  columns: [nameColumn, { name: 'Secrets', type: 'string', description: 'Number of secrets.' }, ageColumn],
  cells: (obj, now) => [obj.metadata.name, ((obj.secrets as unknown[]) ?? []).length, age(obj, now)],
});
