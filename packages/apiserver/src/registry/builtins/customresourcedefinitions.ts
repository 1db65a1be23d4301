/** CustomResourceDefinitions (apiextensions.k8s.io/v1); their rules are in crd/. */

import { prepareNewCrd } from '../../crd/lifecycle.ts';
import { validateCustomResourceDefinition } from '../../crd/validation.ts';
import { nameColumn } from '../printing.ts';
import { builtin } from './builtin.ts';

export const customresourcedefinitions = builtin({
  group: 'apiextensions.k8s.io',
  resource: 'customresourcedefinitions',
  model: 'V1CustomResourceDefinition',
  singular: 'customresourcedefinition',
  kind: 'CustomResourceDefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  statusSubresource: true,
  tracksGeneration: true,
  columns: [nameColumn, { name: 'Created At', type: 'date', description: 'When the CRD was created.' }],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp],
  validate: (obj, old) => validateCustomResourceDefinition(obj, old),
  onCreate: prepareNewCrd,
  // kubectl sends merge patches for CRDs (not in its scheme); no strategic merge.
  strategicMerge: undefined,
});
