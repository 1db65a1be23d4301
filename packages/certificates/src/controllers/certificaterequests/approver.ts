import { Controller, isDeletedFinalStateUnknown, type Request, type Result } from '@certkit/runtime';
import type { CertificateRequest } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { issuerType } from '../issuers/generic.ts';
import { ConditionType, isApproved, isDenied, readyReason, ReadyReason } from './conditions.ts';
import { StatusDraft } from './draft.ts';
import { lookupIssuer } from './issuer-ref.ts';
import { signerRateLimiter } from './signer.ts';
import { SignerApproval } from './signer-approval.ts';

/**
 * The built-in approver (cert-manager's certificaterequests-approver): with no policy engine installed,
 * every request is approved, so that signers, which wait for Approved=True, can proceed. Requests already
 * approved, denied, issued or failed are left alone: Approved and Denied are immutable once set, and every
 * status write carries the cached resourceVersion, so a denial made meanwhile is never overwritten.
 *
 * A request one of certkit's signers will answer (SelfSigned and CA issuers, and missing or untyped issuers,
 * which the reporting signer records) is handed over instead of approved here: the signer writes the Approved
 * condition and its own outcome in one status update, where cert-manager makes two. Every observer sees the
 * same conditions and events; the API server sees one write and one watch event fewer per issuance. While
 * the approver is not running, nothing is handed over and the signers keep waiting, as in cert-manager.
 */

export const APPROVER_NAME = 'certificaterequests-approver';
export const APPROVED_REASON = 'cert-manager.io';
export const APPROVED_MESSAGE = 'Certificate request has been approved by cert-manager.io';

/** How long a handed-over request may stay unapproved before the approver looks at it again. */
export const HAND_OFF_RECHECK_MS = 10_000;

/** How often a request for an external issuer this controller may not approve for is looked at again. */
export const NOT_PERMITTED_RECHECK_MS = 60_000;

export function awaitsApproval(cr: CertificateRequest): boolean {
  const reason = readyReason(cr);
  return !isApproved(cr) && !isDenied(cr) && reason !== ReadyReason.Failed && reason !== ReadyReason.Issued;
}

/** The approval as the approver writes it, on a draft of any controller's status write. */
export function approve(draft: StatusDraft): void {
  draft.setCondition(ConditionType.Approved, 'True', APPROVED_REASON, APPROVED_MESSAGE);
  draft.event('Normal', APPROVED_REASON, APPROVED_MESSAGE, APPROVER_NAME);
}

/** The requests the approver left for a signer to approve, by uid, and the signers to wake for them. */
export class ApprovalHandOff {
  /**
   * Whether the approver runs in this process. Without it (`--controllers=*,-certificaterequests-approver`,
   * another approval controller such as approver-policy decides) the signers say why they wait.
   */
  approverRunning = false;
  readonly #uids = new Set<string>();
  readonly #signers: ((cr: CertificateRequest) => void)[] = [];
  #settled: (cr: CertificateRequest) => void = () => {};

  /** Registers a signer's enqueue, called for every request handed over. */
  onHandOff(enqueue: (cr: CertificateRequest) => void): void {
    this.#signers.push(enqueue);
  }

  handOver(cr: CertificateRequest): void {
    this.#uids.add(cr.metadata?.uid ?? '');
    for (const enqueue of this.#signers) enqueue(cr);
  }

  /** Whether the signer should approve `cr` along with its outcome. */
  isHandedOver(cr: CertificateRequest): boolean {
    return this.#uids.has(cr.metadata?.uid ?? '') && awaitsApproval(cr);
  }

  /** Registers the approver's callback for a request whose approval was written, or which is gone. */
  onSettled(settled: (cr: CertificateRequest) => void): void {
    this.#settled = settled;
  }

  /** The approval was written, or the request is gone. */
  forget(cr: CertificateRequest): void {
    this.#uids.delete(cr.metadata?.uid ?? '');
    this.#settled(cr);
  }
}

/** Whether one of certkit's signers writes a status for this request (and so can carry its approval). */
function answeredBySigner(ctx: ControllerContext, cr: CertificateRequest): boolean {
  const lookup = lookupIssuer(ctx, cr);
  if ('foreign' in lookup) return false;
  if ('missing' in lookup) return true;
  const type = issuerType(lookup.handle.issuer.spec);
  return type === undefined || type === 'selfsigned' || type === 'ca';
}

export function newApproverController(ctx: ControllerContext, handOff: ApprovalHandOff): Controller {
  handOff.approverRunning = true;
  const signers = new SignerApproval(ctx.client, () => ctx.now().getTime());
  async function reconcile(request: Request): Promise<Result | void> {
    const cr = ctx.certificateRequests.getStore().get(`${request.namespace}/${request.name}`);
    if (!cr || cr.metadata?.deletionTimestamp || !awaitsApproval(cr)) return;
    if (answeredBySigner(ctx, cr)) {
      handOff.handOver(cr);
      // Looked at again later: should the issuer change meanwhile to a kind no signer here answers (say,
      // from CA to ACME), nothing would write the approval, and the request needs this approver after all.
      return { requeueAfter: HAND_OFF_RECHECK_MS };
    }
    // Another group's issuer: approved only where RBAC grants it, as cert-manager's webhook decides
    // (signer-approval.ts); otherwise left for a policy engine, and looked at again in case of a new grant.
    if ('foreign' in lookupIssuer(ctx, cr) && !(await signers.mayApprove(cr))) {
      ctx.log({
        level: 'debug',
        msg: 'not permitted to approve for this issuer: left for another approver',
        namespace: request.namespace,
        name: request.name,
      });
      return { requeueAfter: NOT_PERMITTED_RECHECK_MS };
    }
    const draft = new StatusDraft(ctx, APPROVER_NAME, cr);
    approve(draft);
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
  // The recheck after a hand-off has nothing left to guard once the signer wrote the approval: dropped, so
  // that a burst of issuances does not trail a no-op reconcile per request for 10 s (which kept the
  // manager's burst watch from seeing the burst end; docs/adr/1141).
  handOff.onSettled((cr) =>
    controller.cancelEnqueueAfter({ namespace: cr.metadata?.namespace, name: cr.metadata?.name ?? '' }),
  );
  ctx.certificateRequests.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, cr) => enqueue(cr),
    onDelete: (cr) => {
      const last = isDeletedFinalStateUnknown(cr) ? cr.obj : cr;
      if (last) handOff.forget(last);
    },
  });
  return controller;
}
