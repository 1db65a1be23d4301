import type { ResourceRef } from './types.ts';

/** The built-in resources the runtime and the certificate controller use, so they need no discovery. */

export const secrets: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  namespaced: true,
};

/** core/v1 ConfigMaps. */
export const configMaps: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};

/** core/v1 Namespaces (cluster-scoped). */
export const namespaces: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};

/** core/v1 Events, which client-go's record.EventRecorder (and so cert-manager) writes. */
export const events: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  namespaced: true,
};

/** coordination.k8s.io/v1 Leases, which leader election holds. */
export const leases: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  namespaced: true,
};

/** apiextensions.k8s.io/v1 CustomResourceDefinitions (cluster-scoped). */
export const customResourceDefinitions: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

/** core/v1 ServiceAccounts, whose `token` subresource is the TokenRequest API. */
export const serviceAccounts: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};
