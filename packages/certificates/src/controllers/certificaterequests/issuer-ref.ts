import { NAMESPACE_INDEX } from '@certkit/runtime';
import { GROUP } from '../../api/constants.ts';
import { defaultIssuerRef } from '../../api/defaults.ts';
import type { CertificateRequest, IssuerReference } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import type { IssuerHandle, IssuerKind } from '../issuers/generic.ts';

/**
 * From a CertificateRequest's issuerRef to the issuer in the informers' stores (issuer.Helper's
 * GetGenericIssuer), and back: from an issuer to the requests that name it.
 */

export type IssuerLookup =
  | { handle: IssuerHandle }
  /** A cert-manager.io issuer kind that is not in the cache. */
  | { missing: IssuerKind }
  /** Another group's issuer, or a kind cert-manager.io does not have: some other controller's business. */
  | { foreign: true };

function refKind(ref: Required<IssuerReference>): IssuerKind | undefined {
  if (ref.group !== GROUP) return undefined;
  return ref.kind === 'Issuer' || ref.kind === 'ClusterIssuer' ? ref.kind : undefined;
}

export function lookupIssuer(ctx: ControllerContext, cr: CertificateRequest): IssuerLookup {
  const ref = defaultIssuerRef(cr.spec?.issuerRef ?? { name: '' });
  const kind = refKind(ref);
  if (!kind) return { foreign: true };
  // In namespaced mode cert-manager has no ClusterIssuer lister: such requests wait as if it were missing.
  if (kind === 'ClusterIssuer' && ctx.options.namespace) return { missing: kind };
  const issuer =
    kind === 'ClusterIssuer'
      ? ctx.clusterIssuers.getStore().get(ref.name)
      : ctx.issuers.getStore().get(`${cr.metadata?.namespace}/${ref.name}`);
  return issuer ? { handle: { kind, issuer } } : { missing: kind };
}

/** Whether the request's issuerRef names this issuer. */
export function refersTo(cr: CertificateRequest, handle: IssuerHandle): boolean {
  const ref = defaultIssuerRef(cr.spec?.issuerRef ?? { name: '' });
  if (refKind(ref) !== handle.kind || ref.name !== handle.issuer.metadata?.name) return false;
  return handle.kind === 'ClusterIssuer' || cr.metadata?.namespace === handle.issuer.metadata?.namespace;
}

/** The requests naming the issuer (for an Issuer, only its own namespace is searched). */
export function requestsForIssuer(ctx: ControllerContext, handle: IssuerHandle): CertificateRequest[] {
  const store = ctx.certificateRequests.getStore();
  const candidates =
    handle.kind === 'Issuer'
      ? store.byIndex(NAMESPACE_INDEX, handle.issuer.metadata?.namespace ?? '')
      : store.list();
  return candidates.filter((cr) => refersTo(cr, handle));
}
