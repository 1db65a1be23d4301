import { createHash } from 'node:crypto';
import { dnsSafeShorten } from '../../../api/names.ts';

/**
 * Names of the objects the certificate controllers create, byte-compatible with cert-manager
 * (pkg/api/util/names.go, StableCertificateRequestName), and the Certificate annotations copied onto them.
 */

/**
 * ComputeSecureUniqueDeterministicNameFromData: names up to `max` characters are kept; longer ones become
 * a DNS-safe prefix and the SHA-256 of the full name, so that two long names sharing a prefix stay apart.
 */
export function secureUniqueName(name: string, max: number): string {
  const HASH_LENGTH = 64;
  if (max < HASH_LENGTH) throw new Error(`maxNameLength must be at least ${HASH_LENGTH}`);
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex');
  const prefix = dnsSafeShorten(name, max - HASH_LENGTH - 1);
  return prefix ? `${prefix}-${hash}` : hash;
}

/**
 * `<certificate>-<revision>`. Names fit in 253 characters: a Certificate name of up to 233 characters is
 * used as is (leaving 20 for "-" and the revision), longer ones are hashed as above.
 */
export function certificateRequestName(certificateName: string, revision: number): string {
  return `${secureUniqueName(certificateName, 233)}-${revision}`;
}

/**
 * --copied-annotation-prefixes default: every annotation except those kubectl, Flux and Argo CD keep for
 * themselves (BuildAnnotationsToCopy with `*`, `-kubectl.kubernetes.io/`, `-fluxcd.io/`, `-argocd.argoproj.io/`).
 */
export const DEFAULT_COPIED_ANNOTATION_PREFIXES = [
  '*',
  '-kubectl.kubernetes.io/',
  '-fluxcd.io/',
  '-argocd.argoproj.io/',
] as const;

/** BuildAnnotationsToCopy: `*` copies all, `prefix` copies matching keys, `-prefix` excludes them. */
export function annotationsToCopy(
  annotations: Readonly<Record<string, string>> | undefined,
  prefixes: readonly string[] = DEFAULT_COPIED_ANNOTATION_PREFIXES,
): Record<string, string> {
  const all = prefixes.includes('*');
  const include = prefixes.filter((p) => p !== '*' && !p.startsWith('-'));
  const exclude = prefixes.filter((p) => p.startsWith('-')).map((p) => p.slice(1));
  const copied: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!all && !include.some((p) => key.startsWith(p))) continue;
    if (exclude.some((p) => key.startsWith(p))) continue;
    copied[key] = value;
  }
  return copied;
}
