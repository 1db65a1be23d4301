import type { ResourceRef } from '@certkit/runtime';
import { GROUP, Kinds, Resources, VERSION } from '../api/constants.ts';
import { ACME_GROUP, ACME_VERSION, AcmeKinds, AcmeResources } from '../api/acme-constants.ts';

/** The cert-manager.io/v1 resources as the runtime client addresses them. */
export const certificatesRef: ResourceRef = {
  group: GROUP,
  version: VERSION,
  resource: Resources.certificates,
  kind: Kinds.Certificate,
  namespaced: true,
};

export const certificateRequestsRef: ResourceRef = {
  group: GROUP,
  version: VERSION,
  resource: Resources.certificaterequests,
  kind: Kinds.CertificateRequest,
  namespaced: true,
};

export const issuersRef: ResourceRef = {
  group: GROUP,
  version: VERSION,
  resource: Resources.issuers,
  kind: Kinds.Issuer,
  namespaced: true,
};

export const clusterIssuersRef: ResourceRef = {
  group: GROUP,
  version: VERSION,
  resource: Resources.clusterissuers,
  kind: Kinds.ClusterIssuer,
  namespaced: false,
};

export const ordersRef: ResourceRef = {
  group: ACME_GROUP,
  version: ACME_VERSION,
  resource: AcmeResources.orders,
  kind: AcmeKinds.Order,
  namespaced: true,
};

export const challengesRef: ResourceRef = {
  group: ACME_GROUP,
  version: ACME_VERSION,
  resource: AcmeResources.challenges,
  kind: AcmeKinds.Challenge,
  namespaced: true,
};
