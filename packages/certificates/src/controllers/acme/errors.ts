import { AcmeErrorType, AcmeProblemError, AcmeUnsupportedProfileError } from '../../acme/client/index.ts';

/**
 * How the Order and Challenge controllers treat a failed ACME call (cert-manager's `IsNonRetryableError` and
 * the Challenge controller's handleError): an ACME 4xx is the server's last word and ends the object in a
 * failure state; a rate limit (429) is waited out, for as long as its Retry-After says; anything else (the
 * network, a 5xx, an issuer not set up yet) is retried with the queue's backoff.
 */

export type AcmeFailure =
  /** A final verdict: the object goes to `errored` (or `expired` for a Challenge's `malformed`). */
  | { final: true; problem: AcmeProblemError | Error }
  /** Try again: after `afterMs` when the server said when, else with the queue's backoff. */
  | { final: false; afterMs?: number };

export function classifyAcmeError(err: unknown, now: Date): AcmeFailure {
  if (err instanceof AcmeUnsupportedProfileError) return { final: true, problem: err };
  if (!(err instanceof AcmeProblemError)) return { final: false };
  if (err.status === 429 || err.is(AcmeErrorType.rateLimited)) {
    // cert-manager turns a 429 into a failed Order (its issue #5867); waiting as the server asks lets the
    // same Order succeed once the limit lifts, instead of putting the Certificate into hours of backoff.
    const afterMs = err.retryAfter ? Math.max(1_000, err.retryAfter.getTime() - now.getTime()) : undefined;
    return { final: false, afterMs };
  }
  return err.isClientError ? { final: true, problem: err } : { final: false };
}
