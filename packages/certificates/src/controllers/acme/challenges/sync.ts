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
import { AcmeErrorType, AcmeProblemError } from '../../../acme/client/index.ts';
import type { ControllerContext } from '../../context.ts';
import { classifyAcmeError } from '../errors.ts';
import { AcmeIssuerUnavailable, lookupAcmeIssuer } from '../issuer.ts';
import { fromAcmeState, isFinalState } from '../orders/sync.ts';
import { solverFor } from './solvers.ts';

/**
 * One sync of a Challenge (cert-manager's acmechallenges sync.go): clean up and let go once final or deleted;
 * otherwise, once the scheduler has marked it processing: add the finalizer, read its state from the
 * authorization, present, self-check, accept, and wait for the authorization's verdict. A self-check that
 * fails, and DNS-01's settling time after one that passes, are requeues: no worker waits on them.
 */

const FINALIZERS: readonly string[] = [AcmeFinalizers.challenge, AcmeFinalizers.legacy];

export class ChallengeSync {
  readonly #ctx: ControllerContext;
  #ch: Challenge;
  /** When each DNS-01 Challenge (by UID) first passed its self-check, for the settling wait. */
  readonly #checkedAt: Map<string, number>;

  constructor(ctx: ControllerContext, ch: Challenge, checkedAt: Map<string, number>) {
    this.#ctx = ctx;
    this.#ch = structuredClone(ch);
    this.#checkedAt = checkedAt;
  }

  #event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    const involved = { ...this.#ch, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Challenge };
    if (type === 'Warning') this.#ctx.recorder.warning(involved, reason, message);
    else this.#ctx.recorder.normal(involved, reason, message);
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
      return await this.#step(signal);
    } catch (err) {
      if (isConflict(err)) return { requeueAfter: 200 };
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async #step(signal: AbortSignal): Promise<Result | undefined> {
    const ch = this.#ch;
    const status: ChallengeStatus = { ...ch.status };
    const finalizers = ch.metadata.finalizers ?? [];
    const ours = finalizers.filter((f) => FINALIZERS.includes(f));

    if (ch.metadata.deletionTimestamp || isFinalState(status.state)) {
      if (ours.length > 0) {
        try {
          await solverFor(this.#ctx, ch).cleanUp(signal);
        } catch (err) {
          this.#event('Warning', 'CleanUpError', `Error cleaning up challenge: ${(err as Error).message}`);
          throw err;
        }
      }
      this.#checkedAt.delete(ch.metadata.uid ?? '');
      if (!ch.metadata.deletionTimestamp)
        await this.#writeStatus({ ...status, processing: false, presented: false });
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
        await this.#writeStatus(status);
        if (isFinalState(status.state)) return undefined;
      }

      const solver = solverFor(this.#ctx, ch);
      if (!status.presented) {
        try {
          await solver.present(signal);
        } catch (err) {
          const message = `Error presenting challenge: ${(err as Error).message}`;
          this.#event('Warning', 'PresentError', message);
          await this.#writeStatus({ ...status, reason: message });
          throw err;
        }
        status.presented = true;
        status.presentedAt ??= formatTime(this.#ctx.now());
        status.reason = '';
        await this.#writeStatus(status);
        this.#event('Normal', 'Presented', `Presented challenge using ${ch.spec.type} challenge mechanism`);
      }

      const wait = await this.#selfCheck(status, signal);
      if (wait) return wait;

      await client.acceptChallenge(ch.spec.url);
      const authz = await client.waitForAuthorization(ch.spec.authorizationURL);
      const acmeChallenge = authz.challenges.find((c) => c.url === ch.spec.url);
      if (authz.status === 'valid') {
        status.state = 'valid';
        status.reason = 'Successfully authorized domain';
        await this.#writeStatus(status);
        this.#event(
          'Normal',
          'DomainVerified',
          `Domain "${ch.spec.dnsName}" verified with "${ch.spec.type.toLowerCase()}" validation`,
        );
        return undefined;
      }
      status.state = fromAcmeState(authz.status);
      const detail = acmeChallenge?.error?.detail ?? `authorization is ${authz.status}`;
      status.reason = `Error accepting authorization: acme: authorization error for ${ch.spec.dnsName}: ${acmeChallenge?.error?.type ?? ''}: ${detail}`;
      await this.#writeStatus(status);
      this.#event('Warning', 'Failed', `Accepting challenge authorization failed: ${status.reason}`);
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
      await this.#writeStatus(status);
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
    const checked = this.#checkedAt.get(uid);
    if (checked === undefined) {
      try {
        await solverFor(this.#ctx, ch).check(signal);
      } catch (err) {
        status.reason = `Waiting for ${ch.spec.type} challenge propagation: ${(err as Error).message}`;
        await this.#writeStatus(status);
        return { requeueAfter: this.#ctx.options.dns01CheckRetryPeriodMs };
      }
      if (ch.spec.type !== 'DNS-01') return undefined;
      this.#checkedAt.set(uid, now);
      return this.#ctx.options.dns01PropagationWaitMs > 0
        ? { requeueAfter: this.#ctx.options.dns01PropagationWaitMs }
        : undefined;
    }
    // DNS-01: resolvers the check did not ask get time to see the record (cert-manager sleeps 60 s here).
    const due = checked + this.#ctx.options.dns01PropagationWaitMs;
    return due > now ? { requeueAfter: due - now } : undefined;
  }
}
