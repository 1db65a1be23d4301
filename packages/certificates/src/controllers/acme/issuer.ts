import { GROUP } from '../../api/constants.ts';
import { defaultIssuerRef } from '../../api/defaults.ts';
import type { IssuerReference } from '../../api/types.ts';
import type { AcmeClient } from '../../acme/client/index.ts';
import type { ControllerContext } from '../context.ts';
import { issuerInformer, type IssuerHandle, resourceNamespace } from '../issuers/generic.ts';

/**
 * The ACME issuer an Order or Challenge names, and the account client its issuer controller set up. Both
 * are looked up afresh on every sync, so an issuer that is re-registered (new key, new server) is used at once.
 */

export interface AcmeIssuer {
  handle: IssuerHandle;
  client: AcmeClient;
  /** Where the issuer's Secrets live: its namespace, or the cluster resource namespace. */
  resourceNamespace: string;
}

/** Why no client can be had yet; the object is retried with backoff (the issuer's Ready event wakes it too). */
export class AcmeIssuerUnavailable extends Error {
  override readonly name = 'AcmeIssuerUnavailable';
}

export function lookupAcmeIssuer(
  ctx: ControllerContext,
  namespace: string,
  ref: IssuerReference,
): AcmeIssuer {
  const full = defaultIssuerRef(ref);
  const kind = full.kind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer';
  if (full.group !== GROUP) throw new AcmeIssuerUnavailable(`issuer group ${full.group} is not ${GROUP}`);
  const key = kind === 'ClusterIssuer' ? full.name : `${namespace}/${full.name}`;
  const issuer = issuerInformer(ctx, kind).getStore().get(key);
  if (!issuer) throw new AcmeIssuerUnavailable(`${kind} ${key} not found`);
  if (!issuer.spec?.acme) throw new AcmeIssuerUnavailable(`${kind} ${key} is not an ACME issuer`);
  const client = ctx.acmeAccounts.get(issuer.metadata?.uid ?? '');
  if (!client) {
    throw new AcmeIssuerUnavailable(`ACME client for ${kind} ${key} not yet set up (is the issuer Ready?)`);
  }
  const handle: IssuerHandle = { kind, issuer };
  return { handle, client, resourceNamespace: resourceNamespace(ctx, handle) };
}
