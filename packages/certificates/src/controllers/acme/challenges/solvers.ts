import type { Challenge } from '../../../api/types.ts';
import type { DNS01Challenge } from '../../../acme/dns01/solver.ts';
import type { ControllerContext } from '../../context.ts';

/**
 * The solver a Challenge's type calls for, behind one shape: HTTP-01 through the embedded listener
 * (`ctx.http01Solver`), DNS-01 through the DNS01Solver with the provider its `spec.solver.dns01` names.
 * Neither needs the issuer itself, so a Challenge whose issuer is gone is still cleaned up.
 */

export interface ChallengeSolver {
  present(signal?: AbortSignal): Promise<void>;
  /**
   * DNS-01: the whole propagation check. HTTP-01: one pass of the self-check (ChallengeSync repeats it);
   * `answeredHere` when the controller's own listener answered that pass.
   */
  check(signal?: AbortSignal): Promise<{ answeredHere: boolean }>;
  cleanUp(signal?: AbortSignal): Promise<void>;
}

export class SolverUnavailable extends Error {
  override readonly name = 'SolverUnavailable';
}

/** Where the solver's Secret references resolve: the Issuer's namespace, or the cluster resource namespace. */
export function credentialsNamespace(ctx: ControllerContext, ch: Challenge): string {
  return ch.spec.issuerRef.kind === 'ClusterIssuer'
    ? ctx.options.clusterResourceNamespace
    : (ch.metadata.namespace ?? '');
}

function dns01Challenge(ctx: ControllerContext, ch: Challenge): DNS01Challenge {
  return {
    dnsName: ch.spec.dnsName,
    key: ch.spec.key,
    dns01: (ch.spec.solver.dns01 ?? {}) as Record<string, unknown>,
    resourceNamespace: credentialsNamespace(ctx, ch),
    allowAmbientCredentials: ch.spec.issuerRef.kind === 'ClusterIssuer',
  };
}

export function solverFor(ctx: ControllerContext, ch: Challenge): ChallengeSolver {
  if (ch.spec.type === 'DNS-01') {
    const challenge = dns01Challenge(ctx, ch);
    return {
      present: (signal) => ctx.dns01Solver.present(challenge, signal),
      check: async (signal) => {
        await ctx.dns01Solver.check(challenge, signal);
        return { answeredHere: false };
      },
      cleanUp: (signal) => ctx.dns01Solver.cleanUp(challenge, signal),
    };
  }
  const http01 = ctx.http01Solver;
  const missing = () =>
    Promise.reject(
      new SolverUnavailable(
        'HTTP-01 challenges are answered by the embedded solver, which is off: start the controller with --acme-http01-listen-address',
      ),
    );
  if (!http01) return { present: missing, check: missing, cleanUp: () => Promise.resolve() };
  return {
    present: () => http01.present(ch),
    // As upstream, presenting again first brings back whatever went missing since.
    check: async (signal) => {
      await http01.present(ch);
      return http01.check(ch, signal, 1);
    },
    cleanUp: () => http01.cleanUp(ch),
  };
}
