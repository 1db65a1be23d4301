/**
 * The Challenge an Order needs for one of its authorizations, before its key is computed
 * (pkg/controller/acmeorders/util.go buildPartialChallenge): the solver picked for the name, the Order's
 * overrides applied, the offered challenge of the solver's type, and cert-manager's name for it. None is
 * needed for an authorization that was already valid when fetched.
 */

import type { ACMEAuthorization, ACMEChallengeSolver, ChallengeSpec, Order } from '../../api/acme-types.ts';
import { challengeName } from '../names.ts';
import { applyHTTP01Overrides } from './overrides.ts';
import { pickSolver } from './select.ts';

export type PartialChallenge = { name: string; spec: Omit<ChallengeSpec, 'key'> };

const CHALLENGE_TYPES: Record<string, ChallengeSpec['type']> = { 'http-01': 'HTTP-01', 'dns-01': 'DNS-01' };

/** Throws (with upstream's messages) when no solver can answer or the overrides are contradictory. */
export function partialChallenge(
  order: Pick<Order, 'metadata' | 'spec'>,
  authorization: ACMEAuthorization,
  solvers: readonly ACMEChallengeSolver[],
): PartialChallenge {
  const picked = pickSolver(authorization, solvers, order.metadata.labels ?? {});
  if (!picked) throw new Error('no configured challenge solvers can be used for this challenge');
  const type = CHALLENGE_TYPES[picked.challenge.type];
  applyHTTP01Overrides(picked.solver, {
    namespace: order.metadata.namespace,
    annotations: order.metadata.annotations,
  });
  const spec: Omit<ChallengeSpec, 'key'> = {
    url: picked.challenge.url,
    authorizationURL: authorization.url,
    dnsName: authorization.identifier ?? '',
    wildcard: authorization.wildcard === true,
    type,
    token: picked.challenge.token,
    solver: picked.solver,
    issuerRef: order.spec.issuerRef,
  };
  return { name: challengeName(order.metadata.name ?? '', spec), spec };
}

/** One partial Challenge per authorization that is not already valid, in the Order's order. */
export function requiredChallenges(
  order: Pick<Order, 'metadata' | 'spec' | 'status'>,
  solvers: readonly ACMEChallengeSolver[],
): PartialChallenge[] {
  return (order.status?.authorizations ?? [])
    .filter((authorization) => authorization.initialState !== 'valid')
    .map((authorization) => partialChallenge(order, authorization, solvers));
}
