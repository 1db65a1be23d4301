import type { ControllerContext } from '../context.ts';
import { issuerInformer, type IssuerHandle } from './generic.ts';

/**
 * Which ACME issuers read a given Secret: their account key (`spec.acme.privateKeySecretRef`) or their EAB
 * MAC key (`spec.acme.externalAccountBinding.keySecretRef`), in the issuer's namespace or, for
 * ClusterIssuers, the cluster resource namespace (cert-manager's `pkg/controller/issuers/checks.go`).
 * create-context.ts indexes both kinds under `acmeSecret` = `<namespace>/<name>`.
 */

export const ACME_SECRET_INDEX = 'acmeSecret';

/** The names of the Secrets an ACME issuer spec reads (none for other issuer types). */
export function acmeSecretNames(spec: { acme?: Record<string, unknown> } | undefined): string[] {
  const acme = spec?.acme;
  if (!acme) return [];
  const names: string[] = [];
  const key = (acme.privateKeySecretRef as { name?: unknown } | undefined)?.name;
  if (typeof key === 'string' && key) names.push(key);
  const eab = (acme.externalAccountBinding as { keySecretRef?: { name?: unknown } } | undefined)?.keySecretRef
    ?.name;
  if (typeof eab === 'string' && eab && eab !== key) names.push(eab);
  return names;
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
