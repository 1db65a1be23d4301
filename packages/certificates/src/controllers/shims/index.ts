import { Controller, isDeletedFinalStateUnknown, type Request, type SharedInformer } from '@certkit/runtime';
import type { Certificate } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { hasShimAnnotation } from './annotation-keys.ts';
import { DEFAULT_ENABLED_CONTROLLERS } from '../enabled-controllers.ts';
import {
  type Gateway,
  gatewaysRef,
  ingressesRef,
  type IngressLike,
  leanGatewayTransform,
  leanIngressTransform,
  leanListenerSetTransform,
  type ListenerSet,
  listenerSetsRef,
} from './ingress-like.ts';
import { PARENT_GATEWAY_INDEX, parentGatewayKey, withGatewayAnnotations } from './listener-sets.ts';
import { DEFAULT_SHIM_OPTIONS, SHIM_CONTROLLERS, type ShimKind, type ShimOptions } from './options.ts';

/**
 * cert-manager's `ingress-shim`, `gateway-shim` and `listenerset` controllers: Certificates for annotated
 * Ingresses, Gateways and ListenerSets. What is registered here is small on purpose: an informer per kind (its
 * cache stripped to what the shim decides with, ingress-like.ts) and a controller whose reconcile loads the sync
 * code (the annotation parsing and the Certificate builder, with csv-parse) on its first call, so that an idle
 * controller on a cluster with no annotated Ingress pays for neither (docs/adr/1860, 1866).
 */

export { DEFAULT_SHIM_OPTIONS, SHIM_CONTROLLERS, type ShimOptions } from './options.ts';

type SyncModule = typeof import('./sync.ts');
let syncModule: Promise<SyncModule> | undefined;
const loadSync = () => (syncModule ??= import('./sync.ts'));

/** Where a shim controller's objects come from, and which of them it syncs. */
interface ShimSource {
  kind: ShimKind;
  informer: SharedInformer<IngressLike>;
  /** The object to sync for a queued key, as the sync reads it; undefined when there is nothing to do. */
  objectToSync(key: string): IngressLike | undefined;
  /** Whether a cached object asks for Certificates, so that its events queue it. */
  asksForCertificates(obj: IngressLike): boolean;
}

/** The Gateway informer, shared by the gateway-shim and the listenerset controller (one transform for both). */
function gatewayInformer(ctx: ControllerContext, options: ShimOptions): SharedInformer<Gateway> {
  return ctx.factory.informerFor<Gateway>(gatewaysRef, {
    namespace: ctx.options.namespace,
    transform: leanGatewayTransform(options),
  });
}

/** Ingresses and Gateways: each object is synced as cached, when it has the trigger annotations. */
function ownSource(ctx: ControllerContext, kind: 'Ingress' | 'Gateway', options: ShimOptions): ShimSource {
  const informer =
    kind === 'Gateway'
      ? gatewayInformer(ctx, options)
      : ctx.factory.informerFor<IngressLike>(ingressesRef, {
          namespace: ctx.options.namespace,
          transform: leanIngressTransform(options),
        });
  // --auto-certificate-annotations (kubernetes.io/tls-acme) apply to Ingresses only, as in cert-manager.
  const autoAnnotations = kind === 'Ingress' ? options.autoCertificateAnnotations : [];
  return {
    kind,
    informer,
    objectToSync: (key) => {
      const obj = informer.getStore().get(key);
      // Gone or going: its Certificates go with it through their owner reference (the garbage collector).
      return obj && !obj.metadata?.deletionTimestamp ? obj : undefined;
    },
    asksForCertificates: (obj) => hasShimAnnotation(obj.metadata?.annotations, autoAnnotations),
  };
}

/**
 * ListenerSets: synced with their Gateway's issuer annotations (listener-sets.ts), only while that Gateway
 * exists and is not being deleted. A change of a Gateway queues the ListenerSets attached to it, found through
 * an index of parents, as cert-manager's controller does.
 */
function listenerSetSource(ctx: ControllerContext, options: ShimOptions, queue: (obj: IngressLike) => void) {
  const gateways = gatewayInformer(ctx, options);
  const informer = ctx.factory.informerFor<ListenerSet>(listenerSetsRef, {
    namespace: ctx.options.namespace,
    transform: leanListenerSetTransform(options),
    indexers: {
      [PARENT_GATEWAY_INDEX]: (obj) => {
        const parent = parentGatewayKey(obj as ListenerSet);
        return parent ? [parent] : [];
      },
    },
  });
  const parentOf = (listenerSet: ListenerSet) => {
    const key = parentGatewayKey(listenerSet);
    return key === undefined ? undefined : gateways.getStore().get(key);
  };
  const source: ShimSource = {
    kind: 'ListenerSet',
    informer: informer as SharedInformer<IngressLike>,
    objectToSync: (key) => {
      const listenerSet = informer.getStore().get(key);
      if (!listenerSet || listenerSet.metadata?.deletionTimestamp) return undefined;
      const gateway = parentOf(listenerSet);
      if (!gateway || gateway.metadata?.deletionTimestamp) return undefined;
      return withGatewayAnnotations(listenerSet, gateway);
    },
    // Its own issuer annotation, or its Gateway's: the sync judges the two together.
    asksForCertificates: (obj) =>
      hasShimAnnotation(obj.metadata?.annotations, []) ||
      hasShimAnnotation(parentOf(obj as ListenerSet)?.metadata?.annotations, []),
  };
  const gatewayChanged = (gateway: Gateway) => {
    const key = `${gateway.metadata?.namespace}/${gateway.metadata?.name}`;
    for (const listenerSet of informer.getStore().byIndex(PARENT_GATEWAY_INDEX, key)) {
      if (source.asksForCertificates(listenerSet)) queue(listenerSet);
    }
  };
  gateways.addEventHandler({
    onAdd: gatewayChanged,
    onUpdate: (old, gateway) => {
      if (old.metadata?.resourceVersion !== gateway.metadata?.resourceVersion) gatewayChanged(gateway);
    },
  });
  return source;
}

function newShimController(ctx: ControllerContext, kind: ShimKind, options: ShimOptions): Controller {
  const name = SHIM_CONTROLLERS[kind];
  const recorder = ctx.recorder.from(name);
  // Set below, once the controller exists: the ListenerSet source queues into it on its Gateways' events.
  let source: ShimSource | undefined;

  async function reconcile(request: Request): Promise<void> {
    const obj = source!.objectToSync(`${request.namespace}/${request.name}`);
    if (!obj) return;
    const { syncIngressLike } = await loadSync();
    await syncIngressLike(
      {
        kind,
        certificates: ctx.certificates,
        certificateClient: ctx.certificateClient,
        recorder,
        options,
        log: ctx.log,
      },
      obj,
    );
  }

  const controller = new Controller({
    name,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    log: ctx.log,
  });
  const enqueue = (obj: IngressLike) =>
    controller.enqueue({ namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' });
  source = kind === 'ListenerSet' ? listenerSetSource(ctx, options, enqueue) : ownSource(ctx, kind, options);
  const { informer, asksForCertificates } = source;
  // Only objects that ask for Certificates are queued: a cluster's other Ingresses (most of them, often) would
  // otherwise each cost a reconcile at every start, and the first of those turns the optimizing compilers on
  // and loads the sync code (docs/adr/1133, 1860) for nothing. One whose annotation is removed is left as it
  // is, as cert-manager leaves it (its sync returns at once).
  informer.addEventHandler({
    onAdd: (obj) => {
      if (asksForCertificates(obj)) enqueue(obj);
    },
    onUpdate: (old, obj) => {
      // A resync of an unchanged object has nothing new for the shim.
      if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion && asksForCertificates(obj))
        enqueue(obj);
    },
  });
  // A Certificate the object controls changed or went: its controller checks it is still as it wants it (and
  // creates it again when it was deleted). The owner reference's kind is enough: its namespace is the
  // Certificate's.
  const ownerOf = (certificate: Certificate) => {
    const owner = certificate.metadata?.ownerReferences?.find((ref) => ref.controller === true);
    if (owner?.kind === kind)
      controller.enqueue({ namespace: certificate.metadata?.namespace, name: owner.name });
  };
  ctx.certificates.addEventHandler({
    onAdd: ownerOf,
    onUpdate: (_old, certificate) => ownerOf(certificate),
    onDelete: (certificate) => {
      const gone = isDeletedFinalStateUnknown(certificate) ? certificate.obj : certificate;
      if (gone) ownerOf(gone as Certificate);
    },
  });
  return controller;
}

/**
 * The shim controllers of a `--controllers` set (enabledControllers): `ingress-shim`, on by default,
 * `gateway-shim` and `listenerset`, which run only when the set names them (`--enable-gateway-api` adds the first,
 * with `--enable-gateway-api-listenerset` and the ListenerSets feature gate the second) and the caller has
 * checked that the cluster serves Gateways and ListenerSets (gateway-api.ts). No set: the default set, the ingress-shim alone.
 */
export function registerShimControllers(
  ctx: ControllerContext,
  controllers: ReadonlySet<string> | undefined,
  options: Partial<ShimOptions> = {},
): Controller[] {
  const resolved: ShimOptions = { ...DEFAULT_SHIM_OPTIONS };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  const enabled = (name: string) =>
    controllers === undefined ? DEFAULT_ENABLED_CONTROLLERS.includes(name) : controllers.has(name);
  const registered: Controller[] = [];
  for (const kind of ['Ingress', 'Gateway', 'ListenerSet'] as const) {
    if (enabled(SHIM_CONTROLLERS[kind])) registered.push(newShimController(ctx, kind, resolved));
  }
  return registered;
}
