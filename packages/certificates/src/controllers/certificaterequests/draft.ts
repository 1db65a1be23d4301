import { formatTime, isConflict, jsonEqual } from '@certkit/apimachinery';
import { API_VERSION, Kinds } from '../../api/constants.ts';
import type { CertificateRequest, CertificateRequestCondition, ConditionStatus } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { setCondition } from '../conditions.ts';
import { ConditionType, ReadyReason, readyReason } from './conditions.ts';

/**
 * A CertificateRequest's status being changed during one reconcile, with cert-manager's Reporter verbs
 * (certificaterequests/util/reporter.go). Events wait until the status is written, so a reconcile that loses
 * a write conflict and runs again does not announce the same outcome twice.
 */

export const READY_MESSAGE = 'Certificate fetched from issuer successfully';
export const DENIED_MESSAGE = 'The CertificateRequest was denied by an approval controller';

interface PendingEvent {
  /** The controller cert-manager records it from (the approval is the approver's, the rest the signer's). */
  controller: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type CommitResult = 'written' | 'unchanged' | 'conflict';

export class StatusDraft {
  readonly original: CertificateRequest;
  /** A private copy: the cached object must never be changed. */
  readonly cr: CertificateRequest;
  private readonly ctx: ControllerContext;
  /** The controller writing this status: the source of its events unless one says otherwise. */
  private readonly controller: string;
  private readonly events: PendingEvent[] = [];

  constructor(ctx: ControllerContext, controller: string, original: CertificateRequest) {
    this.ctx = ctx;
    this.controller = controller;
    this.original = original;
    this.cr = structuredClone(original);
    this.cr.status ??= {};
  }

  setCondition(type: string, status: ConditionStatus, reason: string, message: string): void {
    const condition: Omit<CertificateRequestCondition, 'lastTransitionTime'> = {
      type,
      status,
      reason,
      message,
    };
    this.cr.status!.conditions = setCondition(this.cr.status!.conditions, condition, this.ctx.now());
  }

  /**
   * An event to record once the status is written, from `controller` (by default the one writing it: a signer
   * carrying the approval records the approval as the approver would have).
   */
  event(type: 'Normal' | 'Warning', reason: string, message: string, controller = this.controller): void {
    this.events.push({ controller, type, reason, message });
  }

  private markFailureTime(): void {
    this.cr.status!.failureTime ??= formatTime(this.ctx.now());
  }

  /** Terminal failure: Ready=False/Failed, failureTime, and a Warning event. */
  failed(reason: string, message: string): void {
    this.markFailureTime();
    this.event('Warning', reason, message);
    this.setCondition(ConditionType.Ready, 'False', ReadyReason.Failed, message);
  }

  /** The signer refuses the request itself (InvalidRequest=True), which also fails it. */
  invalidRequest(reason: string, message: string): void {
    this.setCondition(ConditionType.InvalidRequest, 'True', reason, message);
    this.failed(reason, message);
  }

  /** No event: the approval controller that denied it is expected to have sent one. */
  denied(): void {
    this.markFailureTime();
    this.setCondition(ConditionType.Ready, 'False', ReadyReason.Denied, DENIED_MESSAGE);
  }

  /** Waiting (issuer not ready, Secret missing…). The event only fires on entering Pending, to spare the API. */
  pending(reason: string, message: string): void {
    if (readyReason(this.cr) !== ReadyReason.Pending) this.event('Normal', reason, message);
    this.setCondition(ConditionType.Ready, 'False', ReadyReason.Pending, message);
  }

  issued(certificatePem: string, caPem: string): void {
    this.cr.status!.certificate = Buffer.from(certificatePem).toString('base64');
    // ACME issuers know no CA: the field stays unset rather than empty.
    if (caPem) this.cr.status!.ca = Buffer.from(caPem).toString('base64');
    this.event('Normal', 'CertificateIssued', READY_MESSAGE);
    this.setCondition(ConditionType.Ready, 'True', ReadyReason.Issued, READY_MESSAGE);
  }

  /**
   * Writes the status subresource when it changed (with the cached resourceVersion, so a concurrent change,
   * say a Denied condition, is never overwritten), then records the events. A conflict is reported, not
   * thrown: the newer object's watch event brings the request back.
   */
  async commit(): Promise<CommitResult> {
    const before = this.original.status ?? {};
    if (jsonEqual(before, this.cr.status)) {
      this.flushEvents();
      return 'unchanged';
    }
    try {
      await this.ctx.certificateRequestClient.update(
        { ...this.cr, apiVersion: API_VERSION, kind: Kinds.CertificateRequest },
        { subresource: 'status' },
      );
    } catch (err) {
      if (isConflict(err)) return 'conflict';
      throw err;
    }
    this.flushEvents();
    return 'written';
  }

  private flushEvents(): void {
    const involved = { ...this.cr, apiVersion: API_VERSION, kind: Kinds.CertificateRequest };
    for (const e of this.events.splice(0)) {
      const recorder = this.ctx.recorder.from(e.controller);
      if (e.type === 'Warning') recorder.warning(involved, e.reason, e.message);
      else recorder.normal(involved, e.reason, e.message);
    }
  }
}
