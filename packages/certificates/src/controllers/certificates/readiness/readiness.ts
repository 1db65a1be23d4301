import { formatTime } from '@certkit/apimachinery';
import type { Reconciler, Result } from '@certkit/runtime';
import { SecretKeys } from '../../../api/constants.ts';
import type { CertificateStatus } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { gatherPolicyInput, liveCertificate, type PolicyInput } from '../shared/gather.ts';
import { secretCertificate } from '../../parsed.ts';
import { LruMap } from '../../../lru.ts';
import {
  evaluate,
  invalidSpec,
  readinessPolicyChain,
  RenewalWindowsUnsatisfiable,
} from '../shared/policies.ts';
import { renewalTime } from '../shared/renewal.ts';
import {
  getCondition,
  hasCondition,
  resultOf,
  setCertificateCondition,
  setField,
  updateStatus,
} from '../shared/status.ts';

/**
 * certificates-readiness: the Ready condition (from the readiness policy chain) and the validity dates of
 * the certificate in the Secret: status.notBefore, notAfter and renewalTime.
 */

export const READINESS_CONTROLLER = 'certificates-readiness';

export const READY_MESSAGE = 'Certificate is up to date and has not expired';

export function readinessReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert) return;
    // A Certificate's first Ready condition is written by the trigger, in the same write as its decision, and
    // an issuance's last one by the issuing controller with the new revision: one status write each instead
    // of two racing ones (the loser of such a race costs a conflict, a re-read and a retry).
    if (!getCondition(cert, 'Ready') && !hasCondition(cert, 'Issuing', 'True')) return;
    const input = await gatherPolicyInput(ctx, cert);
    if (completingIssuance(input)) return;
    const write = await updateStatus(ctx, cert, (status) => applyReadiness(status, input), signal);
    if (write === 'written' || write === 'unchanged') warnUnsatisfiableWindows(ctx, input);
    return resultOf(write) ?? untilExpiry(input);
  };
}

/**
 * The issuing controller has written the new certificate to the Secret and is about to move the revision
 * on, with Ready in the same write: judging the new Secret against the old revision now would only race it.
 */
function completingIssuance({ certificate, secret, nextRevisionRequest }: PolicyInput): boolean {
  const issued = nextRevisionRequest?.status?.certificate;
  return (
    hasCondition(certificate, 'Issuing', 'True') &&
    issued !== undefined &&
    secret?.data?.[SecretKeys.tlsCert] === issued
  );
}

/**
 * The Ready condition from the readiness policy chain, and the validity dates of the certificate in the
 * Secret. An invalid spec's Ready=False is the trigger's (with its event); the dates are still set.
 */
export function applyReadiness(status: CertificateStatus, input: PolicyInput): void {
  const cert = input.certificate;
  if (!invalidSpec(cert)) {
    const violation = RenewalWindowsUnsatisfiable(input) ?? evaluate(readinessPolicyChain, input);
    const ready = violation
      ? { type: 'Ready' as const, status: 'False' as const, ...violation }
      : { type: 'Ready' as const, status: 'True' as const, reason: 'Ready', message: READY_MESSAGE };
    setCertificateCondition(status, ready, cert.metadata.generation, input.now);
  }
  setValidity(status, input);
}

/** Per controller context: the window error last warned about, by Certificate uid. */
const warnedWindowErrors = new WeakMap<ControllerContext, LruMap<string, string | undefined>>();

/**
 * The readiness controller's Warning for renewal windows that cannot be honoured. Upstream records one at
 * every reconcile and client-go folds the repeats into one Event; our recorder does not fold, so a
 * Certificate is warned once per distinct message instead.
 */
function warnUnsatisfiableWindows(ctx: ControllerContext, input: PolicyInput): void {
  const cert = input.certificate;
  const violation = invalidSpec(cert) ? undefined : RenewalWindowsUnsatisfiable(input);
  let warned = warnedWindowErrors.get(ctx);
  if (!warned) warnedWindowErrors.set(ctx, (warned = new LruMap(4096)));
  const uid = cert.metadata.uid ?? `${cert.metadata.namespace}/${cert.metadata.name}`;
  if (warned.get(uid) === violation?.message) return;
  warned.set(uid, violation?.message);
  if (violation) ctx.recorder.warning(cert, violation.reason, violation.message);
}

/** notBefore, notAfter and renewalTime of the certificate in the Secret; cleared when there is none. */
function setValidity(status: CertificateStatus, input: PolicyInput): void {
  const parsed = input.secret?.data ? secretCertificate(input.secret) : undefined;
  if (!parsed || 'error' in parsed) {
    setField(status, 'notBefore', undefined);
    setField(status, 'notAfter', undefined);
    setField(status, 'renewalTime', undefined);
    return;
  }
  const { notBefore, notAfter } = parsed.value;
  status.notBefore = formatTime(notBefore);
  status.notAfter = formatTime(notAfter);
  const renewal = renewalTime(notBefore, notAfter, input.certificate.spec);
  setField(status, 'renewalTime', renewal && formatTime(renewal));
}

/** Look again when the certificate expires, so that Ready turns False even if nothing else happens. */
function untilExpiry(input: PolicyInput): Result | undefined {
  const parsed = input.secret?.data ? secretCertificate(input.secret) : undefined;
  if (!parsed || 'error' in parsed) return undefined;
  const ms = parsed.value.notAfter.getTime() - input.now.getTime() + 1000;
  return ms > 0 ? { requeueAfter: ms } : undefined;
}
