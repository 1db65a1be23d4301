/**
 * The Certificate schema: every field of cert-manager's CertificateSpec and CertificateStatus
 * (types_certificate.go), plus `spec.cleanupPolicy` (docs/adr/0011). Enums are those controller-gen writes;
 * everything else is checked by validation.ts, as cert-manager's webhook does.
 */

import {
  CLEANUP_POLICIES,
  OUTPUT_FORMAT_TYPES,
  PKCS12_PROFILES,
  PRIVATE_KEY_ALGORITHMS,
  PRIVATE_KEY_ENCODINGS,
  RENEWAL_POLICIES,
  ROTATION_POLICIES,
  SIGNATURE_ALGORITHMS,
} from '../constants.ts';
import {
  boolean,
  conditions,
  dateTime,
  integer,
  issuerRef,
  list,
  object,
  oneOf,
  resource,
  type Schema,
  secretKeySelector,
  string,
  stringList,
  stringMap,
  usages,
} from './builders.ts';

const subject = object(
  'Requested X.509 subject attributes (RFC 5280 §4.1.2.6); the common name is `commonName`. Cannot be set with `literalSubject`.',
  {
    organizations: stringList('Organizations (O).'),
    countries: stringList('Countries (C).'),
    organizationalUnits: stringList('Organizational units (OU).'),
    localities: stringList('Cities (L).'),
    provinces: stringList('States or provinces (ST).'),
    streetAddresses: stringList('Street addresses (STREET).'),
    postalCodes: stringList('Postal codes (POSTALCODE).'),
    serialNumber: string('Serial number (SERIALNUMBER).'),
  },
);

function nameConstraintItem(description: string): Schema {
  return object(description, {
    dnsDomains: stringList('DNS domains.'),
    ipRanges: stringList('IP ranges in CIDR notation.'),
    emailAddresses: stringList('Email addresses.'),
    uriDomains: stringList('URI domains.'),
  });
}

function keystorePasswordFields(format: string): Record<string, Schema> {
  return {
    passwordSecretRef: secretKeySelector(
      `Secret key holding the password that encrypts the ${format} keystore. Exclusive with password.`,
    ),
    password: string(
      `Literal password that encrypts the ${format} keystore. Exclusive with passwordSecretRef.`,
    ),
  };
}

const keystores = object('Additional keystore formats to store in the Secret.', {
  jks: object(
    'Write `keystore.jks` (and `truststore.jks` when a CA is known) to the Secret.',
    {
      create: boolean('Whether to create the JKS keystore.'),
      alias: string('Alias of the key in the keystore. Defaults to `certificate`.'),
      ...keystorePasswordFields('JKS'),
    },
    ['create'],
  ),
  pkcs12: object(
    'Write `keystore.p12` (and `truststore.p12` when a CA is known) to the Secret.',
    {
      create: boolean('Whether to create the PKCS#12 keystore.'),
      profile: oneOf(
        'Encryption and MAC algorithms of the keystore. Defaults to LegacyRC2.',
        PKCS12_PROFILES,
      ),
      ...keystorePasswordFields('PKCS#12'),
    },
    ['create'],
  ),
});

const renewal = object('How the certificate is renewed.', {
  policy: oneOf(
    'RenewBefore honours renewBefore/renewBeforePercentage and the windows; Disabled never renews.',
    RENEWAL_POLICIES,
  ),
  windows: list(
    'Windows in which renewal may happen.',
    object(
      'A renewal window: opens on each cron match and stays open for windowDuration.',
      {
        timezone: string('IANA time zone of the cron expression. Defaults to UTC.', { minLength: 1 }),
        windowDuration: string('How long the window stays open, as a Go duration.', {
          pattern: '^([0-9]+(\\.[0-9]+)?(s|m|h))+$',
        }),
        cron: string('Five-field cron expression at which the window opens.', { minLength: 1 }),
      },
      ['cron', 'windowDuration'],
    ),
  ),
});

const spec = object(
  'Desired state of the Certificate. At least one of commonName (or a literalSubject CN), dnsNames, uris, emailAddresses, ipAddresses or otherNames is required.',
  {
    subject,
    literalSubject: string(
      'Requested subject as an RFC 4514 string, used verbatim and in order (e.g. `CN=foo,DC=corp,DC=example,DC=com`). Cannot be set with subject or commonName.',
    ),
    commonName: string('Requested common name, at most 64 bytes. Cannot be set with literalSubject.'),
    duration: string('Requested lifetime as a Go duration, at least 1h. Defaults to 90 days (2160h).'),
    renewBefore: string(
      'How long before expiry to renew, as a Go duration, at least 5m and less than the lifetime. Defaults to a third of the lifetime. Exclusive with renewBeforePercentage.',
    ),
    renewBeforePercentage: integer(
      'Like renewBefore, as a percentage of the lifetime in (0, 100). Exclusive with renewBefore.',
      'int32',
    ),
    renewal,
    dnsNames: stringList('Requested DNS subject alternative names.'),
    ipAddresses: stringList('Requested IP address subject alternative names.'),
    uris: stringList('Requested URI subject alternative names.'),
    otherNames: list(
      'Requested otherName subject alternative names with UTF8String values, e.g. a UPN.',
      object('An otherName SAN.', {
        oid: string('Object identifier of the otherName, as a dotted string (e.g. 1.3.6.1.4.1.311.20.2.3).'),
        utf8Value: string('The UTF-8 value of the otherName.'),
      }),
    ),
    emailAddresses: stringList('Requested email subject alternative names.'),
    secretName: string(
      "Name of the Secret, in the Certificate's namespace, that receives the private key and certificate.",
    ),
    secretTemplate: object(
      'Labels and annotations copied onto the Secret; they cannot override those cert-manager sets.',
      {
        annotations: stringMap('Annotations to copy onto the Secret (no cert-manager.io/ keys).'),
        labels: stringMap('Labels to copy onto the Secret.'),
      },
    ),
    keystores,
    issuerRef: issuerRef(
      'The issuer that signs the certificate: an Issuer in the same namespace or a ClusterIssuer.',
    ),
    isCA: boolean('Request a CA certificate (basicConstraints CA); adds the `cert sign` usage.'),
    usages: usages(
      'Requested key usages and extended key usages. Defaults to digital signature and key encipherment.',
    ),
    privateKey: object('Private key options.', {
      rotationPolicy: oneOf(
        'Always generates a new key on each issuance; Never reuses the key in the Secret. Defaults to Always.',
        ROTATION_POLICIES,
      ),
      encoding: oneOf(
        'PKCS1 or PKCS8 encoding of tls.key. Defaults to PKCS1 (Ed25519 keys are always PKCS8).',
        PRIVATE_KEY_ENCODINGS,
      ),
      algorithm: oneOf('Key algorithm. Defaults to RSA.', PRIVATE_KEY_ALGORITHMS),
      size: integer(
        'Key size: RSA 2048 (default) to 8192; ECDSA 256 (default), 384 or 521; ignored for Ed25519.',
      ),
    }),
    signatureAlgorithm: oneOf(
      'Signature algorithm; must match the key algorithm (RSA: SHA*WithRSA, ECDSA: ECDSAWithSHA*, Ed25519: PureEd25519).',
      SIGNATURE_ALGORITHMS,
    ),
    encodeUsagesInRequest: boolean('Whether to encode the usages in the CSR. Defaults to true.'),
    revisionHistoryLimit: integer(
      'How many CertificateRequests to keep in history, at least 1. Defaults to 1.',
      'int32',
    ),
    additionalOutputFormats: list(
      'Extra formats of the key and chain to write to the Secret.',
      object(
        'An additional output format.',
        {
          type: oneOf(
            'DER writes `key.der`; CombinedPEM writes `tls-combined.pem` (key then chain).',
            OUTPUT_FORMAT_TYPES,
          ),
        },
        ['type'],
      ),
    ),
    nameConstraints: object('X.509 name constraints (RFC 5280 §4.2.1.10); only for CA certificates.', {
      critical: boolean('Whether the extension is marked critical.'),
      permitted: nameConstraintItem('Names the certificates issued below this CA must fall within.'),
      excluded: nameConstraintItem('Names the certificates issued below this CA must not use.'),
    }),
    cleanupPolicy: oneOf(
      "What happens to the Secret when the Certificate is deleted: OnDelete deletes it (owner reference), Never keeps it. Unset defers to the controller's --default-secret-cleanup-policy.",
      CLEANUP_POLICIES,
    ),
  },
  ['issuerRef', 'secretName'],
);

const status = object('Observed state of the Certificate, set by the controller.', {
  conditions: conditions('Conditions of the Certificate; known types are Ready and Issuing.', true),
  lastFailureTime: dateTime('When the latest issuance failed; unset after a success.'),
  notBefore: dateTime('Start of validity of the certificate in the Secret.'),
  notAfter: dateTime('Expiry of the certificate in the Secret.'),
  renewalTime: dateTime('When the certificate will next be renewed.'),
  revision: integer('Revision of the certificate as issued; the next CertificateRequest carries revision+1.'),
  nextPrivateKeySecretName: string('Secret holding the private key for the next issuance.'),
  failedIssuanceAttempts: integer('Consecutive failed issuances; retries back off 1h·2^(n−1), capped.'),
  acme: object('Information fetched from the ACME server.', {
    ari: object('ACME Renewal Information (RFC 9773).', {
      suggestedWindow: object(
        'The renewal window the ACME server suggests.',
        { start: dateTime('Start of the window.'), end: dateTime('End of the window.') },
        ['end', 'start'],
      ),
      explanationURL: string('A page explaining the suggested window.'),
      lastChecked: dateTime('When renewal information was last fetched.'),
      nextCheck: dateTime('When renewal information will next be fetched.'),
      lastError: string('The last error fetching renewal information.'),
    }),
  }),
});

export const certificateSchema: Schema = resource(
  'A Certificate keeps an up-to-date signed X.509 certificate and its private key in the Secret named by spec.secretName, renewing it before it expires.',
  spec,
  status,
);
