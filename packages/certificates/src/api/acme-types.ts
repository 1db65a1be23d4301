/**
 * The ACME part of the cert-manager API as plain JSON types: `IssuerSpec.acme` (pkg/apis/acme/v1/types_issuer.go)
 * and the acme.cert-manager.io/v1 Order and Challenge (types_order.go, types_challenge.go). Optional exactly
 * where Go marks a field `omitempty`; byte fields are base64 strings and durations Go duration strings, as
 * on the wire. Kubernetes core types the solvers embed (affinity, a webhook's free-form config) stay open.
 */

import type { KubeList, KubeObject, ObjectMeta } from '@certkit/apimachinery';
import type {
  ACME_CHALLENGE_TYPES,
  ACME_STATES,
  AZURE_DNS_ENVIRONMENTS,
  AZURE_ZONE_TYPES,
  CNAME_STRATEGIES,
  HMAC_KEY_ALGORITHMS,
  RENEWAL_INFORMATION_SOURCES,
  RFC2136_PROTOCOLS,
  SOLVER_SERVICE_TYPES,
} from './acme-constants.ts';
import type { IssuerReference, LocalObjectReference, SecretKeySelector } from './meta-types.ts';

// ---------------------------------------------------------------------------------------------------------
// The ACME issuer

export type HMACKeyAlgorithm = (typeof HMAC_KEY_ALGORITHMS)[number];
export type ACMERenewalInformationSource = (typeof RENEWAL_INFORMATION_SOURCES)[number];
export type CNAMEStrategy = (typeof CNAME_STRATEGIES)[number];
export type SolverServiceType = (typeof SOLVER_SERVICE_TYPES)[number];

export interface ACMEExternalAccountBinding {
  keyID: string;
  /** Secret key holding the MAC key as unpadded base64url. */
  keySecretRef: SecretKeySelector;
  /** Deprecated and ignored: the algorithm is always HS256. */
  keyAlgorithm?: HMACKeyAlgorithm;
}

/** Which names a solver is for. Every given sub-selector must match; see acme/solvers/select.ts. */
export interface CertificateDNSNameSelector {
  /** Labels the Order (copied from the Certificate) must carry. */
  matchLabels?: Record<string, string>;
  /** Names matched exactly (`*.example.com` for a wildcard). */
  dnsNames?: string[];
  /** Zones the name must be in; the longest matching zone wins. */
  dnsZones?: string[];
}

export interface ObjectMetaTemplate {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface SolverPodSecurityContext {
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string };
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  supplementalGroups?: number[];
  fsGroup?: number;
  sysctls?: { name: string; value: string }[];
  fsGroupChangePolicy?: string;
  seccompProfile?: { type: string; localhostProfile?: string };
}

/** Quantities as Kubernetes writes them: `100m`, `64Mi`, or a plain number. */
export type ResourceList = Record<string, string | number>;

export interface SolverPodSpec {
  nodeSelector?: Record<string, string>;
  /** A core/v1 Affinity, passed through to the solver Pod. */
  affinity?: Record<string, unknown>;
  tolerations?: Toleration[];
  priorityClassName?: string;
  serviceAccountName?: string;
  imagePullSecrets?: LocalObjectReference[];
  securityContext?: SolverPodSecurityContext;
  resources?: { limits?: ResourceList; requests?: ResourceList };
}

export interface SolverPodTemplate {
  metadata?: ObjectMetaTemplate;
  spec?: SolverPodSpec;
}

export interface ACMEChallengeSolverHTTP01Ingress {
  serviceType?: SolverServiceType | (string & {});
  ingressClassName?: string;
  /** The legacy `kubernetes.io/ingress.class` annotation value. */
  class?: string;
  /** Edit this existing Ingress instead of creating one. */
  name?: string;
  podTemplate?: SolverPodTemplate;
  ingressTemplate?: { metadata?: ObjectMetaTemplate };
}

/** A Gateway API ParentReference (gateway.networking.k8s.io/v1). */
export interface GatewayParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export interface ACMEChallengeSolverHTTP01GatewayHTTPRoute {
  serviceType?: SolverServiceType | (string & {});
  labels?: Record<string, string>;
  parentRefs?: GatewayParentReference[];
  podTemplate?: SolverPodTemplate;
}

/** Exactly one of ingress and gatewayHTTPRoute. */
export interface ACMEChallengeSolverHTTP01 {
  ingress?: ACMEChallengeSolverHTTP01Ingress;
  gatewayHTTPRoute?: ACMEChallengeSolverHTTP01GatewayHTTPRoute;
}

export interface ACMEIssuerDNS01ProviderAkamai {
  serviceConsumerDomain: string;
  clientTokenSecretRef: SecretKeySelector;
  clientSecretSecretRef: SecretKeySelector;
  accessTokenSecretRef: SecretKeySelector;
}

export interface ACMEIssuerDNS01ProviderCloudDNS {
  serviceAccountSecretRef?: SecretKeySelector;
  project: string;
  hostedZoneName?: string;
}

export interface ACMEIssuerDNS01ProviderCloudflare {
  email?: string;
  apiKeySecretRef?: SecretKeySelector;
  apiTokenSecretRef?: SecretKeySelector;
}

export interface ACMEIssuerDNS01ProviderRoute53 {
  auth?: { kubernetes: { serviceAccountRef: { name: string; audiences?: string[] } } };
  accessKeyID?: string;
  accessKeyIDSecretRef?: SecretKeySelector;
  secretAccessKeySecretRef?: SecretKeySelector;
  role?: string;
  hostedZoneID?: string;
  region?: string;
}

export interface ACMEIssuerDNS01ProviderAzureDNS {
  clientID?: string;
  clientSecretSecretRef?: SecretKeySelector;
  subscriptionID: string;
  tenantID?: string;
  resourceGroupName: string;
  hostedZoneName?: string;
  environment?: (typeof AZURE_DNS_ENVIRONMENTS)[number];
  managedIdentity?: { clientID?: string; resourceID?: string; tenantID?: string };
  zoneType?: (typeof AZURE_ZONE_TYPES)[number];
}

export interface ACMEIssuerDNS01ProviderDigitalOcean {
  tokenSecretRef: SecretKeySelector;
}

export interface ACMEIssuerDNS01ProviderAcmeDNS {
  host: string;
  accountSecretRef: SecretKeySelector;
}

export interface ACMEIssuerDNS01ProviderRFC2136 {
  /** `host`, `host:port`, `[v6]` or `[v6]:port`; port 53 when absent. */
  nameserver: string;
  tsigSecretSecretRef?: SecretKeySelector;
  tsigKeyName?: string;
  /** HMACMD5 (the default), HMACSHA1, HMACSHA256 or HMACSHA512, any case. */
  tsigAlgorithm?: string;
  protocol?: (typeof RFC2136_PROTOCOLS)[number];
}

export interface ACMEIssuerDNS01ProviderWebhook {
  groupName: string;
  solverName: string;
  /** Free-form configuration handed to the webhook solver. */
  config?: unknown;
}

/** Exactly one provider. */
export interface ACMEChallengeSolverDNS01 {
  cnameStrategy?: CNAMEStrategy;
  /** Servers for the propagation check: `host:port` or `https://` DoH URLs. */
  nameservers?: string[];
  akamai?: ACMEIssuerDNS01ProviderAkamai;
  cloudDNS?: ACMEIssuerDNS01ProviderCloudDNS;
  cloudflare?: ACMEIssuerDNS01ProviderCloudflare;
  route53?: ACMEIssuerDNS01ProviderRoute53;
  azureDNS?: ACMEIssuerDNS01ProviderAzureDNS;
  digitalocean?: ACMEIssuerDNS01ProviderDigitalOcean;
  acmeDNS?: ACMEIssuerDNS01ProviderAcmeDNS;
  rfc2136?: ACMEIssuerDNS01ProviderRFC2136;
  webhook?: ACMEIssuerDNS01ProviderWebhook;
}

/** One way to solve challenges: exactly one of http01 and dns01, for the names its selector picks. */
export interface ACMEChallengeSolver {
  selector?: CertificateDNSNameSelector;
  http01?: ACMEChallengeSolverHTTP01;
  dns01?: ACMEChallengeSolverDNS01;
  /** A Go duration: skip the self-check and wait this long after presenting. */
  waitInsteadOfSelfCheck?: string;
}

export interface ACMEIssuer {
  email?: string;
  /** URL of the ACME server's directory. */
  server: string;
  preferredChain?: string;
  /** Base64 of PEM CAs for the ACME server's TLS; replaces the system roots. */
  caBundle?: string;
  skipTLSVerify?: boolean;
  externalAccountBinding?: ACMEExternalAccountBinding;
  /** The account key; `key` defaults to `tls.key`. */
  privateKeySecretRef: SecretKeySelector;
  solvers?: ACMEChallengeSolver[];
  disableAccountKeyGeneration?: boolean;
  enableDurationFeature?: boolean;
  profile?: string;
  renewalInformationSource?: ACMERenewalInformationSource;
}

export interface ACMEIssuerStatus {
  uri?: string;
  lastRegisteredEmail?: string;
  lastPrivateKeyHash?: string;
}

// ---------------------------------------------------------------------------------------------------------
// Order and Challenge

export type ACMEState = (typeof ACME_STATES)[number];
export type ACMEChallengeType = (typeof ACME_CHALLENGE_TYPES)[number];

export interface OrderSpec {
  /** Base64 of the CertificateRequest's CSR (PEM in practice). Immutable once set. */
  request: string;
  issuerRef: IssuerReference;
  commonName?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  duration?: string;
  profile?: string;
  /** ARI CertID of the certificate this order replaces. */
  replaces?: string;
}

export interface ACMEChallenge {
  url: string;
  token: string;
  /** The ACME wire type, e.g. `http-01`. */
  type: string;
}

export interface ACMEAuthorization {
  url: string;
  /** The name the authorization is for, without `*.`. */
  identifier?: string;
  wildcard?: boolean;
  initialState?: ACMEState;
  challenges?: ACMEChallenge[];
}

export interface OrderStatus {
  url?: string;
  finalizeURL?: string;
  authorizations?: ACMEAuthorization[];
  /** Base64 of the PEM chain. */
  certificate?: string;
  state?: ACMEState;
  reason?: string;
  failureTime?: string;
}

export interface Order extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: OrderSpec;
  status?: OrderStatus;
}

export type OrderList = KubeList<Order>;

export interface ChallengeSpec {
  url: string;
  authorizationURL: string;
  /** The identifier, without `*.` for wildcards. */
  dnsName: string;
  wildcard?: boolean;
  type: ACMEChallengeType;
  token: string;
  /** HTTP-01: the key authorization `token.thumbprint`; DNS-01: the TXT record value. */
  key: string;
  /** A copy of the solver chosen for this name. */
  solver: ACMEChallengeSolver;
  issuerRef: IssuerReference;
}

export interface ChallengeStatus {
  processing?: boolean;
  presented?: boolean;
  presentedAt?: string;
  reason?: string;
  state?: ACMEState;
}

export interface Challenge extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: ChallengeSpec;
  status?: ChallengeStatus;
}

export type ChallengeList = KubeList<Challenge>;
