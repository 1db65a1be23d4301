/**
 * The cert-manager.io/v1 API as plain JSON types (pkg/apis/certmanager/v1/types_*.go, pkg/apis/meta/v1).
 * Objects are never turned into class instances; optional fields are optional exactly where Go marks them
 * `omitempty`. Durations are Go duration strings (`2160h0m0s`), byte fields are base64 strings, times are
 * RFC 3339 strings, as they travel on the wire.
 *
 * The ACME issuer's types, and the acme.cert-manager.io/v1 Order and Challenge, are in acme-types.ts. vault and
 * venafi are not implemented here and are typed loosely so that their objects round-trip unchanged.
 */

import type { KubeList, KubeObject, ObjectMeta } from '@certkit/apimachinery';
import type {
  CLEANUP_POLICIES,
  KEY_USAGES,
  OUTPUT_FORMAT_TYPES,
  PKCS12_PROFILES,
  PRIVATE_KEY_ALGORITHMS,
  PRIVATE_KEY_ENCODINGS,
  RENEWAL_POLICIES,
  ROTATION_POLICIES,
  SIGNATURE_ALGORITHMS,
} from './constants.ts';
import type { ACMEIssuer, ACMEIssuerStatus } from './acme-types.ts';
import type { ConditionStatus, IssuerReference, SecretKeySelector } from './meta-types.ts';

export * from './constants.ts';
export * from './meta-types.ts';
export * from './acme-constants.ts';
export * from './acme-types.ts';

// ---------------------------------------------------------------------------------------------------------
// Certificate

export type KeyUsage = (typeof KEY_USAGES)[number];
export type PrivateKeyAlgorithm = (typeof PRIVATE_KEY_ALGORITHMS)[number];
export type PrivateKeyEncoding = (typeof PRIVATE_KEY_ENCODINGS)[number];
export type PrivateKeyRotationPolicy = (typeof ROTATION_POLICIES)[number];
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];
export type PKCS12Profile = (typeof PKCS12_PROFILES)[number];
export type CertificateOutputFormatType = (typeof OUTPUT_FORMAT_TYPES)[number];
export type CertificateRenewalPolicy = (typeof RENEWAL_POLICIES)[number];
export type CleanupPolicy = (typeof CLEANUP_POLICIES)[number];

export interface X509Subject {
  organizations?: string[];
  countries?: string[];
  organizationalUnits?: string[];
  localities?: string[];
  provinces?: string[];
  streetAddresses?: string[];
  postalCodes?: string[];
  serialNumber?: string;
}

/** A UTF8String otherName SAN, e.g. a UPN (oid 1.3.6.1.4.1.311.20.2.3). */
export interface OtherName {
  oid?: string;
  utf8Value?: string;
}

export interface CertificatePrivateKey {
  rotationPolicy?: PrivateKeyRotationPolicy;
  encoding?: PrivateKeyEncoding;
  algorithm?: PrivateKeyAlgorithm;
  size?: number;
}

export interface CertificateSecretTemplate {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

export interface JKSKeystore {
  create: boolean;
  alias?: string;
  passwordSecretRef?: SecretKeySelector;
  password?: string;
}

export interface PKCS12Keystore {
  create: boolean;
  profile?: PKCS12Profile;
  passwordSecretRef?: SecretKeySelector;
  password?: string;
}

export interface CertificateKeystores {
  jks?: JKSKeystore;
  pkcs12?: PKCS12Keystore;
}

export interface CertificateAdditionalOutputFormat {
  type: CertificateOutputFormatType;
}

export interface NameConstraintItem {
  dnsDomains?: string[];
  /** CIDRs. */
  ipRanges?: string[];
  emailAddresses?: string[];
  uriDomains?: string[];
}

export interface NameConstraints {
  critical?: boolean;
  permitted?: NameConstraintItem;
  excluded?: NameConstraintItem;
}

export interface CertificateRenewalWindow {
  /** IANA time zone; UTC when unset. */
  timezone?: string;
  /** Go duration for which each cron match stays open. */
  windowDuration?: string;
  /** Five-field cron expression (or a descriptor such as `@daily`). */
  cron?: string;
}

export interface CertificateRenewal {
  policy?: CertificateRenewalPolicy;
  windows?: CertificateRenewalWindow[];
}

export interface CertificateSpec {
  subject?: X509Subject;
  literalSubject?: string;
  commonName?: string;
  duration?: string;
  renewBefore?: string;
  renewBeforePercentage?: number;
  renewal?: CertificateRenewal;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  otherNames?: OtherName[];
  emailAddresses?: string[];
  secretName: string;
  secretTemplate?: CertificateSecretTemplate;
  keystores?: CertificateKeystores;
  issuerRef: IssuerReference;
  isCA?: boolean;
  usages?: KeyUsage[];
  privateKey?: CertificatePrivateKey;
  signatureAlgorithm?: SignatureAlgorithm;
  encodeUsagesInRequest?: boolean;
  revisionHistoryLimit?: number;
  additionalOutputFormats?: CertificateAdditionalOutputFormat[];
  nameConstraints?: NameConstraints;
  /**
   * What happens to the Secret when the Certificate is deleted (docs/adr/0011): `OnDelete` gives it an
   * ownerReference to the Certificate, `Never` does not. Unset means the controller's
   * `--default-secret-cleanup-policy`. An extension to cert-manager, which has no such field.
   */
  cleanupPolicy?: CleanupPolicy;
}

export type CertificateConditionType = 'Ready' | 'Issuing';

export interface CertificateCondition {
  type: CertificateConditionType | (string & {});
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface ACMERenewalWindow {
  start: string;
  end: string;
}

export interface CertificateACMEARIStatus {
  suggestedWindow?: ACMERenewalWindow;
  explanationURL?: string;
  lastChecked?: string;
  nextCheck?: string;
  lastError?: string;
}

export interface CertificateStatus {
  conditions?: CertificateCondition[];
  lastFailureTime?: string;
  notBefore?: string;
  notAfter?: string;
  renewalTime?: string;
  revision?: number;
  nextPrivateKeySecretName?: string;
  failedIssuanceAttempts?: number;
  acme?: { ari?: CertificateACMEARIStatus };
}

export interface Certificate extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: CertificateSpec;
  status?: CertificateStatus;
}

export type CertificateList = KubeList<Certificate>;

// ---------------------------------------------------------------------------------------------------------
// CertificateRequest

export interface CertificateRequestSpec {
  duration?: string;
  issuerRef: IssuerReference;
  /** Base64 of a PEM-encoded PKCS#10 CSR. */
  request: string;
  isCA?: boolean;
  usages?: KeyUsage[];
  // Identity of the requester, filled in by the webhook; immutable like the rest of the spec.
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type CertificateRequestConditionType = 'Ready' | 'InvalidRequest' | 'Approved' | 'Denied';

export interface CertificateRequestCondition {
  type: CertificateRequestConditionType | (string & {});
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CertificateRequestStatus {
  conditions?: CertificateRequestCondition[];
  /** Base64 of the PEM certificate chain. */
  certificate?: string;
  /** Base64 of the PEM CA. Deprecated upstream but still set by the in-tree issuers. */
  ca?: string;
  failureTime?: string;
}

export interface CertificateRequest extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: CertificateRequestSpec;
  status?: CertificateRequestStatus;
}

export type CertificateRequestList = KubeList<CertificateRequest>;

// ---------------------------------------------------------------------------------------------------------
// Issuer and ClusterIssuer

export interface SelfSignedIssuer {
  crlDistributionPoints?: string[];
}

export interface CAIssuer {
  /** Secret holding the CA's `tls.crt` and `tls.key`. */
  secretName: string;
  crlDistributionPoints?: string[];
  ocspServers?: string[];
  issuingCertificateURLs?: string[];
}

/** Not implemented here; typed loosely so that objects round-trip. */
export interface VaultIssuer {
  server: string;
  path: string;
  auth: Record<string, unknown>;
  [field: string]: unknown;
}

/** Not implemented here; typed loosely so that objects round-trip. */
export interface VenafiIssuer {
  zone: string;
  [field: string]: unknown;
}

/** Exactly one of the issuer types must be set. */
export interface IssuerSpec {
  acme?: ACMEIssuer;
  ca?: CAIssuer;
  vault?: VaultIssuer;
  selfSigned?: SelfSignedIssuer;
  venafi?: VenafiIssuer;
}

export type IssuerConditionType = 'Ready';

export interface IssuerCondition {
  type: IssuerConditionType | (string & {});
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface IssuerStatus {
  conditions?: IssuerCondition[];
  acme?: ACMEIssuerStatus;
}

export interface Issuer extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: IssuerSpec;
  status?: IssuerStatus;
}

export interface ClusterIssuer extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: IssuerSpec;
  status?: IssuerStatus;
}

/** Either kind of issuer; they share spec and status, and differ in scope. */
export type GenericIssuer = Issuer | ClusterIssuer;

export type IssuerList = KubeList<Issuer>;
export type ClusterIssuerList = KubeList<ClusterIssuer>;
