import type { ResourceRef } from '@certkit/runtime';
import { GROUP, Kinds, Resources, VERSION } from '../api/constants.ts';

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
