/**
 * Certificate validation as cert-manager's webhook does it
 * (internal/apis/certmanager/validation/certificate.go, every feature gate at its default, i.e. on), in
 * the same order and with the same field paths and details. Where we differ it is said at the spot.
 */

import {
  dns1123SubdomainErrors,
  type FieldError,
  formatGoDuration,
  fromMilliseconds,
  parseGoDuration,
  appendErrors,
} from '@certkit/apimachinery';
import { attributeOid, COMMON_NAME_OID, isObjectIdentifier, parseDN } from '../dn.ts';
import { cronParse } from '../cron-parser.ts';
import {
  ANNOTATION_PREFIX,
  Annotations,
  CLEANUP_POLICIES,
  Defaults,
  GROUP,
  KEY_USAGES,
  Limits,
  OUTPUT_FORMAT_TYPES,
  PKCS12_PROFILES,
  PRIVATE_KEY_ENCODINGS,
  ROTATION_POLICIES,
  SIGNATURE_ALGORITHMS,
} from '../constants.ts';
import type {
  Certificate,
  CertificateKeystores,
  CertificateRenewal,
  CertificateSpec,
  IssuerReference,
  NameConstraintItem,
} from '../types.ts';
import { loadLocation } from '../time-zone.ts';
import { duplicate, forbidden, index, invalid, key, notSupported, required, tooLong } from './errors.ts';
import {
  annotationsErrors,
  emailAddressError,
  isCIDR,
  isIPAddress,
  labelsErrors,
  uriError,
} from './formats.ts';

const ALLOWED_SIGNATURE_ALGORITHMS: Record<string, readonly string[]> = {
  RSA: ['SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA'],
  ECDSA: ['ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512'],
  Ed25519: ['PureEd25519'],
};

const isNonEmptyArray = (value: unknown): value is unknown[] => Array.isArray(value) && value.length > 0;

/** Shared by Certificates and CertificateRequests (validateIssuerRef). */
export function validateIssuerRef(ref: IssuerReference | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const refPath = `${path}.issuerRef`;
  if (!ref?.name) errors.push(required(`${refPath}.name`, 'must be specified'));
  const group = ref?.group ?? '';
  const kind = ref?.kind ?? '';
  // Only cert-manager.io's kinds are known; external issuers' groups define their own.
  if ((group === '' || group === GROUP) && kind !== '' && kind !== 'Issuer' && kind !== 'ClusterIssuer') {
    let detail = 'must be one of Issuer or ClusterIssuer';
    // A likely external issuer kind with its group forgotten. Upstream names the path
    // `issuerRef.kind.group` here, which does not exist; we name the field to set.
    if (group === '') detail += ` (did you forget to set ${refPath}.group?)`;
    errors.push(invalid(`${refPath}.kind`, kind, detail));
  }
  return errors;
}

/** The literalSubject block: exclusivity, RFC 4514 syntax, known keys; answers the CN it carries. */
function validateLiteralSubject(
  spec: CertificateSpec,
  path: string,
): { errors: FieldError[]; commonName: string } {
  const errors: FieldError[] = [];
  const literal = spec.literalSubject ?? '';
  let commonName = spec.commonName ?? '';
  if (commonName !== '') {
    errors.push(
      invalid(
        `${path}.commonName`,
        commonName,
        'When providing a `LiteralSubject` no `commonName` may be provided.',
      ),
    );
  }
  const subject = spec.subject;
  if (subject && Object.values(subject).some((v) => (Array.isArray(v) ? v.length > 0 : Boolean(v)))) {
    errors.push(
      invalid(
        `${path}.subject`,
        subject,
        'When providing a `LiteralSubject` no `Subject` properties may be provided.',
      ),
    );
  }
  let rdns: ReturnType<typeof parseDN> = [];
  try {
    rdns = parseDN(literal);
  } catch (err) {
    errors.push(invalid(`${path}.literalSubject`, literal, (err as Error).message));
  }
  for (const rdn of rdns) {
    for (const attribute of rdn) {
      const oid = attributeOid(attribute.type);
      if (oid === COMMON_NAME_OID) commonName = attribute.value;
      if (oid === undefined) {
        errors.push(
          invalid(
            `${path}.literalSubject`,
            literal,
            `Literal subject contains unrecognized key with value [${attribute.value}]`,
          ),
        );
      }
    }
  }
  return { errors, commonName };
}

function validateOtherNames(spec: CertificateSpec, path: string): FieldError[] {
  const errors: FieldError[] = [];
  (spec.otherNames ?? []).forEach((otherName, i) => {
    const itemPath = index(`${path}.otherNames`, i);
    const oid = otherName?.oid ?? '';
    if (oid === '') errors.push(required(`${itemPath}.oid`, 'must be specified'));
    if (!isObjectIdentifier(oid)) errors.push(invalid(`${itemPath}.oid`, oid, 'invalid oid syntax'));
    if (!otherName?.utf8Value || !otherName.utf8Value.isWellFormed()) {
      errors.push(required(`${itemPath}.utf8Value`, 'must be set to a valid non-empty UTF8 string'));
    }
  });
  return errors;
}

function validatePrivateKey(spec: CertificateSpec, path: string): FieldError[] {
  const key = spec.privateKey;
  if (!key) return [];
  const errors: FieldError[] = [];
  // Upstream only checks positive sizes and lets a negative one through to mean the default; we refuse it,
  // with the message the algorithm's valid sizes give, since no key of that size can exist.
  const size = key.size ?? 0;
  switch (key.algorithm ?? '') {
    case '':
    case 'RSA':
      if (size !== 0 && (size < Limits.minRSAKeySize || size > Limits.maxRSAKeySize)) {
        errors.push(
          invalid(
            `${path}.privateKey.size`,
            size,
            `must be between ${Limits.minRSAKeySize} and ${Limits.maxRSAKeySize} for rsa keyAlgorithm`,
          ),
        );
      }
      break;
    case 'ECDSA':
      if (size !== 0 && !(Limits.ecdsaKeySizes as readonly number[]).includes(size)) {
        errors.push(notSupported(`${path}.privateKey.size`, size, Limits.ecdsaKeySizes));
      }
      break;
    case 'Ed25519':
      // Ed25519 keys have one size and upstream ignores the field; a negative one is still nonsense.
      if (size < 0) errors.push(invalid(`${path}.privateKey.size`, size, 'must not be negative'));
      break;
    default:
      errors.push(
        invalid(
          `${path}.privateKey.algorithm`,
          key.algorithm,
          'must be either empty or one of rsa, ecdsa or ed25519',
        ),
      );
  }
  // Upstream leaves these enums to the CRD schema; checking them here keeps objects that reach us some other
  // way (a kube-apiserver with older CRDs, a unit test) honest too.
  if (key.encoding && !(PRIVATE_KEY_ENCODINGS as readonly string[]).includes(key.encoding)) {
    errors.push(notSupported(`${path}.privateKey.encoding`, key.encoding, PRIVATE_KEY_ENCODINGS));
  }
  if (key.rotationPolicy && !(ROTATION_POLICIES as readonly string[]).includes(key.rotationPolicy)) {
    errors.push(notSupported(`${path}.privateKey.rotationPolicy`, key.rotationPolicy, ROTATION_POLICIES));
  }
  return errors;
}

function validateSignatureAlgorithm(spec: CertificateSpec, path: string): FieldError[] {
  const algorithm = spec.signatureAlgorithm;
  if (!algorithm) return [];
  if (!(SIGNATURE_ALGORITHMS as readonly string[]).includes(algorithm)) {
    return [notSupported(`${path}.signatureAlgorithm`, algorithm, SIGNATURE_ALGORITHMS)];
  }
  const keyAlgorithm = spec.privateKey?.algorithm || Defaults.privateKeyAlgorithm;
  const allowed = ALLOWED_SIGNATURE_ALGORITHMS[keyAlgorithm];
  if (allowed && !allowed.includes(algorithm)) {
    return [
      invalid(
        `${path}.signatureAlgorithm`,
        algorithm,
        `for key algorithm ${keyAlgorithm} the allowed signature algorithms are [${allowed.join(' ')}]`,
      ),
    ];
  }
  return [];
}

/** Marks a duration that did not parse (and was reported): checks that compare it are skipped. */
const UNPARSED = Symbol('unparsed');

/** Parses a metav1.Duration field; a bad one is reported (upstream fails to decode the object at all). */
function parseDurationField(
  value: string | undefined,
  field: string,
  errors: FieldError[],
): bigint | undefined | typeof UNPARSED {
  if (value === undefined) return undefined;
  try {
    return parseGoDuration(value);
  } catch (err) {
    errors.push(invalid(field, value, (err as Error).message));
    return UNPARSED;
  }
}

/**
 * ValidateDuration. Durations print as Go does (`1h0m0s`); our field errors quote them where Go's do not.
 * Upstream only runs this when duration or renewBefore is set, so a lone renewBeforePercentage escapes
 * its range checks; we run it whenever any of the three is set.
 */
function validateDurations(spec: CertificateSpec, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const parsedDuration = parseDurationField(spec.duration, `${path}.duration`, errors);
  const parsedRenewBefore = parseDurationField(spec.renewBefore, `${path}.renewBefore`, errors);
  if (parsedDuration === UNPARSED || parsedRenewBefore === UNPARSED) return errors;
  const percentage = spec.renewBeforePercentage;
  if (spec.duration === undefined && spec.renewBefore === undefined && percentage === undefined)
    return errors;

  const duration = parsedDuration ?? fromMilliseconds(Defaults.durationMs);
  const minDuration = fromMilliseconds(Limits.minDurationMs);
  const minRenewBefore = fromMilliseconds(Limits.minRenewBeforeMs);
  if (duration < minDuration) {
    errors.push(
      invalid(
        `${path}.duration`,
        formatGoDuration(duration),
        `certificate duration must be greater than ${formatGoDuration(minDuration)}`,
      ),
    );
  }
  const exclusive = 'renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set';
  if (parsedRenewBefore !== undefined && percentage !== undefined) {
    errors.push(invalid(`${path}.renewBefore`, formatGoDuration(parsedRenewBefore), exclusive));
    errors.push(invalid(`${path}.renewBeforePercentage`, percentage, exclusive));
  }
  if (parsedRenewBefore !== undefined) {
    const text = formatGoDuration(parsedRenewBefore);
    if (parsedRenewBefore < minRenewBefore) {
      errors.push(
        invalid(
          `${path}.renewBefore`,
          text,
          `certificate renewBefore must be greater than ${formatGoDuration(minRenewBefore)}`,
        ),
      );
    }
    if (parsedRenewBefore >= duration) {
      errors.push(
        invalid(
          `${path}.renewBefore`,
          text,
          `certificate duration ${formatGoDuration(duration)} must be greater than renewBefore ${text}`,
        ),
      );
    }
  }
  if (percentage !== undefined) {
    // As upstream, in floating point: duration × (100 − pct) overflows int64 for long durations.
    const renewBefore = BigInt(Math.trunc((Number(duration) * (100 - percentage)) / 100));
    if (renewBefore < minRenewBefore) {
      errors.push(
        invalid(
          `${path}.renewBeforePercentage`,
          percentage,
          `certificate renewBeforePercentage must result in a renewBefore greater than ${formatGoDuration(minRenewBefore)}`,
        ),
      );
    }
    if (renewBefore >= duration) {
      errors.push(
        invalid(
          `${path}.renewBeforePercentage`,
          percentage,
          'certificate renewBeforePercentage must result in a renewBefore less than duration',
        ),
      );
    }
  }
  return errors;
}

function validateSecretTemplate(spec: CertificateSpec, path: string): FieldError[] {
  const template = spec.secretTemplate;
  if (!template) return [];
  const errors: FieldError[] = [];
  if (template.labels && Object.keys(template.labels).length > 0) {
    appendErrors(errors, labelsErrors(template.labels, `${path}.secretTemplate.labels`));
  }
  const annotations = template.annotations ?? {};
  const annotationsPath = `${path}.secretTemplate.annotations`;
  for (const name of Object.keys(annotations)) {
    // The Secret's cert-manager.io/ annotations describe what was issued; a template must not fake them.
    if (name.startsWith(ANNOTATION_PREFIX) && name !== Annotations.allowDirectInjection) {
      errors.push(invalid(annotationsPath, name, 'cert-manager.io/* annotations are not allowed'));
    }
  }
  if (Object.keys(annotations).length > 0)
    appendErrors(errors, annotationsErrors(annotations, annotationsPath));
  return errors;
}

/** Name constraints are IA5Strings: upstream's CSR encoder fails on anything else, at issuance; we refuse it here. */
const IA5 = /^[\x00-\x7f]*$/;

function validateNameConstraintItem(item: NameConstraintItem | undefined, path: string): FieldError[] {
  const errors = (item?.ipRanges ?? []).flatMap((cidr, i) =>
    isCIDR(cidr) ? [] : [invalid(index(`${path}.ipRanges`, i), cidr, 'invalid CIDR address')],
  );
  for (const field of ['dnsDomains', 'emailAddresses', 'uriDomains'] as const) {
    (item?.[field] ?? []).forEach((name, i) => {
      if (typeof name === 'string' && !IA5.test(name)) {
        errors.push(
          invalid(
            index(`${path}.${field}`, i),
            name,
            `x509: ${JSON.stringify(name)} cannot be encoded as an IA5String`,
          ),
        );
      }
    });
  }
  return errors;
}

function validateNameConstraints(spec: CertificateSpec, path: string): FieldError[] {
  const constraints = spec.nameConstraints;
  if (!constraints) return [];
  const constraintsPath = `${path}.nameConstraints`;
  const errors: FieldError[] = [];
  if (!spec.isCA)
    errors.push(invalid(constraintsPath, constraints, 'isCA should be true when nameConstraints is set'));
  if (!constraints.permitted && !constraints.excluded) {
    errors.push(invalid(constraintsPath, constraints, 'either permitted or excluded must be set'));
  }
  appendErrors(errors, validateNameConstraintItem(constraints.permitted, `${constraintsPath}.permitted`));
  appendErrors(errors, validateNameConstraintItem(constraints.excluded, `${constraintsPath}.excluded`));
  return errors;
}

function validateAdditionalOutputFormats(spec: CertificateSpec, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (spec.additionalOutputFormats ?? []).forEach((format, i) => {
    const type = format?.type;
    if (!(OUTPUT_FORMAT_TYPES as readonly string[]).includes(type)) {
      errors.push(
        notSupported(`${index(`${path}.additionalOutputFormats`, i)}.type`, type, OUTPUT_FORMAT_TYPES),
      );
    }
    if (seen.has(type)) errors.push(duplicate(key(`${path}.additionalOutputFormats`, 'type'), type));
    seen.add(type);
  });
  return errors;
}

function validateKeystore(
  keystore: NonNullable<CertificateKeystores['jks'] | CertificateKeystores['pkcs12']>,
  path: string,
  name: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const hasPassword = keystore.password !== undefined;
  const hasSecretRef = Boolean(keystore.passwordSecretRef?.name);
  if (hasPassword && hasSecretRef) {
    errors.push(
      forbidden(
        path,
        `exactly one of passwordSecretRef and password must be provided for ${name} keystores; cannot set both`,
      ),
    );
  }
  if (!hasPassword && !hasSecretRef) {
    // Upstream's wording, typo included.
    errors.push(
      forbidden(path, `must set exactly one of passwordSecretRef and password must for ${name} keystores`),
    );
  }
  if (hasPassword && keystore.password === '') {
    errors.push(
      forbidden(`${path}.password`, `literal password cannot be empty if set on ${name} keystores`),
    );
  }
  return errors;
}

function validateKeystores(spec: CertificateSpec, path: string): FieldError[] {
  const keystores = spec.keystores;
  if (!keystores) return [];
  const errors: FieldError[] = [];
  if (keystores.jks) appendErrors(errors, validateKeystore(keystores.jks, `${path}.keystores.jks`, 'JKS'));
  if (keystores.pkcs12) {
    const pkcs12Path = `${path}.keystores.pkcs12`;
    appendErrors(errors, validateKeystore(keystores.pkcs12, pkcs12Path, 'PKCS#12'));
    const profile = keystores.pkcs12.profile;
    if (profile && !(PKCS12_PROFILES as readonly string[]).includes(profile)) {
      errors.push(notSupported(`${pkcs12Path}.profile`, profile, PKCS12_PROFILES));
    }
  }
  return errors;
}

function loadsAsLocation(name: string): boolean {
  try {
    loadLocation(name);
    return true;
  } catch {
    return false;
  }
}

function validateRenewal(renewal: CertificateRenewal, path: string): FieldError[] {
  const renewalPath = `${path}.renewal`;
  const errors: FieldError[] = [];
  switch (renewal.policy) {
    case 'RenewBefore':
      break;
    case 'Disabled':
      if (isNonEmptyArray(renewal.windows)) {
        errors.push(
          forbidden(
            `${renewalPath}.windows`,
            'windows cannot be set when `renewal.policy` is set to Disabled',
          ),
        );
      }
      return errors;
    default:
      errors.push(notSupported(`${renewalPath}.policy`, renewal.policy ?? '', ['Disabled', 'RenewBefore']));
  }
  (renewal.windows ?? []).forEach((window, i) => {
    const windowPath = index(`${renewalPath}.windows`, i);
    if (window.windowDuration === undefined) {
      errors.push(
        required(
          `${windowPath}.windowDuration`,
          'windowDuration must be specified and should be greater than 0',
        ),
      );
    } else {
      parseDurationField(window.windowDuration, `${windowPath}.windowDuration`, errors);
    }
    // time.LoadLocation, then util.CronParse with the zone (which reports a bad zone again, as its own error).
    const timezone = window.timezone ?? '';
    if (timezone !== '' && !loadsAsLocation(timezone)) {
      errors.push(
        invalid(
          `${windowPath}.timezone`,
          timezone,
          'invalid value for timezone. timezone must be IANA compliant',
        ),
      );
    }
    const cron = window.cron ?? '';
    try {
      cronParse(cron, timezone);
    } catch (err) {
      errors.push(
        invalid(
          `${windowPath}.cron`,
          cron,
          `invalid cron syntax: ${(err as Error).message}. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow`,
        ),
      );
    }
  });
  return errors;
}

export function validateCertificateSpec(spec: CertificateSpec, path = 'spec'): FieldError[] {
  const errors: FieldError[] = [];
  if (!spec.secretName) errors.push(required(`${path}.secretName`, 'must be specified'));
  else {
    for (const message of dns1123SubdomainErrors(spec.secretName)) {
      errors.push(invalid(`${path}.secretName`, spec.secretName, message));
    }
  }
  appendErrors(errors, validateIssuerRef(spec.issuerRef, path));

  let commonName = spec.commonName ?? '';
  if (spec.literalSubject) {
    const literal = validateLiteralSubject(spec, path);
    appendErrors(errors, literal.errors);
    commonName = literal.commonName;
  }
  if (
    commonName === '' &&
    !isNonEmptyArray(spec.dnsNames) &&
    !isNonEmptyArray(spec.uris) &&
    !isNonEmptyArray(spec.emailAddresses) &&
    !isNonEmptyArray(spec.ipAddresses) &&
    !isNonEmptyArray(spec.otherNames)
  ) {
    errors.push(
      invalid(
        path,
        '',
        'at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
      ),
    );
  }
  // Upstream reports a literalSubject CN that is too long at commonName too.
  if (Buffer.byteLength(commonName) > Limits.maxCommonNameBytes) {
    errors.push(tooLong(`${path}.commonName`, Limits.maxCommonNameBytes));
  }
  (spec.ipAddresses ?? []).forEach((ip, i) => {
    if (!isIPAddress(ip)) errors.push(invalid(index(`${path}.ipAddresses`, i), ip, 'invalid IP address'));
  });
  (spec.emailAddresses ?? []).forEach((email, i) => {
    const problem = emailAddressError(email);
    if (problem) errors.push(invalid(index(`${path}.emailAddresses`, i), email, problem));
  });
  (spec.uris ?? []).forEach((uri, i) => {
    const problem = uriError(uri);
    if (problem) errors.push(invalid(index(`${path}.uris`, i), uri, problem));
  });
  appendErrors(errors, validateOtherNames(spec, path));
  appendErrors(errors, validatePrivateKey(spec, path));
  appendErrors(errors, validateSignatureAlgorithm(spec, path));
  appendErrors(errors, validateDurations(spec, path));
  (spec.usages ?? []).forEach((usage, i) => {
    if (!(KEY_USAGES as readonly string[]).includes(usage)) {
      errors.push(invalid(index(`${path}.usages`, i), usage, 'unknown keyusage'));
    }
  });
  if (spec.revisionHistoryLimit !== undefined && spec.revisionHistoryLimit < 1) {
    errors.push(
      invalid(`${path}.revisionHistoryLimit`, spec.revisionHistoryLimit, 'must not be less than 1'),
    );
  }
  appendErrors(errors, validateSecretTemplate(spec, path));
  appendErrors(errors, validateNameConstraints(spec, path));
  appendErrors(errors, validateAdditionalOutputFormats(spec, path));
  appendErrors(errors, validateKeystores(spec, path));
  if (spec.renewal) appendErrors(errors, validateRenewal(spec.renewal, path));
  // Seed 003: the per-Certificate Secret cleanup policy; unset defers to the controller flag.
  if (
    spec.cleanupPolicy !== undefined &&
    !(CLEANUP_POLICIES as readonly string[]).includes(spec.cleanupPolicy)
  ) {
    errors.push(notSupported(`${path}.cleanupPolicy`, spec.cleanupPolicy, CLEANUP_POLICIES));
  }
  return errors;
}

/**
 * ValidateCertificate / ValidateUpdateCertificate: the same checks on create and update (a Certificate's
 * spec may change; the controller re-issues). `_old` is accepted for symmetry with the other kinds.
 */
export function validateCertificate(cert: Certificate, _old?: Certificate): FieldError[] {
  if (!cert.spec || typeof cert.spec !== 'object') return [required('spec')];
  return validateCertificateSpec(cert.spec);
}
