import type { KubeObject } from '@certkit/apimachinery';
import { builtins, type ResourceRef } from '@certkit/runtime';
import { SOURCE_ANNOTATIONS } from './sources.ts';

/**
 * The four kinds cainjector writes a caBundle into, each described by where its bundles are, how much of it the
 * cache keeps, and the server-side apply configuration that sets them: nothing but the caBundle fields (and
 * the keys that locate them), so that apply with force under `cert-manager-cainjector` takes those fields and
 * no other.
 */
export interface Injectable {
  /** cainjector's name for it: its controller's name, the `--enable-<name>s-injectable` flag's. */
  name: InjectableName;
  ref: ResourceRef;
  apiVersion: string;
  /** The object as the cache keeps it: name, version, the source annotations, the bundles' locations. */
  strip(obj: KubeObject): KubeObject;
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

/** Only what decides and locates injection: a target without a source annotation keeps its name alone. */
function strippedMetadata(obj: KubeObject): { metadata: Loose; annotated: boolean } {
  const { name, uid, resourceVersion, deletionTimestamp, annotations } = obj.metadata ?? {};
  const kept: Record<string, string> = {};
  for (const key of SOURCE_ANNOTATIONS) if (annotations?.[key] !== undefined) kept[key] = annotations[key];
  const annotated = Object.keys(kept).length > 0;
  return {
    metadata: {
      name,
      uid,
      resourceVersion,
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      ...(annotated ? { annotations: kept } : {}),
    },
    annotated,
  };
}

function webhookConfiguration(kind: string, name: InjectableName, ref: ResourceRef): Injectable {
  const apiVersion = 'admissionregistration.k8s.io/v1';
  const webhooks = (obj: KubeObject): Loose[] => ((obj as Loose).webhooks as Loose[] | undefined) ?? [];
  return {
    name,
    ref,
    apiVersion,
    strip(obj) {
      const { metadata, annotated } = strippedMetadata(obj);
      if (!annotated) return { apiVersion, kind, metadata };
      return {
        apiVersion,
        kind,
        metadata,
        webhooks: webhooks(obj).map((w) => ({
          name: w.name,
          clientConfig: w.clientConfig?.caBundle ? { caBundle: w.clientConfig.caBundle } : {},
        })),
      } as KubeObject;
    },
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
  strip(obj) {
    const { metadata, annotated } = strippedMetadata(obj);
    const conversion = (obj as Loose).spec?.conversion;
    const kept = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata,
    } as Loose;
    if (annotated && conversion?.strategy === 'Webhook') {
      const caBundle = conversion.webhook?.clientConfig?.caBundle;
      kept.spec = {
        conversion: { strategy: 'Webhook', webhook: { clientConfig: caBundle ? { caBundle } : {} } },
      };
    }
    return kept as KubeObject;
  },
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
  strip(obj) {
    const { metadata, annotated } = strippedMetadata(obj);
    const caBundle = (obj as Loose).spec?.caBundle;
    return {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata,
      ...(annotated ? { spec: caBundle ? { caBundle } : {} } : {}),
    } as KubeObject;
  },
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
