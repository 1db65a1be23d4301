import { Annotations } from '../../api/constants.ts';
import type { Gateway, ListenerSet } from './ingress-like.ts';

/**
 * What the listenerset controller adds to the shims: a ListenerSet is one more source of Gateway listeners, read
 * as the gateway-shim reads a Gateway's, but it belongs to a Gateway (its `spec.parentRef`), which must exist
 * and not be going away, and whose issuer annotations it falls back on (cert-manager's listenerset controller).
 */

/** The ListenerSet cache's index of parents: `namespace/name` of the Gateway each ListenerSet attaches to. */
export const PARENT_GATEWAY_INDEX = 'cert-manager.io/parent-gateway';

/**
 * The store key of the ListenerSet's Gateway: its parentRef's name, in the parentRef's namespace or else the
 * ListenerSet's own. Undefined without a name (the CRD requires one; a stub has none). The reference's group and
 * kind are not read, as in cert-manager: the CRD defaults them to the Gateway's.
 */
export function parentGatewayKey(listenerSet: ListenerSet): string | undefined {
  const ref = listenerSet.spec?.parentRef;
  if (!ref?.name) return undefined;
  return `${ref.namespace || listenerSet.metadata?.namespace}/${ref.name}`;
}

/**
 * The ListenerSet as its Certificates are built from: with the Gateway's `issuer` and `cluster-issuer` when it
 * names neither itself, and always the Gateway's `issuer-kind` and `issuer-group` when the Gateway has them
 * (cert-manager's `inheritAnnotations`, order and precedence included). The cached object is not changed.
 */
export function withGatewayAnnotations(listenerSet: ListenerSet, gateway: Gateway): ListenerSet {
  const parent = gateway.metadata?.annotations;
  if (!parent) return listenerSet;
  const own = listenerSet.metadata?.annotations ?? {};
  const annotations = { ...own };
  if (!(Annotations.issuer in own) && !(Annotations.clusterIssuer in own)) {
    if (parent[Annotations.clusterIssuer] !== undefined)
      annotations[Annotations.clusterIssuer] = parent[Annotations.clusterIssuer];
    if (parent[Annotations.issuer] !== undefined)
      annotations[Annotations.issuer] = parent[Annotations.issuer];
  }
  for (const key of [Annotations.issuerKind, Annotations.issuerGroup]) {
    if (parent[key] !== undefined) annotations[key] = parent[key];
  }
  return { ...listenerSet, metadata: { ...listenerSet.metadata, annotations } };
}
