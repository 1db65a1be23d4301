/**
 * The settings of cert-manager's ingress-shim and gateway-shim, with cert-manager's flag names and defaults
 * (its IngressShimOptions and gatewayAPI configuration).
 */
export interface ShimOptions {
  /** --auto-certificate-annotations: Ingress annotations that, set to true, ask for Certificates. */
  autoCertificateAnnotations: readonly string[];
  /** --extra-certificate-annotations: annotations copied from the Ingress or Gateway to its Certificates. */
  extraCertificateAnnotations: readonly string[];
  /** --default-issuer-name/-kind/-group: the issuer when the annotations name none (e.g. tls-acme alone). */
  defaultIssuerName: string;
  defaultIssuerKind: string;
  defaultIssuerGroup: string;
  /** --gateway-api-extra-protocols: listener protocols besides HTTPS and TLS that get Certificates. */
  gatewayAPIExtraProtocols: readonly string[];
}

export const DEFAULT_SHIM_OPTIONS: ShimOptions = {
  autoCertificateAnnotations: ['kubernetes.io/tls-acme'],
  extraCertificateAnnotations: [],
  defaultIssuerName: '',
  defaultIssuerKind: 'Issuer',
  defaultIssuerGroup: 'cert-manager.io',
  gatewayAPIExtraProtocols: [],
};

/** The shims' controller names (cert-manager's), which also name the field managers their writes carry. */
export const SHIM_CONTROLLERS = {
  Ingress: 'ingress-shim',
  Gateway: 'gateway-shim',
  ListenerSet: 'listenerset',
} as const;

export type ShimKind = keyof typeof SHIM_CONTROLLERS;

/** cert-manager's field manager: `cert-manager-<controller>`. */
export function shimFieldManager(kind: ShimKind): string {
  return `cert-manager-${SHIM_CONTROLLERS[kind]}`;
}
