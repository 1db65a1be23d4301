/**
 * The HTTP-01 solver that answers from the controller's own listener (`--acme-http01-listen-address`):
 * presenting a Challenge puts its key authorization in memory for the listener to serve, cleaning up
 * takes it out, and the self-check is cert-manager's, against wherever the name points (its passes back to
 * back when this listener is the one answering them, ADR 1011). Nothing is
 * created in the cluster; a single host running `certkit up` on port 80 solves its own challenges.
 */

import type { Challenge } from '../../api/acme-types.ts';
import {
  type ChallengeListener,
  LISTENER_LIMITS,
  type ListenerLimits,
  PresentedChallenges,
  startChallengeListener,
} from './challenge-server.ts';
import type { ListenAddress } from './address.ts';
import {
  nameserverLookup,
  ownListenerAgent,
  selfCheck,
  type SelfCheckOptions,
  type SelfCheckResult,
} from './self-check.ts';
import type { HTTP01Solver } from './solver.ts';

export class EmbeddedHTTP01Solver implements HTTP01Solver {
  readonly presented = new PresentedChallenges();
  readonly #selfCheck: Omit<SelfCheckOptions, 'signal'>;

  constructor(selfCheckOptions: Omit<SelfCheckOptions, 'signal'> = {}) {
    const { nameservers, lookup } = selfCheckOptions;
    this.#selfCheck = {
      ...selfCheckOptions,
      ...(!lookup && nameservers?.length ? { lookup: nameserverLookup(nameservers) } : {}),
      // The passes this process's own listener answers follow one another at once (ADR 1011): one kept-alive
      // connection carries them, where one each made connecting and closing most of the self-check's CPU.
      agent: selfCheckOptions.agent ?? ownListenerAgent(),
    };
  }

  present(challenge: Challenge): Promise<void> {
    const { token, dnsName, key } = challenge.spec;
    this.presented.present(token, dnsName, key);
    return Promise.resolve();
  }

  async check(challenge: Challenge, signal?: AbortSignal, requiredPasses?: number): Promise<SelfCheckResult> {
    // As upstream: present again first, in case the key was cleaned up in between (a restart).
    await this.present(challenge);
    const { dnsName, token, key } = challenge.spec;
    return selfCheck(
      { dnsName, token, key },
      {
        ...this.#selfCheck,
        localAnswers: this.presented.localAnswers,
        ...(requiredPasses !== undefined ? { requiredPasses } : {}),
        signal,
      },
    );
  }

  cleanUp(challenge: Challenge): Promise<void> {
    this.presented.remove(challenge.spec.token, challenge.spec.dnsName);
    return Promise.resolve();
  }

  /** Starts serving what is presented on `address` (limits other than the defaults are for tests). */
  listen(address: ListenAddress, limits: ListenerLimits = LISTENER_LIMITS): Promise<ChallengeListener> {
    return startChallengeListener(address, this.presented, limits);
  }
}
