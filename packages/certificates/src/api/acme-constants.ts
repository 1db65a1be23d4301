/**
 * Names, keys and enums of the acme.cert-manager.io/v1 API, byte-compatible with cert-manager's
 * `pkg/apis/acme/v1/{types,const,types_order,types_challenge,types_issuer}.go`: cmctl, dashboards and
 * users' scripts read these, so they must not drift.
 */

export const ACME_GROUP = 'acme.cert-manager.io';
export const ACME_VERSION = 'v1';
export const ACME_API_VERSION = `${ACME_GROUP}/${ACME_VERSION}`;

export const AcmeKinds = { Order: 'Order', Challenge: 'Challenge' } as const;

/** Plural resource names, as in URLs and RBAC rules. */
export const AcmeResources = { orders: 'orders', challenges: 'challenges' } as const;

/**
 * The state of an Order, an authorization or a Challenge. All but `errored` mirror RFC 8555 §7.1.6;
 * `errored` is cert-manager's own catch-all for failures that are not the ACME server's verdict. An
 * absent (empty) state means unknown.
 */
export const ACME_STATES = [
  'valid',
  'ready',
  'pending',
  'processing',
  'invalid',
  'expired',
  'errored',
] as const;

/** States after which nothing more happens to the object (pkg/acme/util.go IsFailureState). */
export const ACME_FAILURE_STATES = ['invalid', 'expired', 'errored'] as const;

/** Failure states and `valid`; `ready` is not final, the Order still has to be finalized (IsFinalState). */
export const ACME_FINAL_STATES = ['valid', ...ACME_FAILURE_STATES] as const;

/** Challenge.spec.type: upper case, unlike the ACME wire names `http-01` and `dns-01`. */
export const ACME_CHALLENGE_TYPES = ['HTTP-01', 'DNS-01'] as const;

/** The challenge types as the ACME server names them in an authorization's `challenges[].type`. */
export const AcmeWireChallengeTypes = { http01: 'http-01', dns01: 'dns-01' } as const;

export const AcmeFinalizers = {
  /** What cert-manager puts on Challenges today (gate UseDomainQualifiedFinalizer is GA). */
  challenge: 'acme.cert-manager.io/finalizer',
  /** The name before it; replaced by the one above when seen. */
  legacy: 'finalizer.acme.cert-manager.io',
} as const;

/** Annotations that travel Certificate → CertificateRequest → Order and override the chosen HTTP-01 solver. */
export const AcmeAnnotations = {
  http01IngressNameOverride: 'acme.cert-manager.io/http01-override-ingress-name',
  http01IngressClassOverride: 'acme.cert-manager.io/http01-override-ingress-class',
  http01IngressClassNameOverride: 'acme.cert-manager.io/http01-override-ingress-ingressclassname',
  http01EditInPlace: 'acme.cert-manager.io/http01-edit-in-place',
  http01ParentRefName: 'acme.cert-manager.io/http01-parentrefname',
  http01ParentRefKind: 'acme.cert-manager.io/http01-parentrefkind',
  http01ParentRefNamespace: 'acme.cert-manager.io/http01-parentrefnamespace',
  http01ParentRefFallback: 'acme.cert-manager.io/http01-parentreffallback',
} as const;

/** Labels on the objects of the in-cluster HTTP-01 solver (Pod, Service, Ingress, HTTPRoute). */
export const AcmeLabels = {
  /** Decimal Adler-32 of the Challenge's dnsName. */
  httpDomain: 'acme.cert-manager.io/http-domain',
  /** Decimal Adler-32 of the Challenge's token. */
  httpToken: 'acme.cert-manager.io/http-token',
  http01Solver: 'acme.cert-manager.io/http01-solver',
} as const;

export const CNAME_STRATEGIES = ['None', 'Follow'] as const;
export const HMAC_KEY_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export const RENEWAL_INFORMATION_SOURCES = ['ARI', 'None'] as const;
export const SOLVER_SERVICE_TYPES = ['ClusterIP', 'NodePort'] as const;
export const RFC2136_PROTOCOLS = ['TCP', 'UDP'] as const;
/** Case-insensitive on input; this is cert-manager's supportedTSIGAlgorithms list, in its order. */
export const RFC2136_TSIG_ALGORITHMS = ['HMACMD5', 'HMACSHA1', 'HMACSHA256', 'HMACSHA512'] as const;
export const AZURE_DNS_ENVIRONMENTS = [
  'AzurePublicCloud',
  'AzureChinaCloud',
  'AzureGermanCloud',
  'AzureUSGovernmentCloud',
] as const;
export const AZURE_ZONE_TYPES = ['AzurePublicZone', 'AzurePrivateZone'] as const;

/** The DNS-01 providers in the order cert-manager's validation counts them. */
export const DNS01_PROVIDERS = [
  'akamai',
  'azureDNS',
  'cloudDNS',
  'cloudflare',
  'route53',
  'acmeDNS',
  'digitalocean',
  'rfc2136',
  'webhook',
] as const;
