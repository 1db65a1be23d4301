import type { Reconciler, Result } from '@certkit/runtime';
import type { CertificateStatus } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { gatherPolicyInput, liveCertificate, type PolicyInput } from './gather.ts';
import { evaluate, invalidSpec, readinessPolicyChain, secretCertificate } from './policies.ts';
import { renewalTime } from './renewal.ts';
import { formatTime, resultOf, setCondition, setField, updateStatus } from './status.ts';

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
    const input = await gatherPolicyInput(ctx, cert);
    // An invalid spec's Ready=False is the trigger's (with its event); the dates are still ours.
    const spec = invalidSpec(cert);
    const violation = evaluate(readinessPolicyChain, input);
    const write = await updateStatus(
      ctx,
      cert,
      (status) => {
        if (!spec) {
          const ready = violation
            ? { type: 'Ready' as const, status: 'False' as const, ...violation }
            : { type: 'Ready' as const, status: 'True' as const, reason: 'Ready', message: READY_MESSAGE };
          setCondition(status, ready, cert.metadata.generation, input.now);
        }
        setValidity(status, input);
      },
      signal,
    );
    return resultOf(write) ?? untilExpiry(input);
  };
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
