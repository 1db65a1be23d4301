/**
 * The Secrets an ACME issuer reads: its account key, the external account binding's MAC key, and every
 * DNS-01 provider credential, in the order cert-manager's validation collects them (the `requiredSecrets` of
 * internal/apis/certmanager/validation/issuer.go). They live in the Issuer's namespace, or the cluster
 * resource namespace for a ClusterIssuer. The issuer controller re-queues on their events and checks that they
 * exist; `certkit secrets audit` lists the unlabelled ones, which the split Secret cache only keeps as metadata.
 */

import type { ACMEChallengeSolverDNS01, ACMEIssuer } from '../api/acme-types.ts';
import type { SecretKeySelector } from '../api/meta-types.ts';

export interface SecretReference {
  /** Secret name. */
  name: string;
  /** Key in its data, where the spec names one. */
  key?: string;
  /** The field that refers to it, e.g. `spec.acme.solvers[1].dns01.rfc2136.tsigSecretSecretRef`. */
  field: string;
}

/** The credentials of one DNS-01 solver; selectors without a name are skipped (ambient credentials). */
export function dns01SecretReferences(dns01: ACMEChallengeSolverDNS01, path: string): SecretReference[] {
  const refs: [SecretKeySelector | undefined, string][] = [
    [dns01.akamai?.accessTokenSecretRef, 'akamai.accessTokenSecretRef'],
    [dns01.akamai?.clientSecretSecretRef, 'akamai.clientSecretSecretRef'],
    [dns01.akamai?.clientTokenSecretRef, 'akamai.clientTokenSecretRef'],
    [dns01.azureDNS?.clientSecretSecretRef, 'azureDNS.clientSecretSecretRef'],
    [dns01.cloudDNS?.serviceAccountSecretRef, 'cloudDNS.serviceAccountSecretRef'],
    [dns01.cloudflare?.apiKeySecretRef, 'cloudflare.apiKeySecretRef'],
    [dns01.cloudflare?.apiTokenSecretRef, 'cloudflare.apiTokenSecretRef'],
    [dns01.route53?.secretAccessKeySecretRef, 'route53.secretAccessKeySecretRef'],
    [dns01.route53?.accessKeyIDSecretRef, 'route53.accessKeyIDSecretRef'],
    [dns01.acmeDNS?.accountSecretRef, 'acmeDNS.accountSecretRef'],
    [dns01.digitalocean?.tokenSecretRef, 'digitalocean.tokenSecretRef'],
    [dns01.rfc2136?.tsigSecretSecretRef, 'rfc2136.tsigSecretSecretRef'],
  ];
  return refs.flatMap(([ref, field]) =>
    ref?.name ? [{ name: ref.name, ...(ref.key ? { key: ref.key } : {}), field: `${path}.${field}` }] : [],
  );
}

/** Every Secret `spec.acme` refers to, account key first. */
export function acmeSecretReferences(acme: ACMEIssuer, path = 'spec.acme'): SecretReference[] {
  const out: SecretReference[] = [];
  if (acme.privateKeySecretRef?.name) {
    // The account key's key defaults to tls.key.
    out.push({
      name: acme.privateKeySecretRef.name,
      key: acme.privateKeySecretRef.key || 'tls.key',
      field: `${path}.privateKeySecretRef`,
    });
  }
  const eab = acme.externalAccountBinding?.keySecretRef;
  if (eab?.name) {
    out.push({
      name: eab.name,
      ...(eab.key ? { key: eab.key } : {}),
      field: `${path}.externalAccountBinding.keySecretRef`,
    });
  }
  (acme.solvers ?? []).forEach((solver, i) => {
    if (solver.dns01) out.push(...dns01SecretReferences(solver.dns01, `${path}.solvers[${i}].dns01`));
  });
  return out;
}
