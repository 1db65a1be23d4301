import { Controller, isDeletedFinalStateUnknown, type Request } from '@certkit/runtime';
import type { Certificate } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { hasShimAnnotation } from './annotation-keys.ts';
import { DEFAULT_ENABLED_CONTROLLERS } from '../enabled-controllers.ts';
import { leanGatewayTransform, leanIngressTransform, type IngressLike, SHIM_REFS } from './ingress-like.ts';
import { DEFAULT_SHIM_OPTIONS, SHIM_CONTROLLERS, type ShimKind, type ShimOptions } from './options.ts';

/**
 * cert-manager's `ingress-shim` and `gateway-shim` controllers: Certificates for annotated Ingresses and
 * Gateways. What is registered here is small on purpose: an informer per kind (its cache stripped to what
 * the shim decides with, ingress-like.ts) and a controller whose reconcile loads the sync code (the annotation
 * parsing and the Certificate builder, with csv-parse) on its first call, so that an idle controller on a
 * cluster with no annotated Ingress pays for neither (docs/adr/1860).
 */

export { DEFAULT_SHIM_OPTIONS, SHIM_CONTROLLERS, type ShimOptions } from './options.ts';

type SyncModule = typeof import('./sync.ts');
let syncModule: Promise<SyncModule> | undefined;
const loadSync = () => (syncModule ??= import('./sync.ts'));

function newShimController(ctx: ControllerContext, kind: ShimKind, options: ShimOptions): Controller {
  const name = SHIM_CONTROLLERS[kind];
  const transform = kind === 'Ingress' ? leanIngressTransform(options) : leanGatewayTransform(options);
  const informer = ctx.factory.informerFor<IngressLike>(SHIM_REFS[kind], {
    namespace: ctx.options.namespace,
    transform,
  });
  const recorder = ctx.recorder.from(name);

  async function reconcile(request: Request): Promise<void> {
    const obj = informer.getStore().get(`${request.namespace}/${request.name}`);
    // Gone or going: its Certificates go with it through their owner reference (the garbage collector).
    if (!obj || obj.metadata?.deletionTimestamp) return;
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
  // Only objects that ask for Certificates are queued: a cluster's other Ingresses (most of them, often) would
  // otherwise each cost a reconcile at every start, and the first of those turns the optimizing compilers on
  // and loads the sync code (docs/adr/1133, 1860) for nothing. One whose annotation is removed is left as it
  // is, as cert-manager leaves it (its sync returns at once).
  const autoAnnotations = kind === 'Ingress' ? options.autoCertificateAnnotations : [];
  const asksForCertificates = (obj: IngressLike) =>
    hasShimAnnotation(obj.metadata?.annotations, autoAnnotations);
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
 * The shim controllers of a `--controllers` set (enabledControllers): `ingress-shim`, on by default, and
 * `gateway-shim`, which runs only when the set names it (`--enable-gateway-api` adds it) and the caller has
 * checked that the cluster serves Gateways (gateway-api.ts). No set: the default set, the ingress-shim alone.
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
  for (const kind of ['Ingress', 'Gateway'] as const) {
    if (enabled(SHIM_CONTROLLERS[kind])) registered.push(newShimController(ctx, kind, resolved));
  }
  return registered;
}
