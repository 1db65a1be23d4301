import type { ManagedFieldsEntry } from 'kubernetes-types/meta/v1.d.ts';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';

/**
 * Which labels and annotations of a Certificate's Secret came from its secretTemplate, so that one dropped
 * from the template can be removed from the Secret, and nothing else.
 *
 * certkit records them in the annotation SECRET_TEMPLATE_KEYS_ANNOTATION (it writes with GET + PUT, not
 * server-side apply). cert-manager records nothing of the kind: it server-side applies the Secret as the field
 * manager `cert-manager-certificates-issuing`, and the API server's managedFields say which labels and
 * annotations that manager owns. A Secret cert-manager wrote and certkit takes over has only those, so they
 * are read here when the annotation is absent: the template keys are what that manager applied, but for the
 * ones cert-manager sets on every Secret (the `controller.cert-manager.io/fao` label and the
 * `cert-manager.io/` annotations), which the issuing controller manages by name anyway.
 */

/** JSON `{"labels":[…],"annotations":[…]}`, sorted keys: the template keys certkit last copied to the Secret. */
export const SECRET_TEMPLATE_KEYS_ANNOTATION = 'cert-manager.io/secret-template-keys';

/** The field manager of cert-manager's issuing controller, whose applies wrote the Secret. */
export const CERT_MANAGER_ISSUING_MANAGER = 'cert-manager-certificates-issuing';

const FAO_LABEL = 'controller.cert-manager.io/fao';
const CERT_MANAGER_ANNOTATION_PREFIX = 'cert-manager.io/';

export interface TemplateKeys {
  labels: string[];
  annotations: string[];
}

/** The `f:KEY` members of a fieldsV1 map, as keys. */
function ownedKeys(fields: unknown): string[] {
  if (typeof fields !== 'object' || fields === null) return [];
  return Object.keys(fields)
    .filter((key) => key.startsWith('f:'))
    .map((key) => key.slice(2));
}

/**
 * The secretTemplate keys cert-manager applied to this Secret, from its managedFields; undefined when its
 * issuing controller never applied it (or the managedFields are not there, as in the controller's caches).
 */
export function certManagerTemplateKeys(
  managedFields: readonly ManagedFieldsEntry[] | undefined,
): TemplateKeys | undefined {
  const entry = managedFields?.find(
    (e) => e.manager === CERT_MANAGER_ISSUING_MANAGER && e.operation === 'Apply' && !e.subresource,
  );
  if (!entry) return undefined;
  const metadata = (entry.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:metadata'];
  return {
    labels: ownedKeys(metadata?.['f:labels'])
      .filter((key) => key !== FAO_LABEL)
      .sort(),
    annotations: ownedKeys(metadata?.['f:annotations'])
      .filter((key) => !key.startsWith(CERT_MANAGER_ANNOTATION_PREFIX))
      .sort(),
  };
}

/**
 * For a Secret that has managedFields (one the API server returned): when it lacks certkit's annotation and
 * cert-manager's issuing controller applied template keys to it, the annotation saying so, added in place; the
 * object is otherwise unchanged. Used before the caches drop managedFields, so that what they hold says what a
 * live read would (readTemplateKeys).
 */
export function adoptCertManagerTemplateKeys(secret: Secret): void {
  const metadata = secret.metadata;
  if (!metadata?.managedFields || metadata.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION] !== undefined)
    return;
  const keys = certManagerTemplateKeys(metadata.managedFields);
  if (!keys || (keys.labels.length === 0 && keys.annotations.length === 0)) return;
  metadata.annotations = { ...metadata.annotations, [SECRET_TEMPLATE_KEYS_ANNOTATION]: JSON.stringify(keys) };
}

/** The template keys of a Secret: certkit's annotation, else what cert-manager applied, else none. */
export function readTemplateKeys(secret: Secret | undefined): TemplateKeys {
  const text = secret?.metadata?.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION];
  if (!text)
    return certManagerTemplateKeys(secret?.metadata?.managedFields) ?? { labels: [], annotations: [] };
  try {
    const parsed = JSON.parse(text) as Partial<TemplateKeys>;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    return { labels: strings(parsed.labels), annotations: strings(parsed.annotations) };
  } catch {
    return { labels: [], annotations: [] };
  }
}
