import { signCertificate } from '../../pki/index.ts';
import type { ControllerContext } from '../context.ts';
import { cachedCaKeyPair, InvalidDataError, type CAKeyPair } from '../issuers/ca-keypair.ts';
import { resourceNamespace, type IssuerHandle } from '../issuers/generic.ts';
import type { StatusDraft } from './draft.ts';
import { signingOptions } from './request.ts';
import { signingFailure, type SignOutcome, type Signer } from './signer.ts';

/**
 * The CA signer (cert-manager's certificaterequests/ca): signs with the key pair in the issuer's
 * `spec.ca.secretName` Secret, read from the request's namespace for an Issuer and from the cluster resource
 * namespace for a ClusterIssuer. That Secret is unlabelled, so `ctx.secrets.get` fetches it live: one GET per
 * signing, as cert-manager with filtered Secret caching.
 */

async function keyPair(ctx: ControllerContext, handle: IssuerHandle): Promise<CAKeyPair | SignOutcome> {
  const namespace = resourceNamespace(ctx, handle);
  const secretName = handle.issuer.spec?.ca?.secretName ?? '';
  let secret;
  try {
    secret = await ctx.secrets.get(namespace, secretName);
  } catch (err) {
    const message = `Failed to get certificate key pair from secret ${namespace}/${secretName}: ${(err as Error).message}`;
    return { pending: { reason: 'SecretGetError', message } };
  }
  if (!secret) {
    const message = `Referenced secret ${namespace}/${secretName} not found: secrets "${secretName}" not found`;
    return { pending: { reason: 'SecretMissing', message } };
  }
  try {
    return cachedCaKeyPair(secret);
  } catch (err) {
    if (!(err instanceof InvalidDataError)) throw err;
    const message = `Failed to parse signing CA keypair from secret ${namespace}/${secretName}: ${err.message}`;
    return { pending: { reason: 'SecretInvalidData', message } };
  }
}

async function sign(ctx: ControllerContext, draft: StatusDraft, handle: IssuerHandle): Promise<SignOutcome> {
  const pair = await keyPair(ctx, handle);
  if (!('key' in pair)) return pair;
  const ca = handle.issuer.spec?.ca;
  try {
    const { certPem, caPem } = await signCertificate(
      signingOptions(draft.cr, { certPem: pair.certPem, key: pair.key }, ctx.now(), {
        crlDistributionPoints: ca?.crlDistributionPoints,
        ocspServers: ca?.ocspServers,
        issuingCertificateURLs: ca?.issuingCertificateURLs,
      }),
    );
    return { issued: { certPem, caPem } };
  } catch (err) {
    return signingFailure('ca', err);
  }
}

export function caSigner(ctx: ControllerContext): Signer {
  return { type: 'ca', sign: (draft, handle) => sign(ctx, draft, handle) };
}
