/**
 * cert-manager's experimental.cert-manager.io annotations on Kubernetes CertificateSigningRequests
 * (certificates.k8s.io/v1), which carry what a CSR's spec has no field for: the requester sets them, the
 * CertificateSigningRequest signers read them.
 */
export const ExperimentalAnnotations = {
  /** The certificate's lifetime as a Go duration (`1h30m`); takes precedence over spec.expirationSeconds. */
  requestDuration: 'experimental.cert-manager.io/request-duration',
  /** `"true"`: the certificate is a CA (basic constraints CA:TRUE). */
  requestIsCA: 'experimental.cert-manager.io/request-is-ca',
  /** SelfSigned only: the Secret (key `tls.key`) holding the private key of the request, in the issuer's namespace. */
  privateKeySecretName: 'experimental.cert-manager.io/private-key-secret-name',
} as const;

/** The shortest lifetime a CSR may ask for: spec.expirationSeconds' own minimum, 600 s. */
export const CSR_MINIMUM_DURATION_MS = 600_000;
