import { formatGoDuration, parseGoDuration } from '@certkit/apimachinery';
import { parse as parseCsv } from 'csv-parse/sync';
import { AcmeAnnotations } from '../../api/acme-constants.ts';
import {
  Annotations,
  ANNOTATION_PREFIX,
  Defaults,
  KEY_USAGES,
  Kinds,
  Limits,
  PRIVATE_KEY_ALGORITHMS,
  PRIVATE_KEY_ENCODINGS,
  ROTATION_POLICIES,
} from '../../api/constants.ts';
import type {
  CertificatePrivateKey,
  CertificateSecretTemplate,
  CertificateSpec,
  KeyUsage,
  PrivateKeyAlgorithm,
  PrivateKeyEncoding,
  PrivateKeyRotationPolicy,
  X509Subject,
} from '../../api/types.ts';
import { emailAddressError, isIPAddress } from '../../api/validation/formats.ts';
import { parseGoBool } from './annotation-keys.ts';
import type { ShimOptions } from './options.ts';

/**
 * What the certificate shims read from an Ingress's or Gateway's annotations, as cert-manager's
 * certificate-shim reads them (its `hasShimAnnotation`, `issuerForIngressLike`, `translateAnnotations` and
 * `setIssuerSpecificConfig`). Users move their manifests from cert-manager unchanged, so the keys, the parsing
 * (Go durations, Go integers, CSV with quoting) and the error texts are cert-manager's: a user searching the
 * text of a BadConfig Event finds cert-manager's documentation.
 */

/** Ingress annotations that pick the HTTP-01 solver's ingress class for the Certificate's challenges. */
export const IngressAcmeAnnotations = {
  http01IngressClass: 'acme.cert-manager.io/http01-ingress-class',
  http01IngressClassName: 'acme.cert-manager.io/http01-ingress-ingressclassname',
} as const;

/** An annotation the shim cannot turn into a Certificate field; its message is cert-manager's. */
export class InvalidAnnotationError extends Error {
  constructor(key: string, detail: string) {
    super(`invalid ingress annotation ${JSON.stringify(key)}: ${detail}`);
    this.name = 'InvalidAnnotationError';
  }
}

type AnnotationMap = Readonly<Record<string, string>>;

export interface IssuerChoice {
  name: string;
  kind: string;
  group: string;
}

/**
 * The issuer of the object's Certificates: the `--default-issuer-*` flags, then `issuer` (kind Issuer) or
 * `cluster-issuer` (kind ClusterIssuer), then `issuer-kind` and `issuer-group`. Throws with cert-manager's
 * message (its errors joined by ", ") when the name is empty or the annotations contradict each other.
 */
export function issuerFor(
  annotations: AnnotationMap | undefined,
  defaults: Pick<ShimOptions, 'defaultIssuerName' | 'defaultIssuerKind' | 'defaultIssuerGroup'>,
): IssuerChoice {
  const ann = annotations ?? {};
  let name = defaults.defaultIssuerName;
  let kind = defaults.defaultIssuerKind;
  let group = defaults.defaultIssuerGroup;
  const issuer = ann[Annotations.issuer];
  const clusterIssuer = ann[Annotations.clusterIssuer];
  const issuerKind = ann[Annotations.issuerKind];
  const issuerGroup = ann[Annotations.issuerGroup];
  if (issuer !== undefined) {
    name = issuer;
    kind = Kinds.Issuer;
  }
  if (clusterIssuer !== undefined) {
    name = clusterIssuer;
    kind = Kinds.ClusterIssuer;
  }
  if (issuerKind !== undefined) kind = issuerKind;
  if (issuerGroup !== undefined) group = issuerGroup;
  const errors: string[] = [];
  if (name === '') errors.push('failed to determine issuer name to be used for ingress resource');
  const both = (a: string, b: string) => `both ${JSON.stringify(a)} and ${JSON.stringify(b)} may not be set`;
  if (issuer !== undefined && clusterIssuer !== undefined)
    errors.push(both(Annotations.issuer, Annotations.clusterIssuer));
  if (clusterIssuer !== undefined && issuerGroup !== undefined)
    errors.push(both(Annotations.clusterIssuer, Annotations.issuerGroup));
  if (clusterIssuer !== undefined && issuerKind !== undefined)
    errors.push(both(Annotations.clusterIssuer, Annotations.issuerKind));
  if (errors.length > 0) throw new Error(errors.join(', '));
  return { name, kind, group };
}

/** The `--extra-certificate-annotations` the object has, copied to its Certificates; undefined when none. */
export function extraAnnotations(
  annotations: AnnotationMap | undefined,
  keys: readonly string[],
): Record<string, string> | undefined {
  const extra: Record<string, string> = {};
  for (const key of keys) if (annotations?.[key] !== undefined) extra[key] = annotations[key];
  return Object.keys(extra).length > 0 ? extra : undefined;
}

/** The object a Certificate is built for, as the HTTP-01 parent reference annotations need it. */
export interface CertificateOwner {
  kind: 'Ingress' | 'Gateway' | 'ListenerSet';
  name: string;
  /** Where a ListenerSet's Gateway is when its parentRef names no namespace. */
  namespace?: string;
  /** A ListenerSet's Gateway. */
  parentRef?: { name: string; namespace?: string };
}

/**
 * The annotations the Certificate carries for an ACME issuer's HTTP-01 solver: edit-in-place (the Ingress
 * itself serves the challenge, with a temporary certificate meanwhile), the ingress class overrides, and for a
 * Gateway or ListenerSet the parent the solver's HTTPRoute attaches to. A ListenerSet is that parent unless
 * `acme.cert-manager.io/http01-parentreffallback` (a Go boolean) sends the route to its Gateway instead, for
 * Gateways that do not let routes attach to ListenerSets.
 */
export function issuerSpecificAnnotations(
  annotations: AnnotationMap | undefined,
  owner: CertificateOwner,
): Record<string, string> {
  const ann = annotations ?? {};
  const out: Record<string, string> = {};
  if (ann[AcmeAnnotations.http01EditInPlace] === 'true') {
    out[AcmeAnnotations.http01IngressNameOverride] = owner.name;
    out[Annotations.issueTemporaryCertificate] = 'true';
  }
  const ingressClass = ann[IngressAcmeAnnotations.http01IngressClass];
  if (ingressClass) out[AcmeAnnotations.http01IngressClassOverride] = ingressClass;
  const ingressClassName = ann[IngressAcmeAnnotations.http01IngressClassName];
  if (ingressClassName) out[AcmeAnnotations.http01IngressClassNameOverride] = ingressClassName;
  if (owner.kind === 'Gateway') {
    out[AcmeAnnotations.http01ParentRefKind] = 'Gateway';
    out[AcmeAnnotations.http01ParentRefName] = owner.name;
  }
  if (owner.kind === 'ListenerSet') {
    const fallback = ann[AcmeAnnotations.http01ParentRefFallback];
    if (fallback !== undefined && parseGoBool(fallback) === true) {
      out[AcmeAnnotations.http01ParentRefKind] = 'Gateway';
      out[AcmeAnnotations.http01ParentRefName] = owner.parentRef?.name ?? '';
      out[AcmeAnnotations.http01ParentRefNamespace] = owner.parentRef?.namespace || (owner.namespace ?? '');
    } else {
      out[AcmeAnnotations.http01ParentRefKind] = 'ListenerSet';
      out[AcmeAnnotations.http01ParentRefName] = owner.name;
    }
  }
  return out;
}

/** Go's strconv.ParseInt(text, 10, bits) (Atoi is 64 bits), with its error text. */
function parseGoInt(fn: 'ParseInt' | 'Atoi', text: string, bits: 32 | 64): number {
  if (!/^[+-]?[0-9]+$/.test(text))
    throw new Error(`strconv.${fn}: parsing ${JSON.stringify(text)}: invalid syntax`);
  const value = BigInt(text);
  const limit = 1n << BigInt(bits - 1);
  if (value < -limit || value >= limit)
    throw new Error(`strconv.${fn}: parsing ${JSON.stringify(text)}: value out of range`);
  return Number(value);
}

/**
 * cert-manager's SplitWithEscapeCSV: one line of CSV (Go's encoding/csv, through csv-parse), so a value may
 * hold a comma when quoted: `"10 Downing Street, Westminster",Manchester`.
 */
export function splitWithEscapeCSV(text: string): string[] {
  let records: string[][];
  try {
    records = parseCsv(text, { relax_column_count: true }) as string[][];
  } catch (err) {
    throw new Error(`failed to parse ${JSON.stringify(text)} as CSV: ${(err as Error).message}`);
  }
  if (records.length === 0) throw new Error(`no values found after parsing ${JSON.stringify(text)}`);
  if (records.length > 1)
    throw new Error(`refusing to use ${JSON.stringify(text)} as input as it parses as multiple lines of CSV`);
  return records[0];
}

const SUBJECT_ANNOTATIONS: [keyof X509Subject, string][] = [
  ['organizations', Annotations.subjectOrganizations],
  ['organizationalUnits', Annotations.subjectOrganizationalUnits],
  ['countries', Annotations.subjectCountries],
  ['provinces', Annotations.subjectProvinces],
  ['localities', Annotations.subjectLocalities],
  ['postalCodes', Annotations.subjectPostalCodes],
  ['streetAddresses', Annotations.subjectStreetAddresses],
];

/** A Go duration annotation at least `minimum` long, as the Certificate spells it (`2160h0m0s`). */
function durationAnnotation(key: string, text: string, field: string, minimumMs: number): string {
  let ns: bigint;
  try {
    ns = parseGoDuration(text);
  } catch (err) {
    throw new InvalidAnnotationError(key, (err as Error).message);
  }
  const minimum = BigInt(minimumMs) * 1_000_000n;
  if (ns < minimum)
    throw new InvalidAnnotationError(
      key,
      `${field} must be greater than or equal to ${formatGoDuration(minimum)}`,
    );
  return formatGoDuration(ns);
}

const oneOf = <T extends string>(values: readonly T[], text: string): text is T =>
  (values as readonly string[]).includes(text);

/**
 * Applies the Certificate annotations of an Ingress or Gateway to the spec built from its TLS entries:
 * common name, extra SANs, subject, durations, usages, revision history, private key and Secret template.
 * Throws InvalidAnnotationError, with cert-manager's message, for the first annotation it cannot use.
 */
export function applyCertificateAnnotations(
  spec: CertificateSpec,
  annotations: AnnotationMap | undefined,
): void {
  const ann = annotations ?? {};
  const has = (key: string) => ann[key] !== undefined;

  if (has(Annotations.commonName)) {
    const commonName = ann[Annotations.commonName];
    if (Buffer.byteLength(commonName) > Limits.maxCommonNameBytes)
      throw new InvalidAnnotationError(Annotations.commonName, 'common name may not be more than 64 bytes');
    spec.commonName = commonName;
  }
  if (ann[Annotations.altNames]) {
    spec.dnsNames = [...(spec.dnsNames ?? []), ...ann[Annotations.altNames].split(',')];
  }
  if (ann[Annotations.ipSANs]) {
    const ips = ann[Annotations.ipSANs].split(',').map((ip) => ip.trim());
    for (const ip of ips) {
      if (!isIPAddress(ip))
        throw new InvalidAnnotationError(
          Annotations.ipSANs,
          `${JSON.stringify(ip)} is not a valid IP address`,
        );
    }
    spec.ipAddresses = [...(spec.ipAddresses ?? []), ...ips];
  }
  if (ann[Annotations.emailSANs]) {
    const emails = ann[Annotations.emailSANs].split(',').map((email) => email.trim());
    for (const email of emails) {
      const problem = emailAddressError(email);
      if (problem === undefined) continue;
      throw new InvalidAnnotationError(
        Annotations.emailSANs,
        problem.includes('only contains the email address itself')
          ? `${JSON.stringify(email)} must only contain the email address itself`
          : `${JSON.stringify(email)} is not a valid email address`,
      );
    }
    spec.emailAddresses = emails;
  }

  const subject: X509Subject = {};
  for (const [field, key] of SUBJECT_ANNOTATIONS) {
    if (!has(key)) continue;
    try {
      (subject[field] as string[]) = splitWithEscapeCSV(ann[key]);
    } catch (err) {
      throw new InvalidAnnotationError(key, (err as Error).message);
    }
  }
  if (has(Annotations.subjectSerialNumber)) subject.serialNumber = ann[Annotations.subjectSerialNumber];
  // cert-manager leaves the subject out unless some field of it is non-empty.
  if (Object.values(subject).some((value) => (Array.isArray(value) ? value.length > 0 : value !== ''))) {
    spec.subject = subject;
  }

  if (has(Annotations.duration))
    spec.duration = durationAnnotation(
      Annotations.duration,
      ann[Annotations.duration],
      'duration',
      Limits.minDurationMs,
    );
  if (has(Annotations.renewBefore)) {
    spec.renewBefore = durationAnnotation(
      Annotations.renewBefore,
      ann[Annotations.renewBefore],
      'renewBefore',
      Limits.minRenewBeforeMs,
    );
  }
  if (has(Annotations.renewBeforePercentage)) {
    spec.renewBeforePercentage = integer(Annotations.renewBeforePercentage, 'ParseInt', 32);
  }
  if (has(Annotations.usages)) {
    const usages: KeyUsage[] = [];
    for (const name of ann[Annotations.usages].split(',')) {
      const usage = name.replace(/^ +| +$/g, '');
      if (!oneOf(KEY_USAGES, usage))
        throw new InvalidAnnotationError(
          Annotations.usages,
          `invalid key usage name ${JSON.stringify(name)}`,
        );
      usages.push(usage);
    }
    spec.usages = usages;
  }
  if (has(Annotations.revisionHistoryLimit)) {
    const limit = integer(Annotations.revisionHistoryLimit, 'ParseInt', 32);
    if (limit < 1) {
      throw new InvalidAnnotationError(
        Annotations.revisionHistoryLimit,
        `revision history limit must be a positive number ${JSON.stringify(ann[Annotations.revisionHistoryLimit])}`,
      );
    }
    spec.revisionHistoryLimit = limit;
  }

  const privateKey: CertificatePrivateKey = {};
  if (has(Annotations.privateKeyAlgorithm)) {
    const algorithm = ann[Annotations.privateKeyAlgorithm];
    if (!oneOf<PrivateKeyAlgorithm>(PRIVATE_KEY_ALGORITHMS, algorithm)) {
      throw new InvalidAnnotationError(
        Annotations.privateKeyAlgorithm,
        `invalid private key algorithm ${JSON.stringify(algorithm)}`,
      );
    }
    privateKey.algorithm = algorithm;
  }
  if (has(Annotations.privateKeyEncoding)) {
    const encoding = ann[Annotations.privateKeyEncoding];
    if (!oneOf<PrivateKeyEncoding>(PRIVATE_KEY_ENCODINGS, encoding)) {
      throw new InvalidAnnotationError(
        Annotations.privateKeyEncoding,
        `invalid private key encoding ${JSON.stringify(encoding)}`,
      );
    }
    privateKey.encoding = encoding;
  }
  if (has(Annotations.privateKeySize)) {
    const size = integer(Annotations.privateKeySize, 'Atoi', 64);
    const algorithm = privateKey.algorithm ?? Defaults.privateKeyAlgorithm;
    const text = JSON.stringify(ann[Annotations.privateKeySize]);
    if (algorithm === 'RSA' && (size < Limits.minRSAKeySize || size > Limits.maxRSAKeySize))
      throw new InvalidAnnotationError(
        Annotations.privateKeySize,
        `invalid private key size for RSA algorithm ${text}`,
      );
    if (algorithm === 'ECDSA' && !(Limits.ecdsaKeySizes as readonly number[]).includes(size))
      throw new InvalidAnnotationError(
        Annotations.privateKeySize,
        `invalid private key size for ECDSA algorithm ${text}`,
      );
    privateKey.size = size;
  }
  if (has(Annotations.privateKeyRotationPolicy)) {
    const policy = ann[Annotations.privateKeyRotationPolicy];
    if (!oneOf<PrivateKeyRotationPolicy>(ROTATION_POLICIES, policy)) {
      throw new InvalidAnnotationError(
        Annotations.privateKeyRotationPolicy,
        `invalid private key rotation policy ${JSON.stringify(policy)}`,
      );
    }
    privateKey.rotationPolicy = policy;
  }
  if (Object.keys(privateKey).length > 0) spec.privateKey = privateKey;

  if (has(Annotations.secretTemplate)) {
    const template = secretTemplate(ann[Annotations.secretTemplate]);
    if (template) spec.secretTemplate = template;
  }

  function integer(key: string, fn: 'ParseInt' | 'Atoi', bits: 32 | 64): number {
    try {
      return parseGoInt(fn, ann[key], bits);
    } catch (err) {
      throw new InvalidAnnotationError(key, (err as Error).message);
    }
  }
}

/**
 * `cert-manager.io/secret-template`: a JSON CertificateSecretTemplate, unknown fields refused (as Go's
 * DisallowUnknownFields), and no cert-manager.io/ annotation in it. Undefined when it sets nothing.
 */
function secretTemplate(json: string): CertificateSecretTemplate | undefined {
  const key = Annotations.secretTemplate;
  const fail = (detail: string) =>
    new InvalidAnnotationError(key, `error parsing secret template JSON: ${detail}`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw fail(
      `cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type v1.CertificateSecretTemplate`,
    );
  const template: CertificateSecretTemplate = {};
  for (const [field, map] of Object.entries(value)) {
    if (field !== 'annotations' && field !== 'labels')
      throw fail(`json: unknown field ${JSON.stringify(field)}`);
    if (map === null) continue;
    if (
      typeof map !== 'object' ||
      Array.isArray(map) ||
      Object.values(map).some((v) => typeof v !== 'string')
    ) {
      throw fail(
        `json: cannot unmarshal into Go struct field CertificateSecretTemplate.${field} of type map[string]string`,
      );
    }
    template[field] = map as Record<string, string>;
  }
  for (const annotation of Object.keys(template.annotations ?? {})) {
    if (annotation.startsWith(ANNOTATION_PREFIX)) {
      throw new InvalidAnnotationError(
        key,
        `secretTemplate must not have cert-manager.io/ annotations: ${JSON.stringify(annotation)}`,
      );
    }
  }
  const nonEmpty = (m?: Record<string, string>) => m !== undefined && Object.keys(m).length > 0;
  return nonEmpty(template.annotations) || nonEmpty(template.labels) ? template : undefined;
}
