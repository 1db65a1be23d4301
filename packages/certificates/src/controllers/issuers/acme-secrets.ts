import { acmeSecretReferences, dns01SecretReferences } from '../../acme/secret-references.ts';
import type { ACMEIssuer, IssuerSpec } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { issuerInformer, type IssuerHandle } from './generic.ts';

/**
 * Which ACME issuers read a given Secret: their account key (`spec.acme.privateKeySecretRef`), their EAB
 * MAC key (`spec.acme.externalAccountBinding.keySecretRef`) or a DNS-01 solver's credentials, in the
 * issuer's namespace or, for
 * ClusterIssuers, the cluster resource namespace (cert-manager's `pkg/controller/issuers/checks.go`).
 * create-context.ts indexes both kinds under `acmeSecret` = `<namespace>/<name>`.
 */

export const ACME_SECRET_INDEX = 'acmeSecret';

export interface SecretKeyRef {
  name: string;
  key?: string;
}

/** The Secrets the issuer's DNS-01 solvers need (named ones only), solver by solver, in cert-manager's order. */
export function dns01SolverSecretRefs(acme: ACMEIssuer | undefined): SecretKeyRef[] {
  // Objects from the cache passed admission, but a list that is not one must not stop the controller.
  const solvers = Array.isArray(acme?.solvers) ? acme.solvers : [];
  return solvers.flatMap((solver, i) =>
    solver?.dns01
      ? dns01SecretReferences(solver.dns01, `spec.acme.solvers[${i}].dns01`).map(({ name, key }) => ({
          name,
          ...(key ? { key } : {}),
        }))
      : [],
  );
}

/** The names of the Secrets an ACME issuer spec reads (none for other issuer types), each once. */
export function acmeSecretNames(spec: IssuerSpec | undefined): string[] {
  const acme = spec?.acme;
  if (!acme) return [];
  const solvers = Array.isArray(acme.solvers) ? acme.solvers : [];
  return [...new Set(acmeSecretReferences({ ...acme, solvers }).map((ref) => ref.name))];
}

export function acmeIssuersForSecret(
  ctx: ControllerContext,
  namespace: string,
  name: string,
): IssuerHandle[] {
  const value = `${namespace}/${name}`;
  const found: IssuerHandle[] = [];
  for (const kind of ['Issuer', 'ClusterIssuer'] as const) {
    const store = issuerInformer(ctx, kind).getStore();
    const issuers = store.hasIndex(ACME_SECRET_INDEX)
      ? store.byIndex(ACME_SECRET_INDEX, value)
      : store.list().filter((issuer) => {
          const ns =
            kind === 'ClusterIssuer' ? ctx.options.clusterResourceNamespace : issuer.metadata?.namespace;
          return ns === namespace && acmeSecretNames(issuer.spec).includes(name);
        });
    for (const issuer of issuers) found.push({ kind, issuer });
  }
  return found;
}
