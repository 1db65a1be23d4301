import type { KubeObject } from '@certkit/apimachinery';
import { type Indexer, keyFor, type Request } from '@certkit/runtime';
import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Annotations, GROUP, Kinds, SecretKeys } from '../../../api/constants.ts';
import type { Certificate, CertificateRequest } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { CERTIFICATE_SECRET_INDEX, REQUEST_CERTIFICATE_INDEX } from '../../create-context.ts';
import { hasSecretBytes, secretPrivateKey } from '../../parsed.ts';

/**
 * Reading the state of one Certificate from the shared caches (policies/gatherer.go DataForCertificate): its
 * Secret, and the CertificateRequests it controls for the current revision (the one that produced what is in
 * the Secret) and the next one (the issuance in progress, or the last failed one).
 */

export interface PolicyInput {
  certificate: Certificate;
  secret?: Secret;
  currentRevisionRequest?: CertificateRequest;
  nextRevisionRequest?: CertificateRequest;
  now: Date;
}

/** The Certificate a request names, from the cache; undefined when gone or being deleted. */
export function liveCertificate(ctx: ControllerContext, request: Request): Certificate | undefined {
  const cert = ctx.certificates.getStore().get(keyFor(request.namespace, request.name));
  if (!cert || cert.metadata.deletionTimestamp) return undefined;
  return cert;
}

/** metav1.IsControlledBy: a controller reference carrying the owner's uid. */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata?.uid;
  return (
    Boolean(uid) && (obj.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid)
  );
}

/** The Certificate controlling an object (CertificateRequest, next-key Secret), as a request. */
export function controllingCertificate(obj: KubeObject): Request | undefined {
  const ref = obj.metadata?.ownerReferences?.find(
    (r) => r.controller === true && r.kind === Kinds.Certificate && r.apiVersion?.split('/')[0] === GROUP,
  );
  return ref ? { namespace: obj.metadata?.namespace, name: ref.name } : undefined;
}

function byIndexOr<T extends KubeObject>(
  store: Indexer<T>,
  index: string,
  value: string,
  fallback: (o: T) => boolean,
) {
  // The index is the context's; a context built without it (a test's) still works, by a scan.
  return store.hasIndex(index) ? store.byIndex(index, value) : store.list().filter(fallback);
}

/** CertificateRequests controlled by the Certificate (same uid: a deleted namesake's do not count). */
export function ownedRequests(ctx: ControllerContext, cert: Certificate): CertificateRequest[] {
  const namespace = cert.metadata.namespace;
  const candidates = byIndexOr(
    ctx.certificateRequests.getStore(),
    REQUEST_CERTIFICATE_INDEX,
    keyFor(namespace, cert.metadata.name ?? ''),
    (cr) => cr.metadata.namespace === namespace,
  );
  return candidates.filter((cr) => isControlledBy(cr, cert));
}

/** Certificates in the namespace writing to this Secret. */
export function certificatesForSecret(
  ctx: ControllerContext,
  namespace: string,
  secretName: string,
): Certificate[] {
  return byIndexOr(
    ctx.certificates.getStore(),
    CERTIFICATE_SECRET_INDEX,
    keyFor(namespace, secretName),
    (c) => c.metadata.namespace === namespace && c.spec?.secretName === secretName,
  );
}

/** The revision a request was made for, or undefined when its annotation is missing or not an integer. */
export function requestRevision(cr: CertificateRequest): number | undefined {
  const text = cr.metadata.annotations?.[Annotations.certificateRevision];
  if (!text || !/^[+-]?\d+$/.test(text)) return undefined;
  return Number(text);
}

/** Revisions start at 1: the next is status.revision + 1, or 1 before the first issuance. */
export function nextRevision(cert: Certificate): number {
  return (cert.status?.revision ?? 0) + 1;
}

/** The single owned request for `revision`; throws on duplicates, which the request manager cleans up. */
export function requestForRevision(
  ctx: ControllerContext,
  cert: Certificate,
  revision: number,
  which: string,
): CertificateRequest | undefined {
  const matching = ownedRequests(ctx, cert).filter((cr) => requestRevision(cr) === revision);
  if (matching.length > 1) {
    throw new Error(
      `multiple CertificateRequests were found for the '${which}' revision ${revision}, issuance is skipped until there are no more duplicates`,
    );
  }
  return matching[0];
}

/**
 * The next private key (status.nextPrivateKeySecretName), parsed: undefined while there is none or it cannot
 * be read, which the key manager repairs by replacing the Secret.
 */
export async function nextPrivateKey(
  ctx: ControllerContext,
  cert: Certificate,
): Promise<KeyObject | undefined> {
  const name = cert.status?.nextPrivateKeySecretName;
  if (!name) return undefined;
  const secret = await ctx.secrets.getWithData(cert.metadata.namespace ?? '', name);
  if (!secret || !hasSecretBytes(secret, SecretKeys.tlsKey)) return undefined;
  const key = secretPrivateKey(secret);
  return 'error' in key ? undefined : key.value;
}

/** Everything the trigger and readiness policy chains look at. */
export async function gatherPolicyInput(ctx: ControllerContext, cert: Certificate): Promise<PolicyInput> {
  const secret = await ctx.secrets.get(cert.metadata.namespace ?? '', cert.spec.secretName);
  const revision = cert.status?.revision;
  return {
    certificate: cert,
    secret,
    currentRevisionRequest:
      revision !== undefined ? requestForRevision(ctx, cert, revision, 'current') : undefined,
    nextRevisionRequest: requestForRevision(ctx, cert, nextRevision(cert), 'next'),
    now: ctx.now(),
  };
}
