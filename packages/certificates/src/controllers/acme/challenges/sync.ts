import {
  formatTime,
  isConflict,
  isNotFound,
  jsonEqual,
  parseGoDuration,
  toMilliseconds,
} from '@certkit/apimachinery';
import type { Result } from '@certkit/runtime';
import { ACME_API_VERSION, AcmeFinalizers, AcmeKinds } from '../../../api/acme-constants.ts';
import type { Challenge, ChallengeStatus } from '../../../api/types.ts';
import { AcmeErrorType, AcmeProblemError, POLL_MIN_MS } from '../../../acme/client/index.ts';
import type { ControllerContext } from '../../context.ts';
import { classifyAcmeError } from '../errors.ts';
import { AcmeIssuerUnavailable, lookupAcmeIssuer } from '../issuer.ts';
import { SELF_CHECK_DEFAULTS } from '../../../acme/http01/self-check.ts';
import { fromAcmeState, isFinalState } from '../orders/sync.ts';
import { CHALLENGES_CONTROLLER } from './controller-name.ts';
import { solverFor } from './solvers.ts';
import { cleanUpAbandonedIn, reportAbandonedCleanUp } from './abandon-clean-up.ts';

/**
 * One sync of a Challenge (cert-manager's acmechallenges sync.go): clean up and let go once final or deleted;
 * otherwise, once the scheduler has marked it processing: add the finalizer, read its state from the
 * authorization, present, self-check, accept, and wait for the authorization's verdict. A self-check that
 * fails, the pauses between HTTP-01's passes and DNS-01's settling time after a passing check are requeues:
 * no worker waits on them. As upstream's deferred update, the status a sync arrives at is written once, at
 * its end (also when it fails), so presenting and what follows in the same sync make one write.
 */

/** HTTP-01 self-check progress of one Challenge: consecutive passes so far, and when the last one ended. */
export interface HTTP01Passes {
  passes: number;
  at: number;
}

const FINALIZERS: readonly string[] = [AcmeFinalizers.challenge, AcmeFinalizers.legacy];

export class ChallengeSync {
  readonly #ctx: ControllerContext;
  #ch: Challenge;
  /** The status this sync is arriving at, written at its end. */
  readonly #status: ChallengeStatus;
  /** When each DNS-01 Challenge (by UID) first passed its self-check, for the settling wait. */
  readonly #checkedAt: Map<string, number>;
  /** Each HTTP-01 Challenge's (by UID) passes of its self-check so far. */
  readonly #http01Passes: Map<string, HTTP01Passes>;

  constructor(
    ctx: ControllerContext,
    ch: Challenge,
    checkedAt: Map<string, number>,
    http01Passes: Map<string, HTTP01Passes>,
  ) {
    this.#ctx = ctx;
    this.#ch = structuredClone(ch);
    this.#status = { ...this.#ch.status };
    this.#checkedAt = checkedAt;
    this.#http01Passes = http01Passes;
  }

  #event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    const involved = { ...this.#ch, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Challenge };
    if (type === 'Warning') this.#ctx.recorder.from(CHALLENGES_CONTROLLER).warning(involved, reason, message);
    else this.#ctx.recorder.from(CHALLENGES_CONTROLLER).normal(involved, reason, message);
  }

  /** Writes the status subresource when it changed; the object written is the new base. */
  async #writeStatus(status: ChallengeStatus): Promise<void> {
    if (jsonEqual(this.#ch.status ?? {}, status)) return;
    this.#ch = await this.#ctx.challengeClient.update(
      { ...this.#ch, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Challenge, status },
      { subresource: 'status' },
    );
  }

  async #setFinalizers(finalizers: string[]): Promise<void> {
    this.#ch = await this.#ctx.challengeClient.update({
      ...this.#ch,
      apiVersion: ACME_API_VERSION,
      kind: AcmeKinds.Challenge,
      metadata: { ...this.#ch.metadata, finalizers },
    });
  }

  async run(signal: AbortSignal): Promise<Result | undefined> {
    try {
      let result: Result | undefined;
      let failure: unknown;
      try {
        const wasFinal = isFinalState(this.#status.state);
        result = await this.#step(signal);
        // A verdict reached in this sync is acted on in it too (clean up, leave processing, drop the
        // finalizer), as the next sync would do at once: upstream's Challenge shows `valid` while still
        // processing for that one round trip, which here would cost a status write, its watch event and a
        // sync more per Challenge. The state, Events and end result are upstream's.
        if (!wasFinal && isFinalState(this.#status.state) && result === undefined) {
          result = await this.#step(signal);
        }
      } catch (err) {
        failure = err ?? new Error('challenge sync failed');
      }
      await this.#writeStatus(this.#status);
      if (failure !== undefined) throw failure;
      return result;
    } catch (err) {
      if (isConflict(err)) return { requeueAfter: 200 };
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async #step(signal: AbortSignal): Promise<Result | undefined> {
    const ch = this.#ch;
    const status = this.#status;
    const finalizers = ch.metadata.finalizers ?? [];
    const ours = finalizers.filter((f) => FINALIZERS.includes(f));

    if (ch.metadata.deletionTimestamp || isFinalState(status.state)) {
      if (ours.length > 0) {
        try {
          await solverFor(this.#ctx, ch).cleanUp(signal);
        } catch (err) {
          const message = `Error cleaning up challenge: ${(err as Error).message}`;
          this.#event('Warning', 'CleanUpError', message);
          // On the Challenge too, as upstream: in a namespace being deleted no Event can be recorded.
          status.reason = message;
          // Retried until it succeeds, unless it never can: its Secret went with its namespace (ADR 1016).
          const abandonedIn = await cleanUpAbandonedIn(this.#ctx, ch, err);
          if (!abandonedIn) throw err;
          reportAbandonedCleanUp(this.#ctx, ch, abandonedIn, err as Error);
        }
      }
      this.#checkedAt.delete(ch.metadata.uid ?? '');
      this.#http01Passes.delete(ch.metadata.uid ?? '');
      if (!ch.metadata.deletionTimestamp) {
        status.processing = false;
        status.presented = false;
        await this.#writeStatus(status);
      }
      if (ours.length > 0) await this.#setFinalizers(finalizers.filter((f) => !FINALIZERS.includes(f)));
      return undefined;
    }
    if (!status.processing) return undefined;
    if (!finalizers.includes(AcmeFinalizers.challenge) || finalizers.includes(AcmeFinalizers.legacy)) {
      // The legacy name is replaced by the domain-qualified one, as upstream does when it sees it.
      await this.#setFinalizers([
        ...finalizers.filter((f) => !FINALIZERS.includes(f)),
        AcmeFinalizers.challenge,
      ]);
      return undefined;
    }

    let client;
    try {
      client = lookupAcmeIssuer(this.#ctx, ch.metadata.namespace!, ch.spec.issuerRef).client;
    } catch (err) {
      if (err instanceof AcmeIssuerUnavailable) return { requeue: true };
      throw err;
    }

    try {
      if (!status.state) {
        // The authorization, never the challenge URL: some servers take a GET of a challenge as its acceptance.
        const authz = await client.getAuthorization(ch.spec.authorizationURL);
        const acmeChallenge = authz.challenges.find((c) => c.url === ch.spec.url);
        if (!acmeChallenge) throw new Error(`challenge ${ch.spec.url} is not in authorization ${authz.url}`);
        status.state = fromAcmeState(acmeChallenge.status);
        status.reason = acmeChallenge.error?.detail ?? '';
        if (isFinalState(status.state)) return undefined;
      }

      const solver = solverFor(this.#ctx, ch);
      if (!status.presented) {
        try {
          await solver.present(signal);
        } catch (err) {
          this.#event('Warning', 'PresentError', `Error presenting challenge: ${(err as Error).message}`);
          // The error alone, as upstream's reason (`kubectl get challenges -o wide`); the event has the prefix.
          status.reason = (err as Error).message;
          throw err;
        }
        status.presented = true;
        status.presentedAt ??= formatTime(this.#ctx.now());
        status.reason = '';
        this.#event('Normal', 'Presented', `Presented challenge using ${ch.spec.type} challenge mechanism`);
      }

      const wait = await this.#selfCheck(status, signal);
      if (wait) return wait;

      await client.acceptChallenge(ch.spec.url);
      // The server validates after it answers the accept: the first poll waits the first poll interval,
      // where one at once would find the authorization pending (bench:acme: 1.97 polls per Challenge).
      const authz = await client.waitForAuthorization(ch.spec.authorizationURL, {
        firstPollAfterMs: POLL_MIN_MS,
      });
      const acmeChallenge = authz.challenges.find((c) => c.url === ch.spec.url);
      if (authz.status === 'valid') {
        status.state = 'valid';
        status.reason = 'Successfully authorized domain';
        // The type as the spec spells it (`HTTP-01`), as upstream's event since its v1 API.
        this.#event(
          'Normal',
          'DomainVerified',
          `Domain "${ch.spec.dnsName}" verified with "${ch.spec.type}" validation`,
        );
        return undefined;
      }
      status.state = fromAcmeState(authz.status);
      const detail = acmeChallenge?.error?.detail ?? `authorization is ${authz.status}`;
      // Go's AuthorizationError text, behind the reason's prefix and the event's, as upstream.
      const authErr = `acme: authorization error for ${ch.spec.dnsName}: ${acmeChallenge?.error?.type ?? ''}: ${detail}`;
      status.reason = `Error accepting authorization: ${authErr}`;
      this.#event('Warning', 'Failed', `Accepting challenge authorization failed: ${authErr}`);
      return undefined;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) throw err;
      const failure = classifyAcmeError(err, this.#ctx.now());
      if (!failure.final) {
        if (failure.afterMs !== undefined) return { requeueAfter: failure.afterMs };
        throw err;
      }
      // A `malformed` answer about a challenge is taken, as upstream, to mean its authorization expired.
      const expired = err instanceof AcmeProblemError && err.is(AcmeErrorType.malformed);
      status.state = expired ? 'expired' : 'errored';
      status.reason = failure.problem.message;
      this.#event('Warning', 'Failed', `Accepting challenge authorization failed: ${status.reason}`);
      return undefined;
    }
  }

  /** A Result when the Challenge must come back later, undefined when it may be accepted now. */
  async #selfCheck(status: ChallengeStatus, signal: AbortSignal): Promise<Result | undefined> {
    const ch = this.#ch;
    const now = this.#ctx.now().getTime();
    const waitInstead = ch.spec.solver.waitInsteadOfSelfCheck;
    if (waitInstead) {
      const due = Date.parse(status.presentedAt ?? '') + toMilliseconds(parseGoDuration(waitInstead));
      return due > now ? { requeueAfter: due - now } : undefined;
    }
    const uid = ch.metadata.uid ?? '';
    if (ch.spec.type !== 'DNS-01') return this.#http01Pass(status, uid, now, signal);
    const checked = this.#checkedAt.get(uid);
    if (checked === undefined) {
      try {
        await solverFor(this.#ctx, ch).check(signal);
      } catch (err) {
        status.reason = `Waiting for ${ch.spec.type} challenge propagation: ${(err as Error).message}`;
        return { requeueAfter: this.#ctx.options.dns01CheckRetryPeriodMs };
      }
      this.#checkedAt.set(uid, now);
      return this.#ctx.options.dns01PropagationWaitMs > 0
        ? { requeueAfter: this.#ctx.options.dns01PropagationWaitMs }
        : undefined;
    }
    // DNS-01: resolvers the check did not ask get time to see the record (cert-manager sleeps 60 s here).
    const due = checked + this.#ctx.options.dns01PropagationWaitMs;
    return due > now ? { requeueAfter: due - now } : undefined;
  }
  /**
   * HTTP-01's self-check is cert-manager's five passes two seconds apart, but one pass per sync: upstream sleeps
   * through the pauses inside the sync, which holds a worker for 8 s per Challenge, so that 5 workers pass at
   * most 5 Challenges per 8 s whatever --max-concurrent-challenges says (bench:acme: 500 names at 0.5 a
   * second). A failed pass starts the count again, as upstream's whole check does. A pass answered by the
   * controller's own listener is followed at once, in the same sync: the pause lets a solver's routes
   * propagate, and an answer held in this process's memory has none (ADR 1011).
   */
  async #http01Pass(
    status: ChallengeStatus,
    uid: string,
    now: number,
    signal: AbortSignal,
  ): Promise<Result | undefined> {
    let progress = this.#http01Passes.get(uid);
    // Woken early (a status write, a resync): the next pass keeps its pace.
    const due = progress ? progress.at + SELF_CHECK_DEFAULTS.intervalMs : now;
    if (due > now) return { requeueAfter: due - now };
    for (;;) {
      let answeredHere;
      try {
        ({ answeredHere } = await solverFor(this.#ctx, this.#ch).check(signal));
      } catch (err) {
        this.#http01Passes.delete(uid);
        status.reason = `Waiting for HTTP-01 challenge propagation: ${(err as Error).message}`;
        return { requeueAfter: this.#ctx.options.dns01CheckRetryPeriodMs };
      }
      const passes = (progress?.passes ?? 0) + 1;
      if (passes >= SELF_CHECK_DEFAULTS.requiredPasses) {
        this.#http01Passes.delete(uid);
        return undefined;
      }
      // `at` 0: the next pass is due now; a pass answered elsewhere makes it wait the whole interval.
      progress = { passes, at: answeredHere ? 0 : this.#ctx.now().getTime() };
      this.#http01Passes.set(uid, progress);
      if (!answeredHere) return { requeueAfter: SELF_CHECK_DEFAULTS.intervalMs };
    }
  }
}
