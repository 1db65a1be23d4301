import { Controller, type Request, type Result } from '@certkit/runtime';
import type { CertificateRequest } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { ConditionType, isApproved, isDenied, readyReason, ReadyReason } from './conditions.ts';
import { StatusDraft } from './draft.ts';
import { signerRateLimiter } from './signer.ts';

/**
 * The built-in approver (cert-manager's certificaterequests-approver): with no policy engine installed,
 * every request is approved, so that signers, which wait for Approved=True, can proceed. Requests already
 * approved, denied, issued or failed are left alone: Approved and Denied are immutable once set, and the
 * status write carries the cached resourceVersion, so a denial made meanwhile is never overwritten.
 */

export const APPROVER_NAME = 'certificaterequests-approver';
export const APPROVED_REASON = 'cert-manager.io';
export const APPROVED_MESSAGE = 'Certificate request has been approved by cert-manager.io';

export function awaitsApproval(cr: CertificateRequest): boolean {
  const reason = readyReason(cr);
  return !isApproved(cr) && !isDenied(cr) && reason !== ReadyReason.Failed && reason !== ReadyReason.Issued;
}

export function newApproverController(ctx: ControllerContext): Controller {
  async function reconcile(request: Request): Promise<Result | void> {
    const cr = ctx.certificateRequests.getStore().get(`${request.namespace}/${request.name}`);
    if (!cr || cr.metadata?.deletionTimestamp || !awaitsApproval(cr)) return;
    const draft = new StatusDraft(ctx, cr);
    draft.setCondition(ConditionType.Approved, 'True', APPROVED_REASON, APPROVED_MESSAGE);
    draft.event('Normal', APPROVED_REASON, APPROVED_MESSAGE);
    // On a conflict the newer object's event re-enqueues the request, and it is judged afresh.
    if ((await draft.commit()) === 'conflict') return { requeueAfter: 200 };
  }

  const controller = new Controller({
    name: APPROVER_NAME,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: signerRateLimiter(),
    log: ctx.log,
  });
  const enqueue = (cr: CertificateRequest) => {
    if (awaitsApproval(cr))
      controller.enqueue({ namespace: cr.metadata?.namespace, name: cr.metadata?.name ?? '' });
  };
  ctx.certificateRequests.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cr) => enqueue(cr) });
  return controller;
}
