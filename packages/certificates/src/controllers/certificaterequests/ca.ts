import type { CertificateRequest } from '../../api/types.ts';
import { signCertificate } from '../../pki/index.ts';
import type { ControllerContext } from '../context.ts';
import {
  cachedCaKeyPair,
  caValidityProblem,
  InvalidDataError,
  type CAKeyPair,
} from '../issuers/ca-keypair.ts';
import { issuersForSecret } from '../issuers/ca-secret.ts';
import { resourceNamespace, type IssuerHandle } from '../issuers/generic.ts';
import type { StatusDraft } from './draft.ts';
import { requestsForIssuer } from './issuer-ref.ts';
import { signingOptions } from './request.ts';
import { needsWork, signingFailure, type SignOutcome, type Signer } from './signer.ts';

/**
 * The CA signer (cert-manager's certificaterequests/ca): signs with the key pair in the issuer's
 * `spec.ca.secretName` Secret, read from the request's namespace for an Issuer and from the cluster resource
 * namespace for a ClusterIssuer. That Secret is unlabelled, so `ctx.secrets.getWithData` fetches it live: one GET
 * per signing, as cert-manager with filtered Secret caching. A labelled one is cached as facts (docs/adr/1140)
 * and read live once per version while signings follow each other.
 */

/**
 * The issuer's CA key pair, or the Pending outcome saying why there is none that can sign. Also the
 * CertificateSigningRequest CA signer's (certificatesigningrequests/ca.ts).
 */
export async function caKeyPair(
  ctx: ControllerContext,
  handle: IssuerHandle,
): Promise<CAKeyPair | SignOutcome> {
  const namespace = resourceNamespace(ctx, handle);
  const secretName = handle.issuer.spec?.ca?.secretName ?? '';
  let secret;
  try {
    secret = await ctx.secrets.getWithData(namespace, secretName);
  } catch (err) {
    const message = `Failed to get certificate key pair from secret ${namespace}/${secretName}: ${(err as Error).message}`;
    return { pending: { reason: 'SecretGetError', message } };
  }
  if (!secret) {
    const message = `Referenced secret ${namespace}/${secretName} not found: secrets "${secretName}" not found`;
    return { pending: { reason: 'SecretMissing', message } };
  }
  let pair: CAKeyPair;
  try {
    pair = cachedCaKeyPair(secret);
  } catch (err) {
    if (!(err instanceof InvalidDataError)) throw err;
    const message = `Failed to parse signing CA keypair from secret ${namespace}/${secretName}: ${err.message}`;
    return { pending: { reason: 'SecretInvalidData', message } };
  }
  // The issuer reports this too, but a request may get here first (the CA just expired, or the Secret was
  // just replaced). It is the Secret that must change, not the request: Pending, not Failed, so that the
  // Certificate is not put into failure backoff and the request is signed as soon as the Secret is fixed.
  const invalid = caValidityProblem(pair.cert, ctx.now());
  if (invalid) {
    const message = `Signing CA keypair in secret ${namespace}/${secretName} cannot sign: ${invalid}`;
    return { pending: { reason: 'SecretInvalidData', message } };
  }
  return pair;
}

async function sign(ctx: ControllerContext, draft: StatusDraft, handle: IssuerHandle): Promise<SignOutcome> {
  const pair = await caKeyPair(ctx, handle);
  if (!('key' in pair)) return pair;
  const ca = handle.issuer.spec?.ca;
  try {
    const { certPem, caPem, leaf } = await signCertificate(
      signingOptions(draft.cr, { certPem: pair.certPem, key: pair.key }, ctx.now(), {
        crlDistributionPoints: ca?.crlDistributionPoints,
        ocspServers: ca?.ocspServers,
        issuingCertificateURLs: ca?.issuingCertificateURLs,
      }),
    );
    return { issued: { certPem, caPem, leaf } };
  } catch (err) {
    return signingFailure('ca', err);
  }
}

/**
 * A change to an issuer's CA Secret brings back the requests waiting on that issuer. The issuer controller
 * sees the change too, but only wakes them when the issuer's readiness flips; a request left Pending by a
 * Secret the issuer still showed as Ready (the race above) would otherwise wait out its backoff.
 */
function watchCaSecrets(ctx: ControllerContext, enqueue: (cr: CertificateRequest) => void): void {
  ctx.secrets.onChange((secret) => {
    const { namespace, name } = secret.metadata ?? {};
    if (!namespace || !name) return;
    for (const handle of issuersForSecret(ctx, namespace, name)) {
      for (const cr of requestsForIssuer(ctx, handle)) if (needsWork(cr)) enqueue(cr);
    }
  });
}

export function caSigner(ctx: ControllerContext): Signer {
  return { type: 'ca', sign: (draft, handle) => sign(ctx, draft, handle), watch: watchCaSecrets };
}
