import { Labels } from '../api/constants.ts';

/**
 * The two label selectors of the split Secret cache (cert-manager's core_filteredsecrets.go). They are
 * mutually exclusive, so every Secret is cached at most once: in full when labelled `fao=true`, as metadata
 * when the label is absent. A Secret whose label has any other value matches neither and is not cached at
 * all (upstream behaves the same).
 */

export const FAO_LABEL = Labels.partOfCertManagerController;

/** Secrets cached in full, data included. */
export const LABELLED_SELECTOR = `${FAO_LABEL}=true`;

/** Secrets cached as PartialObjectMetadata only. */
export const UNLABELLED_SELECTOR = `!${FAO_LABEL}`;

/** Whether a Secret with these labels belongs in the full cache (the value must be exactly "true"). */
export function isLabelledForController(labels: Record<string, string> | undefined): boolean {
  return labels?.[FAO_LABEL] === 'true';
}
