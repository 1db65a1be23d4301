import type { KubeObject } from '@certkit/apimachinery';
import type { ResourceRef, TransformFunc } from '@certkit/runtime';
import { Annotations } from '../../api/constants.ts';
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

/** ListenerSet: more listeners for a Gateway, in Gateway API's standard channel since v1.5. */
export const listenerSetsRef: ResourceRef = {
  group: GATEWAY_API_GROUP,
  version: GATEWAY_API_VERSION,
  resource: 'listenersets',
  kind: 'ListenerSet',
  namespaced: true,
};

export const SHIM_REFS: Record<ShimKind, ResourceRef> = {
  Ingress: ingressesRef,
  Gateway: gatewaysRef,
  ListenerSet: listenerSetsRef,
};

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

/** A ListenerSet's Gateway (the CRD defaults group and kind; an empty namespace is the ListenerSet's own). */
export interface ParentGatewayReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

/** A ListenerSet's listeners are Gateway listeners (its ListenerEntry has the same fields the shims read). */
export interface ListenerSet extends KubeObject {
  spec?: { parentRef?: ParentGatewayReference; listeners?: GatewayListener[] };
}

export type IngressLike = Ingress | Gateway | ListenerSet;

/** The listeners of a Gateway or ListenerSet: where both keep the TLS settings the shims read. */
export function listenersOf(obj: Gateway | ListenerSet): GatewayListener[] {
  return obj.spec?.listeners ?? [];
}

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

/** Of each listener, what the shims read: name, hostname, protocol and TLS (not its port or allowed routes). */
function leanListeners(listeners: GatewayListener[]): GatewayListener[] {
  return listeners.map(({ name, hostname, protocol, tls }) => {
    const listener: GatewayListener = { name, protocol };
    if (hostname !== undefined) listener.hostname = hostname;
    if (tls) listener.tls = { mode: tls.mode, certificateRefs: tls.certificateRefs };
    return listener;
  });
}

/**
 * What a ListenerSet takes from its Gateway when the Gateway itself asks for nothing (listenerset.ts): the
 * issuer's kind and group. Kept in the Gateway's stub, with its deletion mark, so that the listenerset controller
 * reads its parents from the gateway-shim's cache.
 */
const INHERITED_BY_LISTENER_SETS = [Annotations.issuerKind, Annotations.issuerGroup];

/**
 * The Gateway cache's transform: as for Ingresses, with each listener's name, hostname, protocol and TLS. A
 * Gateway that asks for nothing keeps, besides its identity, what its ListenerSets inherit from it.
 */
export function leanGatewayTransform(
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): TransformFunc {
  return (obj) => {
    const gateway = obj as Gateway;
    const identity = { apiVersion: `${GATEWAY_API_GROUP}/${GATEWAY_API_VERSION}`, kind: 'Gateway' };
    const annotations = gateway.metadata?.annotations;
    if (!hasShimAnnotation(annotations, [])) {
      const { name, namespace, uid, resourceVersion, deletionTimestamp } = gateway.metadata ?? {};
      const stub: Gateway = { ...identity, metadata: { name, namespace, uid, resourceVersion } };
      if (deletionTimestamp) stub.metadata!.deletionTimestamp = deletionTimestamp;
      const inherited = INHERITED_BY_LISTENER_SETS.filter((key) => annotations?.[key] !== undefined);
      if (inherited.length > 0)
        stub.metadata!.annotations = Object.fromEntries(inherited.map((key) => [key, annotations![key]]));
      return stub;
    }
    const lean: Gateway = { ...identity, metadata: leanMetadata(gateway, options) };
    if (gateway.spec?.listeners) lean.spec = { listeners: leanListeners(gateway.spec.listeners) };
    return lean;
  };
}

/**
 * The ListenerSet cache's transform. A ListenerSet asks for Certificates through its own annotations or its
 * Gateway's, so each keeps its parent reference and listeners whether it is annotated or not; ListenerSets are
 * few (one per team or tenant of a Gateway), and the status, ports and allowed routes are dropped.
 */
export function leanListenerSetTransform(
  options: Pick<ShimOptions, 'autoCertificateAnnotations' | 'extraCertificateAnnotations'>,
): TransformFunc {
  return (obj) => {
    const listenerSet = obj as ListenerSet;
    const lean: ListenerSet = {
      apiVersion: `${GATEWAY_API_GROUP}/${GATEWAY_API_VERSION}`,
      kind: 'ListenerSet',
      metadata: leanMetadata(listenerSet, options),
    };
    const { parentRef, listeners } = listenerSet.spec ?? {};
    if (parentRef || listeners) {
      lean.spec = {};
      if (parentRef) lean.spec.parentRef = parentRef;
      if (listeners) lean.spec.listeners = leanListeners(listeners);
    }
    return lean;
  };
}
