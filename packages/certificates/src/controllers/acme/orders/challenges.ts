import { ACME_API_VERSION, AcmeFinalizers, AcmeKinds } from '../../../api/acme-constants.ts';
import type { ACMEChallengeType, Challenge, ChallengeSpec, Order } from '../../../api/types.ts';
import type { ACMEChallengeSolver } from '../../../api/acme-types.ts';
import { dns01TxtValue, keyAuthorization } from '../../../acme/client/index.ts';
import { challengeName } from '../../../acme/names.ts';
import { pickSolver } from '../../../acme/solvers/select.ts';

/**
 * The Challenges an Order needs (cert-manager's acmeorders `buildRequiredChallenges`): one per authorization
 * the server has not already validated, with the solver the issuer's selectors pick for its name, named from
 * a hash of the spec and owned by the Order.
 */

const WIRE_TO_SPEC_TYPE: Record<string, ACMEChallengeType> = { 'http-01': 'HTTP-01', 'dns-01': 'DNS-01' };

export interface RequiredChallenges {
  challenges: Challenge[];
  /** Identifiers no solver can answer (the Order waits for a fixed issuer, with a Warning event). */
  unsolvable: string[];
}

export function requiredChallenges(
  order: Order,
  solvers: readonly ACMEChallengeSolver[],
  thumbprint: string,
): RequiredChallenges {
  const challenges: Challenge[] = [];
  const unsolvable: string[] = [];
  for (const authorization of order.status?.authorizations ?? []) {
    if (authorization.initialState === 'valid') continue;
    const picked = pickSolver(authorization, solvers, order.metadata.labels ?? {});
    const type = picked && WIRE_TO_SPEC_TYPE[picked.challenge.type];
    if (!picked || !type) {
      unsolvable.push(
        `${authorization.wildcard ? '*.' : ''}${authorization.identifier ?? authorization.url}`,
      );
      continue;
    }
    const keyAuth = keyAuthorization(picked.challenge.token, thumbprint);
    const spec: ChallengeSpec = {
      url: picked.challenge.url,
      authorizationURL: authorization.url,
      dnsName: authorization.identifier ?? '',
      wildcard: authorization.wildcard ?? false,
      type,
      token: picked.challenge.token,
      key: type === 'DNS-01' ? dns01TxtValue(keyAuth) : keyAuth,
      solver: picked.solver,
      issuerRef: { ...order.spec.issuerRef },
    };
    challenges.push({
      apiVersion: ACME_API_VERSION,
      kind: AcmeKinds.Challenge,
      metadata: {
        name: challengeName(order.metadata.name!, spec),
        namespace: order.metadata.namespace,
        labels: { ...order.metadata.labels },
        annotations: { ...order.metadata.annotations },
        ownerReferences: [
          {
            apiVersion: ACME_API_VERSION,
            kind: AcmeKinds.Order,
            name: order.metadata.name!,
            uid: order.metadata.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        // Set at creation, so that a Challenge deleted before its first sync is still cleaned up.
        finalizers: [AcmeFinalizers.challenge],
      },
      spec,
    });
  }
  return { challenges, unsolvable };
}
