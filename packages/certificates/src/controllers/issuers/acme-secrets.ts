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

/**
 * Per DNS-01 provider, the Secret references a solver cannot work without, in cert-manager's order
 * (`RequiredDNS01SolverSecrets`, from the webhook validation's list). The webhook solver's config is free
 * JSON, so it names none.
 */
const DNS01_SECRET_FIELDS: Record<string, readonly string[]> = {
  akamai: ['accessTokenSecretRef', 'clientSecretSecretRef', 'clientTokenSecretRef'],
  azureDNS: ['clientSecretSecretRef'],
  cloudDNS: ['serviceAccountSecretRef'],
  cloudflare: ['apiKeySecretRef', 'apiTokenSecretRef'],
  route53: ['secretAccessKeySecretRef', 'accessKeyIDSecretRef'],
  acmeDNS: ['accountSecretRef'],
  digitalocean: ['tokenSecretRef'],
  rfc2136: ['tsigSecretSecretRef'],
};

/** The Secrets the issuer's DNS-01 solvers need (named ones only), solver by solver. */
export function dns01SolverSecretRefs(spec: object | undefined): SecretKeyRef[] {
  // Read as untyped JSON: the spec may come from an object admission has not yet judged.
  const acme = spec as Record<string, unknown> | undefined;
  const refs: SecretKeyRef[] = [];
  const solvers = Array.isArray(acme?.solvers) ? (acme.solvers as unknown[]) : [];
  for (const solver of solvers) {
    const dns01 = (solver as { dns01?: Record<string, unknown> } | null)?.dns01;
    if (!dns01 || typeof dns01 !== 'object') continue;
    for (const [provider, fields] of Object.entries(DNS01_SECRET_FIELDS)) {
      const config = dns01[provider] as Record<string, unknown> | undefined;
      if (!config || typeof config !== 'object') continue;
      for (const field of fields) {
        const ref = config[field] as { name?: unknown; key?: unknown } | undefined;
        if (typeof ref?.name === 'string' && ref.name) {
          refs.push({ name: ref.name, ...(typeof ref.key === 'string' ? { key: ref.key } : {}) });
        }
      }
    }
  }
  return refs;
}

/** The names of the Secrets an ACME issuer spec reads (none for other issuer types). */
export function acmeSecretNames(spec: { acme?: object } | undefined): string[] {
  const acme = spec?.acme as Record<string, unknown> | undefined;
  if (!acme) return [];
  const names = new Set<string>();
  const key = (acme.privateKeySecretRef as { name?: unknown } | undefined)?.name;
  if (typeof key === 'string' && key) names.add(key);
  const eab = (acme.externalAccountBinding as { keySecretRef?: { name?: unknown } } | undefined)?.keySecretRef
    ?.name;
  if (typeof eab === 'string' && eab) names.add(eab);
  for (const ref of dns01SolverSecretRefs(acme)) names.add(ref.name);
  return [...names];
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
