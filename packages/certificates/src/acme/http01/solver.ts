/**
 * The HTTP-01 solver interface the Challenge controller drives (cert-manager's `solver` interface in
 * pkg/issuer/acme/acme.go, for HTTP-01): one implementation answers challenges from the controller's own
 * listener (embedded-solver.ts); the in-cluster one (solver Pod, Service, Ingress or HTTPRoute per
 * Challenge) is one more implementation of the same three calls.
 */

import type { Challenge } from '../../api/acme-types.ts';
import type { SelfCheckResult } from './self-check.ts';

/** Where an ACME server fetches the key authorization (RFC 8555 §8.3). */
export const HTTP01_CHALLENGE_PATH = '/.well-known/acme-challenge/';

export interface HTTP01Solver {
  /**
   * Makes `spec.key` answer GET http://<spec.dnsName>/.well-known/acme-challenge/<spec.token>. Idempotent:
   * called again before every self-check, so whatever went missing since (a deleted Pod) comes back.
   */
  present(challenge: Challenge): Promise<void>;
  /**
   * The self-check: resolves once the key is served where the ACME server will look, rejects with the
   * reason (shown in the Challenge's status.reason) while it is not. Never accepts the challenge itself.
   * `requiredPasses` (default: the solver's, 5 as upstream) is how many consecutive passes this call makes:
   * the Challenge controller asks for one per sync and requeues for the next, so no worker sleeps between them.
   * `answeredHere`: the passes were answered by this process itself, so the next may follow at once (ADR 1011).
   */
  check(challenge: Challenge, signal?: AbortSignal, requiredPasses?: number): Promise<SelfCheckResult>;
  /** Stops answering for the challenge and removes whatever present() made. Idempotent. */
  cleanUp(challenge: Challenge): Promise<void>;
}
