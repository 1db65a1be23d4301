import { isConflict, isNotFound, jsonEqual } from '@certkit/apimachinery';
import {
  Controller,
  ItemExponentialFailureRateLimiter,
  keyFor,
  type Request,
  type Result,
} from '@certkit/runtime';
import { ACME_API_VERSION, AcmeKinds } from '../../../api/acme-constants.ts';
import type { Challenge, GenericIssuer, Order } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { isIssuerReady } from '../../issuers/conditions.ts';
import { issuerInformer, type IssuerKind } from '../../issuers/generic.ts';
import { AcmeIssuerUnavailable, lookupAcmeIssuer } from '../issuer.ts';
import { isFailureState, OrderSync, ownedChallenges } from './sync.ts';

/**
 * The Orders controller (cert-manager's `orders` controller): runs OrderSync for each Order and writes its
 * status subresource. Orders come back on their own events, on their Challenges' events, and when their
 * issuer becomes Ready (its ACME client is only there then).
 */

export const ORDERS_CONTROLLER = 'orders';

/** cert-manager's DefaultACMERateLimiter: 5 s doubling to 30 min. */
export const acmeRateLimiter = () => new ItemExponentialFailureRateLimiter<string>(5_000, 30 * 60_000);

export function newOrdersController(ctx: ControllerContext): Controller {
  /**
   * The resourceVersion each Order had when this controller last wrote its status, until the cache shows the
   * write. A sync on the older copy would ask the ACME server again what the write already recorded, and its
   * own write would only meet a conflict; the write's watch event brings the Order back anyway.
   */
  const replaced = new Map<string, string>();

  async function reconcile(request: Request): Promise<Result | void> {
    const key = keyFor(request.namespace, request.name);
    const order = ctx.orders.getStore().get(key);
    const stale = replaced.get(key);
    if (stale !== undefined) {
      if (order && order.metadata.resourceVersion === stale) return;
      replaced.delete(key);
    }
    if (!order || order.metadata.deletionTimestamp) return;
    if (isFailureState(order.status?.state)) return;
    if (order.status?.state === 'valid' && order.status.certificate && !ownedChallenges(ctx, order).length)
      return;
    let issuer;
    try {
      issuer = lookupAcmeIssuer(ctx, order.metadata.namespace!, order.spec.issuerRef);
    } catch (err) {
      if (err instanceof AcmeIssuerUnavailable) {
        ctx.log({ level: 'debug', msg: err.message, controller: ORDERS_CONTROLLER, name: request.name });
        return { requeue: true };
      }
      throw err;
    }
    const outcome = await new OrderSync(ctx, order, issuer).run();
    if (!jsonEqual(order.status ?? {}, outcome.status)) {
      try {
        const written = await ctx.orderClient.update(
          { ...order, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Order, status: outcome.status },
          { subresource: 'status' },
        );
        // Only a write that made a new version brings an event (a no-op one would leave the Order waiting).
        const before = order.metadata.resourceVersion;
        if (before && written.metadata.resourceVersion !== before) replaced.set(key, before);
      } catch (err) {
        // The newer Order's event brings it back; a deleted one needs nothing more.
        if (isConflict(err)) return { requeueAfter: 200 };
        if (isNotFound(err)) return;
        throw err;
      }
    }
    const involved = { ...order, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Order };
    for (const e of outcome.events) {
      if (e.type === 'Warning') ctx.recorder.from(ORDERS_CONTROLLER).warning(involved, e.reason, e.message);
      else ctx.recorder.from(ORDERS_CONTROLLER).normal(involved, e.reason, e.message);
    }
    return outcome.result;
  }

  const controller = new Controller({
    name: ORDERS_CONTROLLER,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: acmeRateLimiter(),
    log: ctx.log,
  });
  const enqueue = (order: Order) =>
    controller.enqueue({ namespace: order.metadata.namespace, name: order.metadata.name ?? '' });

  ctx.orders.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, order) => enqueue(order),
    onDelete: (order) => {
      const gone = 'metadata' in order ? order : order.obj;
      if (gone) replaced.delete(keyFor(gone.metadata.namespace, gone.metadata.name ?? ''));
    },
  });
  const wakeOwner = (ch: Challenge) => {
    const owner = (ch.metadata.ownerReferences ?? []).find(
      (r) => r.controller === true && r.kind === AcmeKinds.Order,
    );
    if (owner) controller.enqueue({ namespace: ch.metadata.namespace, name: owner.name });
  };
  ctx.challenges.addEventHandler({
    onAdd: wakeOwner,
    // Of a Challenge, an Order sync reads its state and whether it is being deleted: other updates
    // (processing, presented, the finalizer) would only bring it back for nothing.
    onUpdate: (old, ch) => {
      if (
        old.status?.state !== ch.status?.state ||
        old.metadata.deletionTimestamp !== ch.metadata.deletionTimestamp
      ) {
        wakeOwner(ch);
      }
    },
    onDelete: (ch) => {
      if ('metadata' in ch) wakeOwner(ch);
      else if (ch.obj) wakeOwner(ch.obj);
    },
  });
  for (const kind of ['Issuer', 'ClusterIssuer'] as const) watchIssuer(ctx, kind, enqueue);
  return controller;
}

/** An ACME issuer turning Ready brings back its Orders that were waiting for its account. */
function watchIssuer(ctx: ControllerContext, kind: IssuerKind, enqueue: (order: Order) => void): void {
  const wake = (issuer: GenericIssuer) => {
    if (!issuer.spec?.acme || !isIssuerReady(issuer)) return;
    for (const order of ctx.orders.getStore().list()) {
      const ref = order.spec.issuerRef;
      const refKind = ref.kind || 'Issuer';
      if (refKind !== kind || ref.name !== issuer.metadata?.name) continue;
      if (kind === 'Issuer' && order.metadata.namespace !== issuer.metadata?.namespace) continue;
      if (!isFailureState(order.status?.state)) enqueue(order);
    }
  };
  issuerInformer(ctx, kind).addEventHandler({
    onAdd: wake,
    onUpdate: (old, issuer) => {
      if (isIssuerReady(old) !== isIssuerReady(issuer)) wake(issuer);
    },
  });
}
