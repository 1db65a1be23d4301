/**
 * A webhook's namespaceSelector and objectSelector, as kube-apiserver's namespace and object matchers apply
 * them. Selectors are parsed once per stored webhook (the index hands out the same objects until the
 * configuration changes).
 */

import {
  type LabelSelector,
  labelSelectorFromMeta,
  type MetaLabelSelector,
  newNotFound,
  type StoredObject,
} from '@certkit/apimachinery';
import type { AdmissionAttributes } from './attributes.ts';
import type { Webhook } from './webhook-types.ts';

const parsed = new WeakMap<MetaLabelSelector, LabelSelector>();

/** The selector (an absent one, defaulted to `{}` on write, selects everything). */
function selectorOf(meta: MetaLabelSelector | undefined): LabelSelector | undefined {
  if (!meta) return undefined;
  let selector = parsed.get(meta);
  if (!selector) {
    selector = labelSelectorFromMeta(meta);
    parsed.set(meta, selector);
  }
  return selector;
}

function selectsEverything(meta: MetaLabelSelector | undefined): boolean {
  return (
    !meta ||
    ((meta.matchLabels === undefined || Object.keys(meta.matchLabels).length === 0) &&
      (meta.matchExpressions === undefined || meta.matchExpressions.length === 0))
  );
}

export type NamespaceLookup = (name: string) => StoredObject | undefined | Promise<StoredObject | undefined>;

/**
 * The labels the namespaceSelector is matched against: a Namespace being created or updated is judged by
 * the labels it is given; anything else by its namespace's (404 when that namespace does not exist).
 */
async function namespaceLabels(
  attrs: AdmissionAttributes,
  resource: string,
  subresource: string,
  lookup: NamespaceLookup,
): Promise<Record<string, string>> {
  if (
    resource === 'namespaces' &&
    subresource === '' &&
    (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')
  ) {
    return attrs.object?.metadata.labels ?? {};
  }
  const found = lookup(attrs.namespace);
  const ns = found instanceof Promise ? await found : found;
  if (!ns) throw newNotFound({ group: '', resource: 'namespaces' }, attrs.namespace);
  return ns.metadata.labels ?? {};
}

/** Whether the namespaceSelector lets the webhook see the request; cluster-scoped objects always match. */
export async function namespaceSelectorMatches(
  hook: Webhook,
  attrs: AdmissionAttributes,
  resource: string,
  subresource: string,
  lookup: NamespaceLookup,
): Promise<boolean> {
  if (attrs.namespace === '' && resource !== 'namespaces') return true;
  if (selectsEverything(hook.namespaceSelector)) return true;
  const labels = await namespaceLabels(attrs, resource, subresource, lookup);
  return selectorOf(hook.namespaceSelector)!.matches(labels);
}

/** The objectSelector matches when the new or the old object's labels match it. */
export function objectSelectorMatches(hook: Webhook, attrs: AdmissionAttributes): boolean {
  if (selectsEverything(hook.objectSelector)) return true;
  const selector = selectorOf(hook.objectSelector)!;
  const matches = (obj: StoredObject | undefined) =>
    obj !== undefined && selector.matches(obj.metadata.labels ?? {});
  return matches(attrs.object) || matches(attrs.oldObject);
}
