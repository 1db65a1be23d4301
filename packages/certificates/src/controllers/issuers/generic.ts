import type { ResourceClient, SharedInformer } from '@certkit/runtime';
import type { GenericIssuer, IssuerSpec } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';

/**
 * Issuers and ClusterIssuers share spec and status and differ in scope: a ClusterIssuer's Secrets live in the
 * cluster resource namespace. These helpers let the issuer and signer controllers treat both kinds alike.
 */

export type IssuerKind = 'Issuer' | 'ClusterIssuer';

/** An issuer together with its kind (objects from a list need not carry `kind`). */
export interface IssuerHandle {
  kind: IssuerKind;
  issuer: GenericIssuer;
}

/** apiutil.NameForIssuer's names. */
export type IssuerType = 'acme' | 'ca' | 'vault' | 'selfsigned' | 'venafi';

/** The configured issuer type, in NameForIssuer's order of precedence; undefined when none is set. */
export function issuerType(spec: IssuerSpec | undefined): IssuerType | undefined {
  if (!spec) return undefined;
  if (spec.acme) return 'acme';
  if (spec.ca) return 'ca';
  if (spec.vault) return 'vault';
  if (spec.selfSigned) return 'selfsigned';
  if (spec.venafi) return 'venafi';
  return undefined;
}

/** IssuerOptions.ResourceNamespace: where the issuer's Secrets (the CA key pair) are read from. */
export function resourceNamespace(ctx: ControllerContext, handle: IssuerHandle): string {
  return handle.kind === 'ClusterIssuer'
    ? ctx.options.clusterResourceNamespace
    : (handle.issuer.metadata?.namespace ?? '');
}

export function issuerInformer(ctx: ControllerContext, kind: IssuerKind): SharedInformer<GenericIssuer> {
  return kind === 'ClusterIssuer' ? ctx.clusterIssuers : ctx.issuers;
}

export function issuerClient(ctx: ControllerContext, kind: IssuerKind): ResourceClient<GenericIssuer> {
  return kind === 'ClusterIssuer' ? ctx.clusterIssuerClient : ctx.issuerClient;
}

/** `Issuer ns/name` or `ClusterIssuer name`, for messages and logs. */
export function describeIssuer(handle: IssuerHandle): string {
  const { namespace, name } = handle.issuer.metadata ?? {};
  return `${handle.kind} ${namespace ? `${namespace}/` : ''}${name}`;
}
