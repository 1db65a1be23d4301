import { isAlreadyExists, isConflict, isNotFound, jsonEqual, type KubeObject } from '@certkit/apimachinery';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Annotations, Labels, SecretKeys } from '../../../api/constants.ts';
import type { Certificate, CleanupPolicy } from '../../../api/types.ts';
import {
  additionalOutputData,
  COMBINED_PEM_KEY,
  DER_KEY,
  SecretAnnotation,
  secretAnnotationsFor,
  type CertificateInfo,
  type CertificateNames,
} from '../../../pki/index.ts';
import type { ControllerContext } from '../../context.ts';
import {
  applyKeystores,
  type KeystorePasswords,
  keystorePasswords,
  keystoresToWrite,
  warnOnKeystoreError,
} from './keystores.ts';
import { expectOwnSecretWrite } from '../shared/own-secret-writes.ts';
import {
  readTemplateKeys,
  SECRET_TEMPLATE_KEYS_ANNOTATION,
  type TemplateKeys,
} from '../../secret-template-keys.ts';
import { desiredOwnerReferences, effectiveCleanupPolicy } from '../shared/owner-reference.ts';

/**
 * The issued Secret (`spec.secretName`): what it must contain (cert-manager's issuing/internal/secret.go)
 * and how it is written.
 *
 * cert-manager writes it with a server-side apply, and SSA's field ownership tells it which labels,
 * annotations and data keys it set before and may now remove. We have no SSA, so we write with GET + PUT
 * (resourceVersion-checked, retried on conflict) and track ownership ourselves:
 * - certificate-detail annotations (`cert-manager.io/common-name`, `…/alt-names`, …) and the extra output
 *   format keys (`key.der`, `tls-combined.pem`) are cert-manager's by name, so ones no longer wanted are
 *   removed outright;
 * - secretTemplate labels and annotations have user-chosen keys, so the keys we last copied from the
 *   template are recorded in the annotation SECRET_TEMPLATE_KEYS_ANNOTATION; a key that left the template
 *   is removed only if it is listed there, never a label or annotation someone else put on the Secret.
 *   (Comparing with the previous template instead would need the previous spec, which nothing keeps.) On a
 *   Secret cert-manager wrote, which has no such annotation, the keys its server-side apply owns are read from
 *   managedFields instead (secret-template-keys.ts), so that a Secret taken over keeps being cleaned up.
 * Everything else on the Secret (other data keys, labels, annotations, owners) is left as it is.
 */

// The secretTemplate keys last copied to the Secret: certkit's annotation, or cert-manager's managedFields.
export { SECRET_TEMPLATE_KEYS_ANNOTATION } from '../../secret-template-keys.ts';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** What goes into the Secret's data, as PEM text. */
export interface SecretContents {
  /** `tls.key`, already encoded per spec.privateKey.encoding. */
  privateKey: string;
  /** `tls.crt`: leaf and intermediates. */
  certificate: string;
  /** `ca.crt`, when the issuer gave one. */
  ca?: string;
  /** The leaf of `certificate`, parsed, when the caller has it already (parsing is the costly part). */
  parsed?: CertificateInfo;
}

/** Where the certificate came from, recorded in annotations (empty values are not written). */
export interface SecretProvenance {
  certificateName?: string;
  issuerName?: string;
  issuerKind?: string;
  issuerGroup?: string;
}

const base64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

const DETAIL_ANNOTATIONS: readonly string[] = Object.values(SecretAnnotation);
const OUTPUT_FORMAT_KEYS: readonly string[] = [DER_KEY, COMBINED_PEM_KEY];

/**
 * The Secret as it should be, built on `existing` (or a new kubernetes.io/tls Secret): data, the fao label,
 * provenance and certificate-detail annotations, the secretTemplate, extra output formats and the owner
 * reference of the cleanup policy, and the keystores: those in `keystorePasswords` encoded afresh, those not
 * wanted removed, the others kept (keystores.ts). Throws if the certificate or key cannot be parsed.
 */
export function buildCertificateSecret(
  existing: Secret | undefined,
  cert: Certificate,
  contents: SecretContents,
  provenance: SecretProvenance,
  policy: CleanupPolicy,
  keystorePasswords: KeystorePasswords = {},
): Secret & KubeObject {
  const secret = baseSecret(existing, cert);
  const data: Record<string, string> = { ...secret.data };
  data[SecretKeys.tlsKey] = base64(contents.privateKey);
  data[SecretKeys.tlsCert] = base64(contents.certificate);
  if (contents.ca) data[SecretKeys.ca] = base64(contents.ca);
  else delete data[SecretKeys.ca];
  for (const key of OUTPUT_FORMAT_KEYS) delete data[key];
  const formats = additionalOutputData(
    cert.spec.additionalOutputFormats,
    contents.privateKey,
    contents.certificate,
  );
  for (const [key, value] of Object.entries(formats)) data[key] = value.toString('base64');
  applyKeystores(data, cert, contents, keystorePasswords);
  secret.data = data;
  applyMetadata(secret, existing, cert, contents.parsed ?? contents.certificate, provenance, policy);
  return secret;
}

/**
 * Whether the labels, annotations, owner references or type of `existing` differ from what
 * buildCertificateSecret would make of them: what the issuing controller checks between issuances on a
 * Secret cached as facts (docs/adr/1140), with the names of its certificate from those facts. Its data is
 * not compared: a Secret is cached as facts only while it holds nothing but its key, certificate and CA.
 */
export function secretMetadataDiffers(
  existing: Secret,
  cert: Certificate,
  names: CertificateNames,
  policy: CleanupPolicy,
): boolean {
  const desired = baseSecret(existing, cert);
  applyMetadata(desired, existing, cert, names, {}, policy);
  return secretDiffers({ ...existing, data: {} }, { ...desired, data: {} });
}

/** A shallow copy of `existing` to build on, or a new kubernetes.io/tls Secret. */
function baseSecret(existing: Secret | undefined, cert: Certificate): Secret & KubeObject {
  // Shallow copies suffice: data, labels, annotations and owner references are rebuilt, never changed in
  // place (the cache's objects are frozen).
  const secret: Secret & KubeObject = existing
    ? ({ ...existing, metadata: { ...existing.metadata } } as Secret & KubeObject)
    : {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: cert.spec.secretName, namespace: cert.metadata.namespace },
        type: TLS_SECRET_TYPE,
      };
  // Type is immutable: a Secret the user created beforehand keeps its own.
  secret.type ??= TLS_SECRET_TYPE;
  return secret;
}

/**
 * The fao label, provenance and certificate-detail annotations, the secretTemplate and the owner reference
 * of the cleanup policy, onto `secret` (a copy of `existing`).
 */
function applyMetadata(
  secret: Secret,
  existing: Secret | undefined,
  cert: Certificate,
  certificate: CertificateNames | string,
  provenance: SecretProvenance,
  policy: CleanupPolicy,
): void {
  const metadata = (secret.metadata ??= {});
  const template = cert.spec.secretTemplate ?? {};
  const previous = readTemplateKeys(existing);
  const labels: Record<string, string> = { ...metadata.labels };
  for (const key of previous.labels) if (!(key in (template.labels ?? {}))) delete labels[key];
  Object.assign(labels, template.labels);
  labels[Labels.partOfCertManagerController] = 'true';
  metadata.labels = labels;

  const annotations: Record<string, string> = { ...metadata.annotations };
  for (const key of previous.annotations) if (!(key in (template.annotations ?? {}))) delete annotations[key];
  Object.assign(annotations, template.annotations);
  const details = secretAnnotationsFor(certificate);
  for (const key of DETAIL_ANNOTATIONS) if (!(key in details)) delete annotations[key];
  Object.assign(annotations, details);
  if (provenance.certificateName) annotations[Annotations.certificateName] = provenance.certificateName;
  if (provenance.issuerName || provenance.issuerKind || provenance.issuerGroup) {
    annotations[Annotations.issuerName] = provenance.issuerName ?? '';
    annotations[Annotations.issuerKind] = provenance.issuerKind ?? '';
    annotations[Annotations.issuerGroup] = provenance.issuerGroup ?? '';
  }
  const owned: TemplateKeys = {
    labels: Object.keys(template.labels ?? {}).sort(),
    annotations: Object.keys(template.annotations ?? {}).sort(),
  };
  if (owned.labels.length || owned.annotations.length) {
    annotations[SECRET_TEMPLATE_KEYS_ANNOTATION] = JSON.stringify(owned);
  } else {
    delete annotations[SECRET_TEMPLATE_KEYS_ANNOTATION];
  }
  metadata.annotations = annotations;

  const owners = desiredOwnerReferences(metadata.ownerReferences, cert, policy);
  if (owners) metadata.ownerReferences = owners;
  else delete metadata.ownerReferences;
}

/** Whether writing `desired` would change what `existing` holds in the fields this controller manages. */
export function secretDiffers(existing: Secret, desired: Secret): boolean {
  const pick = (s: Secret) => ({
    type: s.type,
    data: s.data ?? {},
    labels: s.metadata?.labels ?? {},
    annotations: s.metadata?.annotations ?? {},
    ownerReferences: s.metadata?.ownerReferences ?? [],
  });
  return !jsonEqual(pick(existing), pick(desired));
}

const MAX_WRITE_ATTEMPTS = 5;

/**
 * Creates or updates the Secret to what `build` makes of its current state (undefined: leave it), re-reading
 * it live and building again after a conflict or a create that lost a race. Returns the Secret as written,
 * or as found when nothing was to change.
 */
export async function writeSecret(
  ctx: ControllerContext,
  namespace: string,
  name: string,
  build: (existing: Secret | undefined) => (Secret & KubeObject) | undefined,
  signal?: AbortSignal,
): Promise<Secret | undefined> {
  let existing = await ctx.secrets.getWithData(namespace, name);
  for (let attempt = 1; ; attempt++) {
    const desired = build(existing);
    if (!desired || (existing && !secretDiffers(existing, desired))) return existing;
    try {
      return existing
        ? await ctx.secretClient.update(desired, { signal })
        : await ctx.secretClient.create(namespace, desired, { signal });
    } catch (err) {
      if (!(isConflict(err) || isAlreadyExists(err) || (existing && isNotFound(err)))) throw err;
      if (attempt >= MAX_WRITE_ATTEMPTS) throw err;
    }
    existing = await ctx.secretClient.get(namespace, name, { signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  }
}

/**
 * secretsUpdateData: writes a newly issued (or temporary) certificate with its key to the Secret, keystores
 * encoded afresh with passwords read now. The reconciles that follow must not judge the new certificate by the
 * old Secret (or issue again): what the write made is recorded for them (shared/own-secret-writes.ts), and
 * they stand aside until their cache shows it, while this worker goes on (docs/adr/1181).
 */
export async function writeIssuedSecret(
  ctx: ControllerContext,
  cert: Certificate,
  contents: SecretContents,
  provenance: SecretProvenance,
  signal: AbortSignal,
): Promise<void> {
  const namespace = cert.metadata.namespace ?? '';
  const name = cert.spec.secretName;
  const policy = effectiveCleanupPolicy(cert, ctx.options);
  const written = await warnOnKeystoreError(ctx, cert, async () => {
    const passwords = await keystorePasswords(ctx, cert, keystoresToWrite(cert, undefined, true));
    const build = (existing: Secret | undefined) =>
      buildCertificateSecret(existing, cert, contents, provenance, policy, passwords);
    return writeSecret(ctx, namespace, name, build, signal);
  });
  expectOwnSecretWrite(ctx, namespace, name, written?.data?.[SecretKeys.tlsCert]);
}
