import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { CertificateSpec, CertificateStatus } from '../../../api/types.ts';
import { LruMap } from '../../../lru.ts';
import { applyRenewalWindows } from './renewal-windows.ts';

/**
 * When to renew, and how long to wait after failures: cert-manager's pkg/util/pki/renewaltime.go and the
 * trigger controller's shouldBackoffReissuingOnFailure. Pure functions of the certificate, the spec and a
 * clock, so the trigger, readiness and policy checks all agree on the same instant.
 */

const SECOND_MS = 1000;
const HOUR_MS = 60 * 60 * SECOND_MS;

/** certificateRequestMinimumBackoffDuration: the wait after the first failure. */
export const MIN_FAILURE_BACKOFF_MS = HOUR_MS;
/** certificateRequestMaximumBackoffDuration: the longest wait, however many failures. */
export const MAX_FAILURE_BACKOFF_MS = 32 * HOUR_MS;

type RenewalSpec = Pick<CertificateSpec, 'renewBefore' | 'renewBeforePercentage' | 'renewal'>;

function durationMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  try {
    return toMilliseconds(parseGoDuration(text));
  } catch {
    // The webhook rejects unparsable durations; a stored one that slipped through counts as unset.
    return undefined;
  }
}

/**
 * How long before expiry to renew a certificate living `lifetimeMs`: spec.renewBefore when it is positive and
 * shorter than the lifetime; else renewBeforePercentage of the lifetime when it is in (0, 100); else a third
 * of the lifetime (renewal at 2/3, the default).
 */
export function renewBeforeMs(lifetimeMs: number, spec: RenewalSpec): number {
  const renewBefore = durationMs(spec.renewBefore);
  if (renewBefore !== undefined && renewBefore > 0 && renewBefore < lifetimeMs) return renewBefore;
  const percentage = spec.renewBeforePercentage;
  if (percentage !== undefined && percentage > 0 && percentage < 100) return (lifetimeMs * percentage) / 100;
  return lifetimeMs / 3;
}

export interface ScheduledRenewal {
  /** When to renew, whole seconds. */
  at: Date;
  /**
   * Why spec.renewal.windows could not be honoured (cert-manager's WindowError): `at` is then the time
   * renewBefore asks for, and renewal happens there anyway, with a warning.
   */
  windowError?: string;
}

/**
 * Answers of scheduleRenewal per spec and certificate: the trigger and readiness ask at every reconcile, and a
 * window search runs cron's Next some hundreds of times.
 */
const scheduled = new WeakMap<RenewalSpec, LruMap<string, ScheduledRenewal>>();

/**
 * When a certificate valid from `notBefore` to `notAfter` should be renewed (RenewalTime): renewBefore's time,
 * truncated to the second (the precision status.renewalTime is stored with, so that a requeue at the stored
 * time finds renewal due), then moved into spec.renewal.windows when there are any (renewal-windows.ts).
 * Undefined when spec.renewal.policy is Disabled.
 *
 * Upstream gives no time at all for a window the webhook should have refused, or whose windowDuration is not
 * positive (which the webhook lets through); here that is a window error like finding no time, so such a
 * certificate still renews at its renewBefore time.
 */
export function scheduleRenewal(
  notBefore: Date,
  notAfter: Date,
  spec: RenewalSpec,
): ScheduledRenewal | undefined {
  if (spec.renewal?.policy === 'Disabled') return undefined;
  const lifetime = notAfter.getTime() - notBefore.getTime();
  const desired = Math.floor((notAfter.getTime() - renewBeforeMs(lifetime, spec)) / SECOND_MS) * SECOND_MS;
  const windows = spec.renewal?.windows;
  if (!windows?.length) return { at: new Date(desired) };

  let bySpec = scheduled.get(spec);
  if (!bySpec) scheduled.set(spec, (bySpec = new LruMap(8)));
  return bySpec.getOrCompute(`${notBefore.getTime()}/${notAfter.getTime()}`, () => {
    const found = applyRenewalWindows(notBefore.getTime(), notAfter.getTime(), desired, windows);
    return found.error === undefined
      ? { at: new Date(found.at) }
      : { at: new Date(found.at), windowError: found.error };
  });
}

/** scheduleRenewal's time alone. */
export function renewalTime(notBefore: Date, notAfter: Date, spec: RenewalSpec): Date | undefined {
  return scheduleRenewal(notBefore, notAfter, spec)?.at;
}

export interface BackoffOptions {
  minMs?: number;
  maxMs?: number;
}

/**
 * The wait after `failedAttempts` consecutive failures: min·2^(n−1), capped at max. Unknown counts (a
 * failure recorded before attempts were counted, or a hand-edited 0) wait the minimum.
 */
export function failureBackoffMs(failedAttempts: number | undefined, options: BackoffOptions = {}): number {
  const min = options.minMs ?? MIN_FAILURE_BACKOFF_MS;
  const max = options.maxMs ?? MAX_FAILURE_BACKOFF_MS;
  if (failedAttempts === undefined || failedAttempts <= 0) return min;
  const computed = min * 2 ** (failedAttempts - 1);
  return Math.max(min, Math.min(computed, max));
}

/**
 * How much longer to hold off re-issuing after the last failure (0: go ahead), from status.lastFailureTime
 * and status.failedIssuanceAttempts.
 */
export function remainingBackoffMs(
  status: CertificateStatus | undefined,
  now: Date,
  options: BackoffOptions = {},
): number {
  if (!status?.lastFailureTime) return 0;
  const failedAt = Date.parse(status.lastFailureTime);
  if (Number.isNaN(failedAt)) return 0;
  const delay = failureBackoffMs(status.failedIssuanceAttempts, options);
  const since = now.getTime() - failedAt;
  return since >= delay ? 0 : delay - since;
}
