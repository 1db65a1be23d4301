import type { ControllerContext } from '../context.ts';
import type { GenericIssuer } from '../../api/types.ts';
import { issuerInformer, type IssuerHandle, type IssuerKind } from './generic.ts';

/**
 * Which issuers read a given Secret. create-context.ts indexes Issuers and ClusterIssuers under
 * `caSecret` = `<namespace>/<spec.ca.secretName>` (the cluster resource namespace for ClusterIssuers), so a
 * Secret event finds its issuers without walking them all (cert-manager's issuersForSecret walks every Issuer).
 */

export const CA_SECRET_INDEX = 'caSecret';

export function caSecretIndexValue(namespace: string, secretName: string): string {
  return `${namespace}/${secretName}`;
}

/** The index value of one issuer, or none when it is not a CA issuer. */
export function caSecretOf(
  ctx: ControllerContext,
  kind: IssuerKind,
  issuer: GenericIssuer,
): string | undefined {
  const secretName = issuer.spec?.ca?.secretName;
  if (!secretName) return undefined;
  const namespace =
    kind === 'ClusterIssuer' ? ctx.options.clusterResourceNamespace : issuer.metadata?.namespace;
  return namespace ? caSecretIndexValue(namespace, secretName) : undefined;
}

/** Every Issuer and ClusterIssuer whose CA key pair is the Secret `namespace/name`. */
export function issuersForSecret(ctx: ControllerContext, namespace: string, name: string): IssuerHandle[] {
  const value = caSecretIndexValue(namespace, name);
  const found: IssuerHandle[] = [];
  for (const kind of ['Issuer', 'ClusterIssuer'] as const) {
    const store = issuerInformer(ctx, kind).getStore();
    // The index is create-context's; scanning keeps this correct should a context be built without it.
    const issuers = store.hasIndex(CA_SECRET_INDEX)
      ? store.byIndex(CA_SECRET_INDEX, value)
      : store.list().filter((issuer) => caSecretOf(ctx, kind, issuer) === value);
    for (const issuer of issuers) found.push({ kind, issuer });
  }
  return found;
}
