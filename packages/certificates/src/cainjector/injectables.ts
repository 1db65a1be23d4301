import type { KubeObject } from '@certkit/apimachinery';
import { builtins, type ResourceRef } from '@certkit/runtime';
import { SOURCE_ANNOTATIONS } from './sources.ts';

/**
 * The four kinds cainjector writes a caBundle into, each described by where its bundles are and the server-side
 * apply configuration that sets them: nothing but the caBundle fields (and the keys that locate them), so that
 * apply with force under `cert-manager-cainjector` takes those fields and no other. `bundles` and
 * `applyConfiguration` read the object as a GET returns it; the cache holds targets as metadata only
 * (`stripTarget`).
 */
export interface Injectable {
  /** cainjector's name for it: its controller's name, the `--enable-<name>s-injectable` flag's. */
  name: InjectableName;
  ref: ResourceRef;
  apiVersion: string;
  /** The caBundle (base64, as the API carries it) of each place a bundle goes; none when it takes none. */
  bundles(obj: KubeObject): (string | undefined)[];
  /** The apply configuration writing `bundles` (one per place, in the order of `bundles(obj)`). */
  applyConfiguration(obj: KubeObject, bundles: string[]): KubeObject;
}

export type InjectableName =
  | 'validatingwebhookconfiguration'
  | 'mutatingwebhookconfiguration'
  | 'customresourcedefinition'
  | 'apiservice';

type Loose = Record<string, any>;

/**
 * A target as the cache keeps it (it is watched as PartialObjectMetadata): name, uid, version, deletion, and
 * only the source annotations, so that a CRD's `last-applied-configuration` copy of its schemas is not held.
 */
export function stripTarget(obj: KubeObject): KubeObject {
  const { name, uid, resourceVersion, deletionTimestamp, annotations } = obj.metadata ?? {};
  const kept: Record<string, string> = {};
  for (const key of SOURCE_ANNOTATIONS) if (annotations?.[key] !== undefined) kept[key] = annotations[key];
  return {
    metadata: {
      name,
      uid,
      resourceVersion,
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      ...(Object.keys(kept).length > 0 ? { annotations: kept } : {}),
    },
  };
}

function webhookConfiguration(kind: string, name: InjectableName, ref: ResourceRef): Injectable {
  const apiVersion = 'admissionregistration.k8s.io/v1';
  const webhooks = (obj: KubeObject): Loose[] => ((obj as Loose).webhooks as Loose[] | undefined) ?? [];
  return {
    name,
    ref,
    apiVersion,
    bundles: (obj) => webhooks(obj).map((w) => w.clientConfig?.caBundle as string | undefined),
    applyConfiguration: (obj, bundles) =>
      ({
        apiVersion,
        kind,
        metadata: { name: obj.metadata?.name },
        // A list keyed by name (patchMergeKey on the Go type): each entry names the webhook it sets.
        webhooks: webhooks(obj).map((w, i) => ({ name: w.name, clientConfig: { caBundle: bundles[i] } })),
      }) as KubeObject,
  };
}

const customResourceDefinition: Injectable = {
  name: 'customresourcedefinition',
  ref: builtins.customResourceDefinitions,
  apiVersion: 'apiextensions.k8s.io/v1',
  // Only a conversion webhook takes a bundle; a CRD converting with None has nowhere to put one.
  bundles: (obj) => {
    const conversion = (obj as Loose).spec?.conversion;
    return conversion?.strategy === 'Webhook' ? [conversion.webhook?.clientConfig?.caBundle] : [];
  },
  applyConfiguration: (obj, bundles) =>
    ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: obj.metadata?.name },
      spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { caBundle: bundles[0] } } } },
    }) as KubeObject,
};

const apiServicesRef: ResourceRef = {
  group: 'apiregistration.k8s.io',
  version: 'v1',
  resource: 'apiservices',
  kind: 'APIService',
  namespaced: false,
};

const apiService: Injectable = {
  name: 'apiservice',
  ref: apiServicesRef,
  apiVersion: 'apiregistration.k8s.io/v1',
  bundles: (obj) => [(obj as Loose).spec?.caBundle],
  applyConfiguration: (obj, bundles) =>
    ({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: obj.metadata?.name },
      spec: { caBundle: bundles[0] },
    }) as KubeObject,
};

const admissionRef = (resource: string, kind: string): ResourceRef => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource,
  kind,
  namespaced: false,
});

/** Every injectable kind, in cainjector's order. */
export const INJECTABLES: readonly Injectable[] = [
  webhookConfiguration(
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfiguration',
    admissionRef('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration'),
  ),
  webhookConfiguration(
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfiguration',
    admissionRef('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'),
  ),
  customResourceDefinition,
  apiService,
];
