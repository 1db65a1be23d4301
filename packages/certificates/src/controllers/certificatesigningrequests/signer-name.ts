import type { IssuerKind } from '../issuers/generic.ts';

/**
 * cert-manager's signer names for Kubernetes CertificateSigningRequests: `issuers.cert-manager.io/<namespace>.<name>`
 * for an Issuer and `clusterissuers.cert-manager.io/<name>` for a ClusterIssuer. A ClusterIssuer's name may
 * hold dots, so all after the `/` is its name; an Issuer's namespace is what comes before the first dot (a
 * namespace cannot hold one). Parsed as cert-manager's SignerIssuerRefFromSignerName parses them, so that the
 * same CSRs are taken and the same ones left alone.
 */

export interface SignerIssuerRef {
  /** `issuers`, `clusterissuers`, or whatever else the name has there. */
  type: string;
  /** The API group, `cert-manager.io` for cert-manager's own issuers. */
  group: string;
  /** Empty for a ClusterIssuer, and for an Issuer named without a namespace. */
  namespace: string;
  name: string;
}

/** The issuer a signer name refers to; undefined when the name is not of this form. */
export function signerIssuerRef(signerName: string): SignerIssuerRef | undefined {
  const parts = signerName.split('/');
  if (parts.length !== 2) return undefined;
  const [typeAndGroup, path] = parts;
  const dot = typeAndGroup.indexOf('.');
  if (dot < 0) return undefined;
  const type = typeAndGroup.slice(0, dot);
  const group = typeAndGroup.slice(dot + 1);
  const labels = path.split('.');
  if (labels[0] === '') return undefined;
  if (labels.length === 1) return { type, group, namespace: '', name: labels[0] };
  if (type === 'clusterissuers') return { type, group, namespace: '', name: path };
  return { type, group, namespace: labels[0], name: labels.slice(1).join('.') };
}

/** The issuer kind of a signer name's type (IssuerKindFromType); undefined for any other type. */
export function issuerKindOfType(type: string): IssuerKind | undefined {
  if (type === 'issuers') return 'Issuer';
  if (type === 'clusterissuers') return 'ClusterIssuer';
  return undefined;
}
