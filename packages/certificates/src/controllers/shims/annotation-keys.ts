import { ANNOTATION_PREFIX, Annotations } from '../../api/constants.ts';
import type { ShimOptions } from './options.ts';

/**
 * Which annotations make an Ingress or Gateway the shims' business, and which of its annotations they read:
 * what the caches' transforms need, apart from the parsing of the values (annotations.ts, loaded on the first
 * reconcile).
 */

type AnnotationMap = Readonly<Record<string, string>>;

/** Objects being deleted in the foreground carry this finalizer until their dependents are gone. */
export const FOREGROUND_DELETION_FINALIZER = 'foregroundDeletion';

/** Go's strconv.ParseBool: what `kubernetes.io/tls-acme: "true"` may also be spelled as. */
export function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/**
 * Whether the object asks for Certificates: an `issuer` or `cluster-issuer` annotation, whatever its value, or
 * one of `autoAnnotations` (Ingresses only: `--auto-certificate-annotations`) set to a true boolean.
 * `issuer-kind` and `issuer-group` alone do not, as in cert-manager's code (its documentation suggests otherwise).
 */
export function hasShimAnnotation(
  annotations: AnnotationMap | undefined,
  autoAnnotations: readonly string[],
): boolean {
  if (!annotations) return false;
  if (Annotations.issuer in annotations || Annotations.clusterIssuer in annotations) return true;
  return autoAnnotations.some(
    (key) => annotations[key] !== undefined && parseGoBool(annotations[key]) === true,
  );
}

/** Whether an annotation key is one the shims may read, so that a cache keeps it (the others are dropped). */
export function isShimAnnotationKey(
  key: string,
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): boolean {
  return (
    key.startsWith(ANNOTATION_PREFIX) ||
    key.startsWith('acme.cert-manager.io/') ||
    options.autoCertificateAnnotations.includes(key) ||
    options.extraCertificateAnnotations.includes(key)
  );
}
