import { newControllerRef } from '@certkit/apimachinery';
import { ACME_API_VERSION, AcmeFinalizers, AcmeKinds } from '../../../api/acme-constants.ts';
import type { Challenge, Order } from '../../../api/types.ts';
import type { ACMEChallengeSolver } from '../../../api/acme-types.ts';
import { dns01TxtValue, keyAuthorization } from '../../../acme/client/index.ts';
import { partialChallenge } from '../../../acme/solvers/challenge-spec.ts';

/**
 * The Challenge objects an Order needs (cert-manager's acmeorders `buildRequiredChallenges` and
 * `buildChallenge`): one per authorization the server has not already validated, from the partial spec
 * `partialChallenge` builds (solver, overrides, name), with its key and owned by the Order.
 */

export interface RequiredChallenges {
  challenges: Challenge[];
  /** Why a name cannot be solved (the Order waits for a fixed issuer, with a Warning event). */
  problems: string[];
}

export function requiredChallengeObjects(
  order: Order,
  solvers: readonly ACMEChallengeSolver[],
  thumbprint: string,
): RequiredChallenges {
  const challenges: Challenge[] = [];
  const problems: string[] = [];
  for (const authorization of order.status?.authorizations ?? []) {
    if (authorization.initialState === 'valid') continue;
    let partial;
    try {
      partial = partialChallenge(order, authorization, solvers);
    } catch (err) {
      const name = `${authorization.wildcard ? '*.' : ''}${authorization.identifier ?? authorization.url}`;
      problems.push(`${name}: ${(err as Error).message}`);
      continue;
    }
    const keyAuth = keyAuthorization(partial.spec.token, thumbprint);
    challenges.push({
      apiVersion: ACME_API_VERSION,
      kind: AcmeKinds.Challenge,
      metadata: {
        name: partial.name,
        namespace: order.metadata.namespace,
        labels: { ...order.metadata.labels },
        annotations: { ...order.metadata.annotations },
        ownerReferences: [newControllerRef(order, ACME_API_VERSION, AcmeKinds.Order)],
        // Set at creation, so that a Challenge deleted before its first sync is still cleaned up.
        finalizers: [AcmeFinalizers.challenge],
      },
      spec: {
        ...partial.spec,
        issuerRef: { ...partial.spec.issuerRef },
        key: partial.spec.type === 'DNS-01' ? dns01TxtValue(keyAuth) : keyAuth,
      },
    });
  }
  return { challenges, problems };
}
