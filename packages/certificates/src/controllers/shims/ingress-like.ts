import type { KubeObject } from '@certkit/apimachinery';
import type { ResourceRef, TransformFunc } from '@certkit/runtime';
import { hasShimAnnotation, isShimAnnotationKey, FOREGROUND_DELETION_FINALIZER } from './annotation-keys.ts';
import type { ShimKind, ShimOptions } from './options.ts';

/**
 * The objects the shims read Certificates from, as their caches keep them. A cluster may hold thousands of
 * Ingresses that never mention cert-manager, and each carries rules, backends, a status and often a
 * `last-applied-configuration` copy of itself: the caches keep of each only what the shim decides with, so the
 * controller's memory follows the Ingresses it manages, not the cluster's.
 */

export const ingressesRef: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingresses',
  kind: 'Ingress',
  namespaced: true,
};

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_API_VERSION = 'v1';

export const gatewaysRef: ResourceRef = {
  group: GATEWAY_API_GROUP,
  version: GATEWAY_API_VERSION,
  resource: 'gateways',
  kind: 'Gateway',
  namespaced: true,
};

export const SHIM_REFS: Record<ShimKind, ResourceRef> = { Ingress: ingressesRef, Gateway: gatewaysRef };

export interface IngressTLS {
  hosts?: string[];
  secretName?: string;
}

export interface Ingress extends KubeObject {
  spec?: { tls?: IngressTLS[] };
}

export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface GatewayListener {
  name: string;
  hostname?: string;
  protocol: string;
  tls?: { mode?: string; certificateRefs?: SecretObjectReference[] };
}

export interface Gateway extends KubeObject {
  spec?: { listeners?: GatewayListener[] };
}

export type IngressLike = Ingress | Gateway;

/** The metadata the shims use: identity (ownership is by uid), labels, annotations, deletion. */
function leanMetadata(
  obj: KubeObject,
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): KubeObject['metadata'] {
  const meta = obj.metadata ?? {};
  const lean: NonNullable<KubeObject['metadata']> = {
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
  };
  if (meta.deletionTimestamp) lean.deletionTimestamp = meta.deletionTimestamp;
  if (meta.finalizers?.includes(FOREGROUND_DELETION_FINALIZER))
    lean.finalizers = [FOREGROUND_DELETION_FINALIZER];
  if (meta.labels) lean.labels = meta.labels;
  if (meta.annotations) {
    const kept = Object.entries(meta.annotations).filter(([key]) => isShimAnnotationKey(key, options));
    if (kept.length > 0) lean.annotations = Object.fromEntries(kept);
  }
  return lean;
}

/**
 * The Ingress cache's transform: an Ingress that asks for no Certificate is kept as its identity alone (an
 * event still brings it back whole when an annotation is added); one that does keeps its labels, the
 * annotations the shim reads and `spec.tls`.
 */
export function leanIngressTransform(
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): TransformFunc {
  return (obj) => {
    const ingress = obj as Ingress;
    // List items come without apiVersion and kind; Events and owner references need them.
    const identity = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' };
    if (!hasShimAnnotation(ingress.metadata?.annotations, options.autoCertificateAnnotations)) {
      const { name, namespace, uid, resourceVersion } = ingress.metadata ?? {};
      return { ...identity, metadata: { name, namespace, uid, resourceVersion } };
    }
    const lean: Ingress = { ...identity, metadata: leanMetadata(ingress, options) };
    if (ingress.spec?.tls) lean.spec = { tls: ingress.spec.tls };
    return lean;
  };
}

/** The Gateway cache's transform: as for Ingresses, with each listener's name, hostname, protocol and TLS. */
export function leanGatewayTransform(
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): TransformFunc {
  return (obj) => {
    const gateway = obj as Gateway;
    const identity = { apiVersion: `${GATEWAY_API_GROUP}/${GATEWAY_API_VERSION}`, kind: 'Gateway' };
    if (!hasShimAnnotation(gateway.metadata?.annotations, [])) {
      const { name, namespace, uid, resourceVersion } = gateway.metadata ?? {};
      return { ...identity, metadata: { name, namespace, uid, resourceVersion } };
    }
    const lean: Gateway = { ...identity, metadata: leanMetadata(gateway, options) };
    const listeners = gateway.spec?.listeners;
    if (listeners) {
      lean.spec = {
        listeners: listeners.map(({ name, hostname, protocol, tls }) => {
          const listener: GatewayListener = { name, protocol };
          if (hostname !== undefined) listener.hostname = hostname;
          if (tls) listener.tls = { mode: tls.mode, certificateRefs: tls.certificateRefs };
          return listener;
        }),
      };
    }
    return lean;
  };
}
