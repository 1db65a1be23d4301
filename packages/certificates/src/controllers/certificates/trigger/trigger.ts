import type { Reconciler, Result } from '@certkit/runtime';
import { Annotations, CertificateReasons } from '../../../api/constants.ts';
import type { Certificate } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import {
  certificatesForSecret,
  gatherPolicyInput,
  liveCertificate,
  type PolicyInput,
} from '../shared/gather.ts';
import {
  evaluate,
  invalidSpec,
  requestMatchesSpec,
  triggerPolicyChain,
  type Violation,
  WINDOW_ERROR_REASON,
} from '../shared/policies.ts';
import { type BackoffOptions, remainingBackoffMs } from '../shared/renewal.ts';
import { awaitingOwnSecretWrite } from '../shared/own-secret-writes.ts';
import { hasCondition, resultOf, setCertificateCondition, updateStatus } from '../shared/status.ts';

/**
 * certificates-trigger: decides that a Certificate needs a (new) certificate and says so by setting
 * Issuing=True with the reason, which sets the other controllers going. It also wakes itself at
 * status.renewalTime, so that renewal happens without any event. It never writes Ready: that is the
 * readiness controller's alone (readiness/readiness.ts), as in cert-manager.
 */

export const TRIGGER_CONTROLLER = 'certificates-trigger';

/** This controller's Event recorder: its Events name it as their source (docs/adr/0903). */
const events = (ctx: ControllerContext) => ctx.recorder.from(TRIGGER_CONTROLLER);

/** How soon a Certificate sharing its secretName with others looks again (they may have been fixed). */
export const DUPLICATE_SECRET_RECHECK_MS = 3 * 60 * 1000;

/**
 * Whether the trigger may do anything for the Certificate in this state: not while it is issuing. Its event
 * handlers wake it only then (index.ts): the end of the issuance is a Certificate event that wakes it again.
 */
export function triggerMayAct(cert: Certificate): boolean {
  return !hasCondition(cert, 'Issuing', 'True');
}

export function triggerReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert) return;

    // A spec the webhook would have refused is not issued; readiness reports it (Ready=False InvalidSpec).
    if (invalidSpec(cert)) return;

    // An issuance in progress is the other controllers' business until it ends.
    if (!triggerMayAct(cert)) return;

    // The issuing controller's write of the new certificate may not be in the Secret cache yet: judged by the
    // previous one (or none), the Certificate would be issued again. The Secret's event brings it back
    // (docs/adr/1181).
    const awaiting = await awaitingOwnSecretWrite(ctx, cert.metadata.namespace ?? '', cert.spec.secretName);
    if (awaiting) return awaiting;

    const input = await gatherPolicyInput(ctx, cert);

    // Certificates sharing a Secret would overwrite each other's certificate and re-trigger each other
    // forever: only the one owning the Secret may issue.
    if (!(await ownsSecret(ctx, cert))) {
      ctx.log({
        level: 'debug',
        msg: 'spec.secretName is shared with other Certificates in the namespace, not triggering',
        namespace: cert.metadata.namespace,
        name: cert.metadata.name,
      });
      return { requeueAfter: DUPLICATE_SECRET_RECHECK_MS };
    }

    const backoff = failureBackoff(input, {
      minMs: ctx.options.certificateRequestMinimumBackoffMs,
      maxMs: ctx.options.certificateRequestMaximumBackoffMs,
    });
    if (backoff > 0) return { requeueAfter: backoff };

    const found = evaluate(triggerPolicyChain, input);
    if (!found) return untilRenewal(cert, input.now);
    // Renewal due with windows that could not be honoured: renew anyway, and say why in a Warning.
    const windowError = found.reason === WINDOW_ERROR_REASON ? found.message : undefined;
    const violation = windowError === undefined ? found : renewingOutsideWindows(cert);

    ctx.log({
      level: 'info',
      msg: 'Certificate must be re-issued',
      namespace: cert.metadata.namespace,
      name: cert.metadata.name,
      reason: violation.reason,
      message: violation.message,
    });
    const write = await updateStatus(
      ctx,
      cert,
      (status) =>
        setCertificateCondition(
          status,
          { type: 'Issuing', status: 'True', ...violation },
          cert.metadata.generation,
          input.now,
        ),
      signal,
    );
    if (write === 'written') {
      if (windowError !== undefined) {
        events(ctx).warning(
          cert,
          WINDOW_ERROR_REASON,
          `Renewing certificate without satisfying renewal windows due to ${windowError}`,
        );
      }
      events(ctx).normal(cert, 'Issuing', violation.message);
    }
    return resultOf(write);
  };
}

/** Issuing=True's reason and message when renewal goes ahead outside the windows. */
function renewingOutsideWindows(cert: Certificate): Violation {
  return {
    reason: CertificateReasons.Renewing,
    message: `Renewing certificate without satisfying renewal windows at: ${cert.status?.renewalTime ?? '<nil>'}`,
  };
}

/**
 * CertificateOwnsSecret: among the Certificates of the namespace naming this Secret, the owner is the one
 * its `cert-manager.io/certificate-name` annotation names, else the oldest (then the first by name).
 */
async function ownsSecret(ctx: ControllerContext, cert: Certificate): Promise<boolean> {
  const namespace = cert.metadata.namespace ?? '';
  const sharing = certificatesForSecret(ctx, namespace, cert.spec.secretName);
  // Not in the cache (deleted meanwhile): not the owner.
  if (!sharing.some((c) => c.metadata.name === cert.metadata.name)) return false;
  if (sharing.length === 1) return true;
  const names = [...sharing]
    .sort((a, b) => {
      const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
      const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
      return ta !== tb ? ta - tb : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
    })
    .map((c) => c.metadata.name);
  let owner = names[0];
  const secret = await ctx.secrets.get(namespace, cert.spec.secretName);
  const annotated = secret?.metadata?.annotations?.[Annotations.certificateName];
  if (annotated && names.includes(annotated)) owner = annotated;
  return owner === cert.metadata.name;
}

/**
 * shouldBackoffReissuingOnFailure: after failures, wait 1h·2^(n−1) (at most 32h; the two backoff flags) from the last one, unless
 * the spec changed since the failed request was made (a fix deserves an immediate try).
 */
function failureBackoff(input: PolicyInput, limits: BackoffOptions): number {
  const { certificate: cert, nextRevisionRequest: next } = input;
  if (!cert.status?.lastFailureTime) return 0;
  if (next) {
    try {
      if (requestMatchesSpec(next, cert.spec).length > 0) return 0;
    } catch {
      return 0;
    }
  }
  return remainingBackoffMs(cert.status, input.now, limits);
}

/** A requeue at status.renewalTime when it is still ahead. */
function untilRenewal(cert: Certificate, now: Date): Result | undefined {
  const at = Date.parse(cert.status?.renewalTime ?? '');
  if (Number.isNaN(at) || at <= now.getTime()) return undefined;
  return { requeueAfter: at - now.getTime() };
}
