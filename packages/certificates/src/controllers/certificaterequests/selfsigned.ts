import { KeyObject } from 'node:crypto';
import { keyFor } from '@certkit/runtime';
import { Annotations, SecretKeys } from '../../api/constants.ts';
import type { CertificateRequest } from '../../api/types.ts';
import { parseCertificateRequest, parsePrivateKey, signCertificate } from '../../pki/index.ts';
import type { ControllerContext } from '../context.ts';
import { REQUEST_KEY_SECRET_INDEX } from '../create-context.ts';
import type { IssuerHandle } from '../issuers/generic.ts';
import type { StatusDraft } from './draft.ts';
import { csrPemOf, signingOptions } from './request.ts';
import { signingFailure, type SignOutcome, type Signer } from './signer.ts';

/**
 * The SelfSigned signer (cert-manager's certificaterequests/selfsigned): signs the request with its own
 * private key, found through the `cert-manager.io/private-key-secret-name` annotation that requestmanager
 * sets, and returns the certificate as its own CA.
 */

export const EMPTY_DN_MESSAGE =
  'Certificate will be issued with an empty Issuer DN, which contravenes RFC 5280 and could break some strict clients';

const KEY_ANNOTATION = Annotations.privateKeySecretName;

/**
 * The private key, or the Pending outcome explaining why there is none yet. `annotation` names where the
 * Secret's name came from, for the message (the CertificateSigningRequest signer reads another one).
 */
export async function privateKeyFromSecret(
  ctx: ControllerContext,
  namespace: string,
  secretName: string,
  annotation: string = KEY_ANNOTATION,
): Promise<KeyObject | SignOutcome> {
  let secret;
  try {
    // The next-private-key Secret is labelled, so this is normally served from the cache.
    secret = await ctx.secrets.getWithData(namespace, secretName);
  } catch (err) {
    const message = `Failed to get certificate key pair from secret ${namespace}/${secretName}: ${(err as Error).message}`;
    return { pending: { reason: 'ErrorGettingSecret', message } };
  }
  if (!secret) {
    const message = `Referenced secret ${namespace}/${secretName} not found: secrets "${secretName}" not found`;
    return { pending: { reason: 'MissingSecret', message } };
  }
  const keyData = secret.data?.[SecretKeys.tlsKey];
  const unusable = (why: string): SignOutcome => ({
    pending: {
      reason: 'ErrorParsingKey',
      message: `Failed to get key "${secretName}" referenced in annotation "${annotation}": ${why}`,
    },
  });
  if (!keyData) return unusable(`no data for "${SecretKeys.tlsKey}" in secret '${namespace}/${secretName}'`);
  try {
    return parsePrivateKey(Buffer.from(keyData, 'base64'));
  } catch (err) {
    return unusable((err as Error).message);
  }
}

/** RFC 5280 wants a non-empty issuer DN, which for a self-signed certificate is its subject. */
function hasEmptySubject(cr: CertificateRequest): boolean {
  try {
    return parseCertificateRequest(csrPemOf(cr)).literalSubject === '';
  } catch {
    return false; // An unreadable CSR fails in signing, with a better message.
  }
}

async function sign(ctx: ControllerContext, draft: StatusDraft, handle: IssuerHandle): Promise<SignOutcome> {
  const cr = draft.cr;
  const namespace = cr.metadata?.namespace ?? '';
  const secretName = cr.metadata?.annotations?.[KEY_ANNOTATION];
  if (!secretName) {
    const message = `Annotation "${KEY_ANNOTATION}" missing or reference empty: secret name missing`;
    return { failed: { reason: 'MissingAnnotation', message } };
  }
  const key = await privateKeyFromSecret(ctx, namespace, secretName);
  if (!(key instanceof KeyObject)) return key;
  if (hasEmptySubject(cr)) draft.event('Warning', 'BadConfig', EMPTY_DN_MESSAGE);
  try {
    const { certPem, leaf } = await signCertificate(
      signingOptions(cr, { selfSignedKey: key }, ctx.now(), {
        crlDistributionPoints: handle.issuer.spec?.selfSigned?.crlDistributionPoints,
      }),
    );
    // The certificate is its own CA.
    return { issued: { certPem, caPem: certPem, leaf } };
  } catch (err) {
    return signingFailure('selfsigned', err);
  }
}

/**
 * Requests whose private key Secret changed (handleSecretReferenceWorkFunc); metadata-only events carry the
 * name and namespace, which is all that is matched on.
 */
function watchKeySecrets(ctx: ControllerContext, enqueue: (cr: CertificateRequest) => void): void {
  ctx.secrets.onChange((secret) => {
    const { namespace, name } = secret.metadata ?? {};
    if (!namespace || !name) return;
    const store = ctx.certificateRequests.getStore();
    for (const cr of store.byIndex(REQUEST_KEY_SECRET_INDEX, keyFor(namespace, name))) enqueue(cr);
  });
}

export function selfSignedSigner(ctx: ControllerContext): Signer {
  return {
    type: 'selfsigned',
    sign: (draft, handle) => sign(ctx, draft, handle),
    watch: watchKeySecrets,
  };
}
