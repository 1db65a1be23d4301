/** The pkg/apis/meta/v1 types every cert-manager API group shares (references to Secrets and issuers). */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface LocalObjectReference {
  name: string;
}

export interface SecretKeySelector {
  name: string;
  /** Entry in the Secret's data; some fields default it (e.g. `tls.key`). */
  key?: string;
}

/** Reference to an issuer; kind defaults to Issuer and group to cert-manager.io (see defaults.ts). */
export interface IssuerReference {
  name: string;
  kind?: string;
  group?: string;
}
