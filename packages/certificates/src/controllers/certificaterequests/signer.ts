import {
  Controller,
  deletionHandlingKey,
  isDeletedFinalStateUnknown,
  ItemExponentialFailureRateLimiter,
  type Request,
  type Result,
} from '@certkit/runtime';
import type { CertificateRequest, GenericIssuer } from '../../api/types.ts';
import { SigningError, type DecodedCertificate } from '../../pki/index.ts';
import type { ControllerContext } from '../context.ts';
import { isIssuerReady } from '../issuers/conditions.ts';
import { STALE_RETRY_MS, StaleReads } from '../issuers/stale-reads.ts';
import { parsedCertificatePem, rememberSignedCertificate } from '../parsed.ts';
import {
  issuerInformer,
  issuerType,
  type IssuerHandle,
  type IssuerKind,
  type IssuerType,
} from '../issuers/generic.ts';
import { isApproved, isDenied, isFinal, isInvalidRequest, readyReason, ReadyReason } from './conditions.ts';
import { approve, type ApprovalHandOff } from './approver.ts';
import { StatusDraft } from './draft.ts';
import { lookupIssuer, requestsForIssuer, type IssuerLookup } from './issuer-ref.ts';
import { specProblem } from './request.ts';

/**
 * The part every in-tree signer shares (cert-manager's certificaterequests.Controller and its Sync): find the
 * request's issuer, wait for approval and for the issuer to be Ready, call the issuer-specific `sign`, and
 * record the outcome as conditions and events. Each signer is its own runtime Controller, named as
 * cert-manager names it (`certificaterequests-issuer-<type>`).
 */

export type SignOutcome =
  /** `leaf`: the certificate just signed here, decoded (signCertificate's), so it is not parsed again. */
  | { issued: { certPem: string; caPem: string; leaf?: DecodedCertificate } }
  /**
   * Ready=False/Pending; retried with backoff, and sooner on the events that may resolve it. `wakeOnEvent`:
   * not retried at all, because an event the signer watches (`watch`) is certain to bring the request back.
   */
  | { pending: { reason: string; message: string; wakeOnEvent?: boolean } }
  /** Ready=False/Failed, for good; `invalidRequest` also sets InvalidRequest=True. */
  | { failed: { reason: string; message: string; invalidRequest?: boolean } };

export interface Signer {
  type: Extract<IssuerType, 'selfsigned' | 'ca' | 'acme'>;
  /** Signs, or says why not. Events beyond the outcome (BadConfig warnings) go on the draft. */
  sign(draft: StatusDraft, handle: IssuerHandle): Promise<SignOutcome>;
  /**
   * Extra event sources that should bring requests back (the SelfSigned private key Secret). `enqueue` queues
   * a request only if this signer may act on it (its issuer type), as for request events.
   */
  watch?(ctx: ControllerContext, enqueue: (cr: CertificateRequest) => void): void;
}

export interface SignerControllerOptions {
  /**
   * Whether this controller reports requests whose issuer is missing or has no type. Every cert-manager
   * signer does; here exactly one does, so two signers never race to write the same Pending condition.
   */
  reportIssuerProblems: boolean;
}

export const WAITING_FOR_APPROVAL = 'WaitingForApproval';
export const WAITING_FOR_APPROVAL_MESSAGE = 'Not signing CertificateRequest until it is Approved';

/** cert-manager's name of the signer of an issuer type: `certificaterequests-issuer-<type>`. */
export const signerControllerName = (type: Signer['type']) => `certificaterequests-issuer-${type}`;

/** cert-manager's DefaultItemBasedRateLimiter: 5 s doubling to 5 min. */
export const signerRateLimiter = () => new ItemExponentialFailureRateLimiter<string>(5_000, 5 * 60_000);

const RETRY: Result = { requeue: true };

/** The SigningError of pki as a signer outcome, with cert-manager's reasons for `type`. */
export function signingFailure(type: 'selfsigned' | 'ca', err: unknown): SignOutcome {
  const message = (err as Error).message ?? String(err);
  if (err instanceof SigningError && err.reason === 'InvalidRequest') {
    const reason = type === 'ca' ? 'SigningError' : 'ErrorGenerating';
    // cert-manager's reporter.Failed, without InvalidRequest: no in-tree signer of cert-manager sets that
    // condition, and the Certificate's Issuing=False takes its reason from it (Failed, not SigningError).
    return { failed: { reason, message: `Error generating certificate template: ${message}` } };
  }
  if (err instanceof SigningError && err.reason === 'KeyMismatch') {
    return {
      failed: { reason: 'ErrorKeyMatch', message: `Error generating certificate template: ${message}` },
    };
  }
  const reason = type === 'ca' ? 'SigningError' : 'ErrorSigning';
  return { failed: { reason, message: `Error signing certificate: ${message}` } };
}

/** Not final yet, or denied without the Ready=False/Denied that records it. */
export function needsWork(cr: CertificateRequest): boolean {
  return !isFinal(cr) || (isDenied(cr) && readyReason(cr) !== ReadyReason.Denied);
}

export function newSignerController(
  ctx: ControllerContext,
  signer: Signer,
  handOff: ApprovalHandOff,
  options: SignerControllerOptions,
): Controller {
  const name = signerControllerName(signer.type);

  /**
   * The signer whose type the issuer has handles the request; requests no in-tree signer would take (issuer
   * missing, untyped, or of a type certkit does not sign for) go to the reporting signer, so that denials and
   * missing issuers are still recorded, and recorded once.
   */
  function owns(lookup: IssuerLookup): boolean {
    const type = 'handle' in lookup ? issuerType(lookup.handle.issuer.spec) : undefined;
    if (type === signer.type) return true;
    if (type === 'selfsigned' || type === 'ca' || type === 'acme') return false;
    return options.reportIssuerProblems;
  }

  const stale = new StaleReads();

  async function reconcile(request: Request): Promise<Result | void> {
    const key = `${request.namespace}/${request.name}`;
    const cr = ctx.certificateRequests.getStore().get(key);
    if (!cr || cr.metadata?.deletionTimestamp) return;
    // Whatever queued this is looked at once the cache has our write.
    if (stale.isStale(key, cr.metadata?.resourceVersion)) return { requeueAfter: STALE_RETRY_MS };
    const lookup = lookupIssuer(ctx, cr);
    if ('foreign' in lookup) return;
    if (!owns(lookup)) return;
    const draft = new StatusDraft(ctx, name, cr);

    if (isDenied(cr)) {
      draft.denied();
      return commit(draft);
    }
    if (isInvalidRequest(cr)) return;
    if (!isApproved(cr)) {
      if (!handOff.isHandedOver(cr)) {
        // cert-manager's signers say so at every sync of a request not approved yet; here only when no
        // approver of this process will approve it, which is when a user looks for the reason. Nothing
        // else changed: the commit writes nothing and records the event.
        if (!handOff.approverRunning) {
          draft.event('Normal', WAITING_FOR_APPROVAL, WAITING_FOR_APPROVAL_MESSAGE);
          await draft.commit();
        }
        return;
      }
      approve(draft);
    }
    const reason = readyReason(cr);
    if (reason === ReadyReason.Failed || reason === ReadyReason.Issued) return;

    if ('missing' in lookup) {
      // With the lister's NotFound error after it, as upstream's reporter writes it.
      const notFound = `${lookup.missing.toLowerCase()}.cert-manager.io "${cr.spec.issuerRef.name}" not found`;
      draft.pending('IssuerNotFound', `Referenced "${lookup.missing}" not found: ${notFound}`);
      return (await commit(draft)) ?? RETRY;
    }
    const { handle } = lookup;
    const type = issuerType(handle.issuer.spec);
    if (!type) {
      draft.pending(
        'IssuerTypeMissing',
        'Missing issuer type: no issuer specified for the referenced issuer',
      );
      return (await commit(draft)) ?? RETRY;
    }
    // An issuer type certkit does not sign for (vault, venafi): only a denial is recorded.
    if (type !== signer.type) return;

    const problem = specProblem(cr);
    if (problem) {
      draft.invalidRequest('BadConfig', `Resource validation failed: ${problem}`);
      return commit(draft);
    }
    if (!isIssuerReady(handle.issuer)) {
      draft.pending('IssuerNotReady', 'Referenced issuer does not have a Ready status condition');
      return (await commit(draft)) ?? RETRY;
    }
    if (cr.status?.certificate) return commit(draft);

    const outcome = await signer.sign(draft, handle);
    if ('pending' in outcome) {
      draft.pending(outcome.pending.reason, outcome.pending.message);
      return (await commit(draft)) ?? (outcome.pending.wakeOnEvent ? undefined : RETRY);
    }
    if ('failed' in outcome) {
      const { reason: why, message, invalidRequest } = outcome.failed;
      if (invalidRequest) draft.invalidRequest(why, message);
      else draft.failed(why, message);
      return commit(draft);
    }
    const { certPem, leaf } = outcome.issued;
    const parsed = leaf ? rememberSignedCertificate(certPem, leaf) : parsedCertificatePem(certPem);
    if ('error' in parsed) {
      draft.failed('DecodeError', `Failed to decode returned certificate: ${parsed.error.message}`);
      return commit(draft);
    }
    draft.issued(outcome.issued.certPem, outcome.issued.caPem);
    return commit(draft);
  }

  /** Undefined when written (or nothing to write); a quick retry after losing a write race. */
  async function commit(draft: StatusDraft): Promise<Result | undefined> {
    const result = await draft.commit();
    if (result !== 'conflict') handOff.forget(draft.cr);
    if (result === 'written') {
      stale.wrote(
        `${draft.cr.metadata?.namespace}/${draft.cr.metadata?.name}`,
        draft.original.metadata?.resourceVersion,
      );
    }
    if (result === 'conflict') {
      ctx.log({
        level: 'debug',
        msg: 'status conflict, retrying',
        controller: name,
        name: draft.cr.metadata?.name,
      });
      return { requeueAfter: 200 };
    }
    return undefined;
  }

  const controller = new Controller({
    name,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: signerRateLimiter(),
    log: ctx.log,
  });
  const enqueue = (cr: CertificateRequest) =>
    controller.enqueue({ namespace: cr.metadata?.namespace, name: cr.metadata?.name ?? '' });
  /**
   * Queues a request only for the signer that may act on it: the tests its reconcile makes after the stale
   * check (foreign issuer group, another in-tree signer's issuer type). Each of the three signers was woken
   * by every request and issuer event, and two of them returned at once (docs/adr/1151). Nothing is missed:
   * the issuer cache the test reads is the reconcile's, and an issuer that appears or changes its type wakes
   * its requests again, by this test, once the cache holds the issuer as it is now (watchIssuers).
   */
  const wake = (cr: CertificateRequest) => {
    if (mayAct(cr)) enqueue(cr);
  };
  function mayAct(cr: CertificateRequest): boolean {
    if (!needsWork(cr)) return false;
    const lookup = lookupIssuer(ctx, cr);
    return !('foreign' in lookup) && owns(lookup);
  }

  ctx.certificateRequests.addEventHandler({
    onAdd: wake,
    onUpdate: (_old, cr) => wake(cr),
    onDelete: (cr) => stale.forget(deletionHandlingKey(cr)),
  });
  handOff.onHandOff(wake);
  for (const kind of ['Issuer', 'ClusterIssuer'] as const) watchIssuers(ctx, kind, wake);
  signer.watch?.(ctx, wake);
  return controller;
}

/**
 * An issuer that appears, changes spec, changes readiness or is deleted wakes the requests waiting on it at
 * once, rather than after their backoff (cert-manager's handleGenericIssuer, which fires on any change;
 * status-only updates that leave readiness as it was are skipped, since nothing waiting could proceed). A
 * deleted issuer's requests then say `IssuerNotFound`: an ACME request waits on its Order without a retry
 * of its own, and would otherwise go on saying it waits for an Order whose issuer is gone.
 */
function watchIssuers(
  ctx: ControllerContext,
  kind: IssuerKind,
  wakeRequest: (cr: CertificateRequest) => void,
): void {
  const wake = (issuer: GenericIssuer) => {
    for (const cr of requestsForIssuer(ctx, { kind, issuer })) wakeRequest(cr);
  };
  issuerInformer(ctx, kind).addEventHandler({
    onAdd: wake,
    onUpdate: (old, issuer) => {
      const changed =
        old.metadata?.generation !== issuer.metadata?.generation ||
        isIssuerReady(old) !== isIssuerReady(issuer);
      if (changed) wake(issuer);
    },
    onDelete: (issuer) => {
      const gone = isDeletedFinalStateUnknown(issuer) ? issuer.obj : issuer;
      if (gone) wake(gone);
    },
  });
}
