/**
 * Names, keys and defaults of the cert-manager.io/v1 API, byte-compatible with cert-manager's
 * `pkg/apis/certmanager/v1/{types,const,types_certificaterequest}.go`: other tools (cmctl, trust-manager,
 * dashboards) read these annotations and labels, so they must not drift.
 */

export const GROUP = 'cert-manager.io';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const Kinds = {
  Certificate: 'Certificate',
  CertificateRequest: 'CertificateRequest',
  Issuer: 'Issuer',
  ClusterIssuer: 'ClusterIssuer',
} as const;

/** Plural resource names, as in URLs and RBAC rules. */
export const Resources = {
  certificates: 'certificates',
  certificaterequests: 'certificaterequests',
  issuers: 'issuers',
  clusterissuers: 'clusterissuers',
} as const;

/** Annotation keys cert-manager writes on Secrets and CertificateRequests, or reads from Ingresses. */
export const Annotations = {
  // On CertificateRequests (requestmanager) and issued Secrets.
  certificateName: 'cert-manager.io/certificate-name',
  certificateRevision: 'cert-manager.io/certificate-revision',
  privateKeySecretName: 'cert-manager.io/private-key-secret-name',
  // On issued Secrets: where the certificate came from and what it says (values from the X.509, not the spec).
  issuerName: 'cert-manager.io/issuer-name',
  issuerKind: 'cert-manager.io/issuer-kind',
  issuerGroup: 'cert-manager.io/issuer-group',
  commonName: 'cert-manager.io/common-name',
  altNames: 'cert-manager.io/alt-names',
  ipSANs: 'cert-manager.io/ip-sans',
  uriSANs: 'cert-manager.io/uri-sans',
  emailSANs: 'cert-manager.io/email-sans',
  subjectOrganizations: 'cert-manager.io/subject-organizations',
  subjectOrganizationalUnits: 'cert-manager.io/subject-organizationalunits',
  subjectCountries: 'cert-manager.io/subject-countries',
  subjectProvinces: 'cert-manager.io/subject-provinces',
  subjectLocalities: 'cert-manager.io/subject-localities',
  subjectStreetAddresses: 'cert-manager.io/subject-streetaddresses',
  subjectPostalCodes: 'cert-manager.io/subject-postalcodes',
  subjectSerialNumber: 'cert-manager.io/subject-serialnumber',
  // On Certificates: ask for a locally signed placeholder while the issuer works.
  issueTemporaryCertificate: 'cert-manager.io/issue-temporary-certificate',
  // On Ingresses and Gateways (certificate-shim), never on Secrets.
  issuer: 'cert-manager.io/issuer',
  clusterIssuer: 'cert-manager.io/cluster-issuer',
  duration: 'cert-manager.io/duration',
  renewBefore: 'cert-manager.io/renew-before',
  renewBeforePercentage: 'cert-manager.io/renew-before-percentage',
  usages: 'cert-manager.io/usages',
  revisionHistoryLimit: 'cert-manager.io/revision-history-limit',
  privateKeyAlgorithm: 'cert-manager.io/private-key-algorithm',
  privateKeyEncoding: 'cert-manager.io/private-key-encoding',
  privateKeySize: 'cert-manager.io/private-key-size',
  privateKeyRotationPolicy: 'cert-manager.io/private-key-rotation-policy',
  secretTemplate: 'cert-manager.io/secret-template',
  ignoreTLSListeners: 'cert-manager.io/ignore-tls-listeners',
  // cainjector.
  injectCAFrom: 'cert-manager.io/inject-ca-from',
  injectAPIServerCA: 'cert-manager.io/inject-apiserver-ca',
  injectCAFromSecret: 'cert-manager.io/inject-ca-from-secret',
  /** The one cert-manager.io/ annotation a secretTemplate may carry. */
  allowDirectInjection: 'cert-manager.io/allow-direct-injection',
} as const;

/** Every annotation under this prefix is reserved to cert-manager (secretTemplate may not set them). */
export const ANNOTATION_PREFIX = 'cert-manager.io/';

export const Labels = {
  /** Marks Secrets the controller owns; they are cached in full, other Secrets as metadata (docs/adr/0010). */
  partOfCertManagerController: 'controller.cert-manager.io/fao',
  /** Marks the Secret holding the private key for the next issuance. */
  isNextPrivateKeySecret: 'cert-manager.io/next-private-key',
} as const;

/** Keys of the issued Secret's data. */
export const SecretKeys = {
  tlsCert: 'tls.crt',
  tlsKey: 'tls.key',
  ca: 'ca.crt',
  derKey: 'key.der',
  combinedPEM: 'tls-combined.pem',
  pkcs12Keystore: 'keystore.p12',
  pkcs12Truststore: 'truststore.p12',
  jksKeystore: 'keystore.jks',
  jksTruststore: 'truststore.jks',
  keystorePassword: 'keystorePassword',
} as const;

export const ConditionStatuses = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;

export const CertificateConditionTypes = { Ready: 'Ready', Issuing: 'Issuing' } as const;

export const CertificateRequestConditionTypes = {
  Ready: 'Ready',
  InvalidRequest: 'InvalidRequest',
  Approved: 'Approved',
  Denied: 'Denied',
} as const;

export const IssuerConditionTypes = { Ready: 'Ready' } as const;

/**
 * Reasons on Certificate conditions: the policy checks' reasons (policies/constants.go), which the trigger
 * controller copies onto Issuing=True and readiness onto Ready=False, plus the outcomes of issuance.
 */
export const CertificateReasons = {
  Ready: 'Ready',
  DoesNotExist: 'DoesNotExist',
  MissingData: 'MissingData',
  InvalidKeyPair: 'InvalidKeyPair',
  InvalidCertificate: 'InvalidCertificate',
  InvalidCertificateRequest: 'InvalidCertificateRequest',
  SecretMismatch: 'SecretMismatch',
  IncorrectIssuer: 'IncorrectIssuer',
  IncorrectCertificate: 'IncorrectCertificate',
  RequestChanged: 'RequestChanged',
  Renewing: 'Renewing',
  Expired: 'Expired',
  WindowError: 'WindowError',
  SecretTemplateMismatch: 'SecretTemplateMismatch',
  SecretManagedMetadataMismatch: 'SecretManagedMetadataMismatch',
  AdditionalOutputFormatsMismatch: 'AdditionalOutputFormatsMismatch',
  ManagedFieldsParseError: 'ManagedFieldsParseError',
  SecretOwnerRefMismatch: 'SecretOwnerRefMismatch',
  RenewalDisabled: 'Disabled',
  ManuallyTriggered: 'ManuallyTriggered',
  Issued: 'Issued',
  Failed: 'Failed',
} as const;

export const CertificateRequestReasons = {
  Pending: 'Pending',
  Failed: 'Failed',
  Issued: 'Issued',
  Denied: 'Denied',
} as const;

export const IssuerReasons = {
  /** SelfSigned issuers are always ready. */
  IsReady: 'IsReady',
  KeyPairVerified: 'KeyPairVerified',
  ErrGetKeyPair: 'ErrGetKeyPair',
  ErrInvalidKeyPair: 'ErrInvalidKeyPair',
} as const;

/** The 23 key usages and extended key usages a Certificate or CertificateRequest may ask for (types.go). */
export const KEY_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
] as const;

export const PRIVATE_KEY_ALGORITHMS = ['RSA', 'ECDSA', 'Ed25519'] as const;
export const PRIVATE_KEY_ENCODINGS = ['PKCS1', 'PKCS8'] as const;
export const ROTATION_POLICIES = ['Never', 'Always'] as const;
export const SIGNATURE_ALGORITHMS = [
  'SHA256WithRSA',
  'SHA384WithRSA',
  'SHA512WithRSA',
  'ECDSAWithSHA256',
  'ECDSAWithSHA384',
  'ECDSAWithSHA512',
  'PureEd25519',
] as const;
export const PKCS12_PROFILES = ['LegacyRC2', 'LegacyDES', 'Modern2023', 'Modern2026'] as const;
export const OUTPUT_FORMAT_TYPES = ['DER', 'CombinedPEM'] as const;
export const RENEWAL_POLICIES = ['RenewBefore', 'Disabled'] as const;
/** Per-Certificate Secret cleanup (docs/adr/0011): OnDelete puts an ownerReference on the Secret, Never not. */
export const CLEANUP_POLICIES = ['OnDelete', 'Never'] as const;

export const Defaults = {
  /** DefaultCertificateDuration: 90 days. */
  durationMs: 90 * 24 * 60 * 60 * 1000,
  duration: '2160h0m0s',
  /** Without renewBefore(Percentage), renewal happens when 2/3 of the actual lifetime has passed. */
  renewBeforeFraction: 1 / 3,
  rotationPolicy: 'Always',
  privateKeyAlgorithm: 'RSA',
  privateKeyEncoding: 'PKCS1',
  rsaKeySize: 2048,
  ecdsaKeySize: 256,
  revisionHistoryLimit: 1,
  issuerKind: 'Issuer',
  issuerGroup: GROUP,
  usages: ['digital signature', 'key encipherment'],
  jksAlias: 'certificate',
  pkcs12Profile: 'LegacyRC2',
} as const;

export const Limits = {
  /** MinimumCertificateDuration. */
  minDurationMs: 60 * 60 * 1000,
  /** MinimumRenewBefore. */
  minRenewBeforeMs: 5 * 60 * 1000,
  minRSAKeySize: 2048,
  maxRSAKeySize: 8192,
  ecdsaKeySizes: [256, 384, 521],
  /** Longer common names make CSRs that some parsers reject (RFC 5280 ub-common-name). */
  maxCommonNameBytes: 64,
} as const;
