import { isDeepStrictEqual } from 'node:util';
import { formatFieldError, parseGoDuration } from '@certkit/apimachinery';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { defaultIssuerRef } from '../../../api/defaults.ts';
import { Annotations, CertificateReasons as Reasons, SecretKeys } from '../../../api/constants.ts';
import type {
  Certificate,
  CertificateRequest,
  CertificateSpec,
  IssuerReference,
  OtherName,
} from '../../../api/types.ts';
import { validateCertificate } from '../../../api/validation.ts';
import {
  encodeRdnSequence,
  keyTraitsSpecViolations,
  parseLiteralSubject,
  type CertificateNames,
} from '../../../pki/index.ts';
import { parseIpAddress } from '../../../pki/ip.ts';
import { canonicalNameConstraints, type DecodedNameConstraints } from '../../../pki/name-constraints.ts';
// The Secret is read as facts: the cache holds certificate Secrets without their PEM (docs/adr/1140).
import { requestCsr, hasSecretBytes, secretCertificateFacts, secretKeyFacts, valueOf } from '../../parsed.ts';
import type { PolicyInput } from './gather.ts';
import { scheduleRenewal } from './renewal.ts';
import { WeakGenerations } from '../../../weak-generations.ts';

/**
 * The policy checks of cert-manager's internal/controller/certificates/policies (checks.go, policies.go):
 * small named functions over a PolicyInput, each answering a violation (reason and message, as upstream
 * words them) or nothing. The trigger chain decides whether to issue; the readiness chain, which differs only
 * in its last check (expired rather than due for renewal), decides Ready.
 *
 * Chains run in order and stop at the first violation, so later checks may assume what earlier ones
 * established: after SecretDoesNotExist and SecretIsMissingData, the Secret exists and has both keys.
 */

export interface Violation {
  reason: string;
  message: string;
}

export type Policy = (input: PolicyInput) => Violation | undefined;
export type PolicyChain = readonly Policy[];

/** Our reason for a spec the webhook would have refused (no webhook guards the API server here). */
export const INVALID_SPEC_REASON = 'InvalidSpec';

/** policies.WindowError: no renewal time could be found in spec.renewal.windows. */
export const WINDOW_ERROR_REASON = 'WindowError';

export function evaluate(chain: PolicyChain, input: PolicyInput): Violation | undefined {
  for (const policy of chain) {
    const violation = policy(input);
    if (violation) return violation;
  }
  return undefined;
}

const invalidKeyData = (err: Error): Violation => ({
  reason: Reasons.InvalidKeyPair,
  message: `Issuing certificate as Secret contains invalid private key data: ${err.message}`,
});

const invalidCertificate = (err: Error): Violation => ({
  reason: Reasons.InvalidCertificate,
  message: `Issuing certificate as Secret contains an invalid certificate: ${err.message}`,
});

// ---------------------------------------------------------------------------------------------------------
// Comparisons, as pkg/util (EqualUnsorted & co.) and pkg/api/util (issuer refs).

/** Same elements, any order, duplicates counted; absent and empty lists are equal. */
export function equalUnsorted(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = [...(a ?? [])].sort();
  const y = [...(b ?? [])].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function ipKey(text: string): string {
  try {
    const bytes = parseIpAddress(text);
    // net.IP.To16: IPv4 compares in its IPv4-mapped form, so "10.0.0.1" equals "::ffff:10.0.0.1".
    return (
      bytes.length === 4
        ? Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255]), bytes])
        : bytes
    ).toString('hex');
  } catch {
    return `invalid:${text}`;
  }
}

export function equalIPsUnsorted(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  return equalUnsorted((a ?? []).map(ipKey), (b ?? []).map(ipKey));
}

function equalOtherNamesUnsorted(a: readonly OtherName[], b: readonly OtherName[]): boolean {
  const key = (n: OtherName) => JSON.stringify([n.oid ?? '', n.utf8Value ?? '']);
  return equalUnsorted(a.map(key), b.map(key));
}

/** IssuerKindsEqual and IssuerGroupsEqual: empty kind means Issuer, empty group cert-manager.io. */
export function issuerRefsEqual(a: IssuerReference | undefined, b: IssuerReference | undefined): boolean {
  const x = defaultIssuerRef(a ?? { name: '' });
  const y = defaultIssuerRef(b ?? { name: '' });
  return x.name === y.name && x.kind === y.kind && x.group === y.group;
}

/**
 * SecretIssuerAnnotationsMatch: annotations that are present must name the issuer of issuerRef; a Secret with
 * none of them (pre-created by a user) still matches a ref of the default kind and group.
 */
export function secretIssuerAnnotationsMatch(secret: Secret, ref: IssuerReference): boolean {
  const annotations = secret.metadata?.annotations ?? {};
  const name = annotations[Annotations.issuerName];
  const kind = annotations[Annotations.issuerKind];
  const group = annotations[Annotations.issuerGroup];
  if ((name !== undefined || kind !== undefined || group !== undefined) && name !== ref.name) return false;
  return issuerRefsEqual({ name: ref.name, kind, group }, ref);
}

function durationsDiffer(a: string, b: string): boolean {
  try {
    return parseGoDuration(a) !== parseGoDuration(b);
  } catch {
    return a !== b;
  }
}

/**
 * How many objects the answers below are remembered for: the versions of the Certificates and requests a
 * burst of issuances has in flight, not one per managed Certificate (docs/adr/1142).
 */
const ANSWERS_REMEMBERED = 2048;

/**
 * The last answer of requestMatchesSpec per request, with the spec it was for: five controllers ask it
 * about the same request and spec at every event of an issuance, and the answer only changes with one of the
 * objects. One entry per request rather than a map of specs per request (a WeakMap each, about 200 bytes per
 * managed Certificate): a request is compared with the one spec of its Certificate's current version. Kept
 * for the requests asked about lately only (weak-generations.ts): a settled request is asked again at a
 * resync, if ever.
 */
const requestMatches = new WeakGenerations<
  CertificateRequest,
  { spec: CertificateSpec; violations: readonly string[] }
>(ANSWERS_REMEMBERED);

/**
 * RequestMatchesSpec: the Certificate fields a CertificateRequest (its CSR and its spec) no longer matches,
 * as field paths. Throws when the CSR cannot be parsed.
 */
export function requestMatchesSpec(cr: CertificateRequest, spec: CertificateSpec): readonly string[] {
  const known = requestMatches.get(cr);
  if (known?.spec === spec) return known.violations;
  const violations = compareRequestWithSpec(cr, spec);
  requestMatches.set(cr, { spec, violations });
  return violations;
}

function compareRequestWithSpec(cr: CertificateRequest, spec: CertificateSpec): string[] {
  const csr = valueOf(requestCsr(cr));
  const violations: string[] = [];
  if (!equalIPsUnsorted(csr.ipAddresses, spec.ipAddresses)) violations.push('spec.ipAddresses');
  if (!equalUnsorted(csr.uris, spec.uris)) violations.push('spec.uris');
  if (!equalUnsorted(csr.emailAddresses, spec.emailAddresses)) violations.push('spec.emailAddresses');
  if (!equalUnsorted(csr.dnsNames, spec.dnsNames)) violations.push('spec.dnsNames');
  if (spec.otherNames && !equalOtherNamesUnsorted(csr.otherNames, spec.otherNames)) {
    violations.push('spec.otherNames');
  }
  if (!spec.literalSubject) {
    const subject = spec.subject ?? {};
    const name = csr.subject;
    if (csr.commonName !== (spec.commonName ?? '')) violations.push('spec.commonName');
    if (name.serialNumber !== (subject.serialNumber ?? '')) violations.push('spec.subject.serialNumber');
    const lists: [readonly string[], string[] | undefined, string][] = [
      [name.organizations, subject.organizations, 'spec.subject.organizations'],
      [name.countries, subject.countries, 'spec.subject.countries'],
      [name.localities, subject.localities, 'spec.subject.localities'],
      [name.organizationalUnits, subject.organizationalUnits, 'spec.subject.organizationalUnits'],
      // Upstream's spelling of the path, kept so messages match.
      [name.postalCodes, subject.postalCodes, 'spec.subject.postCodes'],
      [name.provinces, subject.provinces, 'spec.subject.provinces'],
      [name.streetAddresses, subject.streetAddresses, 'spec.subject.streetAddresses'],
    ];
    for (const [actual, wanted, path] of lists) if (!equalUnsorted(actual, wanted)) violations.push(path);
  } else if (
    csr.subjectDer !== encodeRdnSequence(parseLiteralSubject(spec.literalSubject)).toString('base64')
  ) {
    violations.push('spec.literalSubject');
  }
  if ((cr.spec.isCA ?? false) !== (spec.isCA ?? false)) violations.push('spec.isCA');
  if (!nameConstraintsMatch(csr.nameConstraints, spec)) violations.push('spec.nameConstraints');
  if (!equalUnsorted(cr.spec.usages, spec.usages)) violations.push('spec.usages');
  if (cr.spec.duration && spec.duration && durationsDiffer(cr.spec.duration, spec.duration)) {
    violations.push('spec.duration');
  }
  if (!issuerRefsEqual(cr.spec.issuerRef, spec.issuerRef)) violations.push('spec.issuerRef');
  return violations;
}

/**
 * Whether the request's Name Constraints are the ones the spec asks for. cert-manager does not compare them
 * (a changed nameConstraints waits for the next renewal); we do, so that a CA always carries the constraints
 * it was asked for, including one issued before certkit encoded them. A spec that cannot be encoded is the
 * validation's to report, not a reason to re-issue.
 */
function nameConstraintsMatch(requested: DecodedNameConstraints | undefined, spec: CertificateSpec): boolean {
  let wanted: DecodedNameConstraints | undefined;
  try {
    wanted = canonicalNameConstraints(spec.nameConstraints);
  } catch {
    return true;
  }
  return isDeepStrictEqual(requested, wanted);
}

/**
 * FuzzyX509AltNamesMatchSpec: the loose comparison of an issued certificate with the spec, used when the
 * request behind it is gone. Names may move between the common name and the DNS names, as CAs do.
 */
export function certificateMatchesSpec(cert: CertificateNames, spec: CertificateSpec): string[] {
  const violations: string[] = [];
  const specCN = spec.commonName ?? '';
  const certCN = cert.subject.commonName;
  const expected = new Set([...(spec.dnsNames ?? []), ...(specCN ? [specCN] : [])]);
  const actual = new Set([...cert.dnsNames, ...(certCN ? [certCN] : [])]);
  const sameSets = expected.size === actual.size && [...expected].every((n) => actual.has(n));
  if (!sameSets) {
    if ((specCN && !actual.has(specCN)) || (certCN && !expected.has(certCN)))
      violations.push('spec.commonName');
    const allIn = (names: readonly string[], set: Set<string>) => names.every((n) => set.has(n));
    if (!allIn(spec.dnsNames ?? [], actual) || !allIn(cert.dnsNames, expected))
      violations.push('spec.dnsNames');
  }
  if (!equalIPsUnsorted(cert.ipAddresses, spec.ipAddresses)) violations.push('spec.ipAddresses');
  if (!equalUnsorted(cert.uris, spec.uris)) violations.push('spec.uris');
  if (!equalUnsorted(cert.emailAddresses, spec.emailAddresses)) violations.push('spec.emailAddresses');
  return violations;
}

/** Go's %v of a []string. */
const list = (items: readonly string[]) => `[${items.join(' ')}]`;

// ---------------------------------------------------------------------------------------------------------
// The checks.

export const SecretDoesNotExist: Policy = ({ secret }) =>
  secret
    ? undefined
    : { reason: Reasons.DoesNotExist, message: 'Issuing certificate as Secret does not exist' };

export const SecretIsMissingData: Policy = ({ secret }) => {
  if (!secret?.data) {
    return {
      reason: Reasons.MissingData,
      message: 'Issuing certificate as Secret does not contain any data',
    };
  }
  if (!hasSecretBytes(secret, SecretKeys.tlsKey)) {
    return {
      reason: Reasons.MissingData,
      message: 'Issuing certificate as Secret does not contain a private key',
    };
  }
  if (!hasSecretBytes(secret, SecretKeys.tlsCert)) {
    return {
      reason: Reasons.MissingData,
      message: 'Issuing certificate as Secret does not contain a certificate',
    };
  }
  return undefined;
};

export const SecretPublicKeysDiffer: Policy = ({ secret }) => {
  const key = secretKeyFacts(secret!);
  if ('error' in key) return invalidKeyData(key.error);
  const cert = secretCertificateFacts(secret!);
  if ('error' in cert) return invalidCertificate(cert.error);
  if (cert.value.publicKeyDigest !== key.value.publicKeyDigest) {
    return {
      reason: Reasons.InvalidKeyPair,
      message: 'Issuing certificate as Secret contains a private key that does not match the certificate',
    };
  }
  return undefined;
};

export const SecretIssuerAnnotationsMismatch: Policy = ({ secret, certificate }) => {
  if (secretIssuerAnnotationsMatch(secret!, certificate.spec.issuerRef)) return undefined;
  const annotations = secret!.metadata?.annotations ?? {};
  const name = annotations[Annotations.issuerName] ?? '';
  const kind = annotations[Annotations.issuerKind] || 'Issuer';
  const group = annotations[Annotations.issuerGroup] || 'cert-manager.io';
  return {
    reason: Reasons.IncorrectIssuer,
    message: `Issuing certificate as Secret was previously issued by "${kind}.${group}/${name}"`,
  };
};

export const SecretCertificateNameAnnotationsMismatch: Policy = ({ secret, certificate }) => {
  const name = secret!.metadata?.annotations?.[Annotations.certificateName];
  if (name === undefined || name === certificate.metadata.name) return undefined;
  return {
    reason: Reasons.IncorrectCertificate,
    message: `Secret was issued for "${name}". If this message is not transient, you might have two conflicting Certificates pointing to the same secret.`,
  };
};

export const SecretPrivateKeyMismatchesSpec: Policy = ({ secret, certificate }) => {
  const key = secretKeyFacts(secret!);
  if ('error' in key) return invalidKeyData(key.error);
  const violations = keyTraitsSpecViolations(key.value, certificate.spec.privateKey ?? {});
  if (!violations.length) return undefined;
  return {
    reason: Reasons.SecretMismatch,
    message: `Existing private key is not up to date for spec: ${list(violations)}`,
  };
};

export const SecretPublicKeyDiffersFromCurrentCertificateRequest: Policy = ({
  secret,
  currentRevisionRequest,
}) => {
  if (!currentRevisionRequest) return undefined;
  const key = secretKeyFacts(secret!);
  if ('error' in key) return invalidKeyData(key.error);
  const csr = requestCsr(currentRevisionRequest);
  if ('error' in csr) {
    return {
      reason: Reasons.InvalidCertificateRequest,
      message: `Failed to decode current CertificateRequest: ${csr.error.message}`,
    };
  }
  if (key.value.publicKeyDigest === csr.value.publicKeyDigest) return undefined;
  return {
    reason: Reasons.SecretMismatch,
    message: 'Secret contains a private key that does not match the current CertificateRequest',
  };
};

export const CurrentCertificateRequestMismatchesSpec: Policy = (input) => {
  const { currentRevisionRequest, certificate, secret } = input;
  if (!currentRevisionRequest) {
    // The request behind the Secret is gone (deleted by hand, or never ours): compare the certificate itself.
    const cert = secretCertificateFacts(secret!);
    if ('error' in cert) return invalidCertificate(cert.error);
    const violations = certificateMatchesSpec(cert.value, certificate.spec);
    if (!violations.length) return undefined;
    return {
      reason: Reasons.SecretMismatch,
      message: `Issuing certificate as Existing issued Secret is not up to date for spec: ${list(violations)}`,
    };
  }
  let violations: readonly string[];
  try {
    violations = requestMatchesSpec(currentRevisionRequest, certificate.spec);
  } catch {
    // An unreadable request does not make the certificate in the Secret wrong.
    return undefined;
  }
  if (!violations.length) return undefined;
  return {
    reason: Reasons.RequestChanged,
    message: `Fields on existing CertificateRequest resource not up to date: ${list(violations)}`,
  };
};

/**
 * Due for renewal. When the renewal windows could not be honoured the violation is WindowError with the
 * reason as message; the trigger turns it into Renewing with a Warning event, as upstream's trigger does.
 */
export const CurrentCertificateNearingExpiry: Policy = ({ secret, certificate, now }) => {
  const cert = secretCertificateFacts(secret!);
  if ('error' in cert) return invalidCertificate(cert.error);
  const due = scheduleRenewal(cert.value.notBefore, cert.value.notAfter, certificate.spec);
  if (!due || due.at.getTime() - now.getTime() > 0) return undefined;
  if (due.windowError !== undefined) return { reason: WINDOW_ERROR_REASON, message: due.windowError };
  return {
    reason: Reasons.Renewing,
    message: `Renewing certificate as renewal was scheduled at ${certificate.status?.renewalTime ?? '<nil>'}`,
  };
};

/**
 * The readiness controller's check after its chain: renewal windows that cannot be honoured for the
 * certificate in the Secret make it not Ready, whatever the chain said. Needs no earlier check.
 */
export const RenewalWindowsUnsatisfiable: Policy = ({ secret, certificate }) => {
  const cert = secret?.data ? secretCertificateFacts(secret) : undefined;
  if (!cert || 'error' in cert) return undefined;
  const error = scheduleRenewal(cert.value.notBefore, cert.value.notAfter, certificate.spec)?.windowError;
  if (error === undefined) return undefined;
  return { reason: WINDOW_ERROR_REASON, message: `Could not calculate renewal time: ${error}` };
};

export const CurrentCertificateHasExpired: Policy = ({ secret, now }) => {
  const cert = secretCertificateFacts(secret!);
  if ('error' in cert) return invalidCertificate(cert.error);
  if (now.getTime() <= cert.value.notAfter.getTime()) return undefined;
  // Go's time.RFC1123 of a UTC time.
  const expiry = cert.value.notAfter.toUTCString().replace(/GMT$/, 'UTC');
  return { reason: Reasons.Expired, message: `Certificate expired on ${expiry}` };
};

const commonChecks: PolicyChain = [
  SecretDoesNotExist,
  SecretIsMissingData,
  SecretPublicKeysDiffer,
  SecretIssuerAnnotationsMismatch,
  SecretCertificateNameAnnotationsMismatch,
  SecretPrivateKeyMismatchesSpec,
  SecretPublicKeyDiffersFromCurrentCertificateRequest,
  CurrentCertificateRequestMismatchesSpec,
];

/** NewTriggerPolicyChain: a violation means "issue now", with its reason on Issuing=True. */
export const triggerPolicyChain: PolicyChain = [...commonChecks, CurrentCertificateNearingExpiry];

/** NewReadinessPolicyChain: a violation means Ready=False with its reason. */
export const readinessPolicyChain: PolicyChain = [...commonChecks, CurrentCertificateHasExpired];

/**
 * What cert-manager's validating webhook would have refused. Our API server runs no webhook, so the
 * controller checks: an invalid Certificate is not issued and shows Ready=False with this violation.
 */
export function invalidSpec(cert: Certificate): Violation | undefined {
  // Each version of a Certificate is looked at by all six controllers; a change arrives as a new object.
  if (validated.has(cert)) return validated.get(cert);
  const errors = validateCertificate(cert);
  const violation = errors.length
    ? {
        reason: INVALID_SPEC_REASON,
        message: `Certificate spec is invalid: ${errors.map(formatFieldError).join(', ')}`,
      }
    : undefined;
  validated.set(cert, violation);
  return violation;
}

/** invalidSpec's answers, for the Certificate versions asked about lately (weak-generations.ts). */
const validated = new WeakGenerations<Certificate, Violation | undefined>(ANSWERS_REMEMBERED);
