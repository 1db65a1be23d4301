import { type KubeObject, newControllerRef, type OwnerReference } from '@certkit/apimachinery';
import { API_VERSION, GROUP, Kinds } from '../../../api/constants.ts';
import type { Certificate, CleanupPolicy } from '../../../api/types.ts';
import type { ControllerOptions } from '../../context.ts';

/**
 * Whether the issued Secret carries an ownerReference to its Certificate, so that the API server's garbage
 * collector deletes it with the Certificate (per-Certificate `spec.cleanupPolicy`, docs/adr/0011).
 *
 * Precedence: the deprecated --enable-certificate-owner-ref, when given at all, wins (true → OnDelete,
 * false → Never) for backwards compatibility; else the Certificate's cleanupPolicy; else
 * --default-secret-cleanup-policy. The issuing controller compares the Secret with the effective policy on
 * every reconcile, so a change of field or flag adds or removes the reference without a re-issuance.
 */

export function effectiveCleanupPolicy(
  cert: Certificate,
  options: Pick<ControllerOptions, 'enableCertificateOwnerRef' | 'defaultSecretCleanupPolicy'>,
): CleanupPolicy {
  if (options.enableCertificateOwnerRef !== undefined) {
    return options.enableCertificateOwnerRef ? 'OnDelete' : 'Never';
  }
  return cert.spec.cleanupPolicy || options.defaultSecretCleanupPolicy;
}

/** metav1.NewControllerRef(crt, Certificate): the reference the Secret gets under OnDelete. */
export function certificateOwnerReference(cert: Certificate): OwnerReference {
  return newControllerRef(cert, API_VERSION, Kinds.Certificate);
}

/** A reference to a Certificate of this name: this one, or a deleted namesake (another uid). */
function refersToCertificateNamed(ref: OwnerReference, name: string | undefined): boolean {
  return ref.kind === Kinds.Certificate && ref.apiVersion?.split('/')[0] === GROUP && ref.name === name;
}

function isExactReference(ref: OwnerReference, expected: OwnerReference): boolean {
  return (
    ref.apiVersion === expected.apiVersion &&
    ref.kind === expected.kind &&
    ref.name === expected.name &&
    ref.uid === expected.uid &&
    ref.controller === true &&
    ref.blockOwnerDeletion === true
  );
}

/**
 * The ownerReferences the Secret should have: other owners kept as they are; references to this
 * Certificate's name (this uid, or a stale one of a deleted namesake, which would make the collector delete
 * the Secret) dropped under Never, and under OnDelete replaced, in place, by exactly one controller
 * reference to this Certificate (appended when there was none). Undefined when none remain.
 */
export function desiredOwnerReferences(
  existing: readonly OwnerReference[] | undefined,
  cert: Certificate,
  policy: CleanupPolicy,
): OwnerReference[] | undefined {
  const ours = (ref: OwnerReference) =>
    ref.uid === cert.metadata.uid || refersToCertificateNamed(ref, cert.metadata.name);
  const refs: OwnerReference[] = [];
  let placed = false;
  for (const ref of existing ?? []) {
    if (!ours(ref)) refs.push(ref);
    else if (policy === 'OnDelete' && !placed) {
      refs.push(certificateOwnerReference(cert));
      placed = true;
    }
  }
  if (policy === 'OnDelete' && !placed) refs.push(certificateOwnerReference(cert));
  return refs.length ? refs : undefined;
}

/**
 * Why the Secret's ownerReferences disagree with the policy (SecretOwnerReferenceMismatch and its
 * managed-fields sibling upstream), or undefined when they agree.
 */
export function ownerReferenceMismatch(
  secret: KubeObject,
  cert: Certificate,
  policy: CleanupPolicy,
): string | undefined {
  const refs = secret.metadata?.ownerReferences ?? [];
  const expected = certificateOwnerReference(cert);
  const ours = refs.filter(
    (ref) => ref.uid === cert.metadata.uid || refersToCertificateNamed(ref, expected.name),
  );
  if (policy === 'OnDelete') {
    if (ours.length === 1 && isExactReference(ours[0], expected)) return undefined;
    return 'Secret is missing the owner reference to its Certificate (cleanupPolicy OnDelete)';
  }
  if (ours.length === 0) return undefined;
  return 'Secret has an owner reference to its Certificate it should not have (cleanupPolicy Never)';
}
