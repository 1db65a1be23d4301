import { isAlreadyExists } from '@certkit/apimachinery';
import type { Reconciler, Result } from '@certkit/runtime';
import type { KeyObject } from 'node:crypto';
import { Annotations, API_VERSION, Kinds } from '../../../api/constants.ts';
import { applyCertificateDefaults } from '../../../api/defaults.ts';
import { rememberValidRequest } from '../../../api/validation/csr.ts';
import type { Certificate, CertificateRequest } from '../../../api/types.ts';
import { buildCertificateRequest } from '../../../pki/index.ts';
import type { ControllerContext } from '../../context.ts';
import { hasPublicKey, rememberBuiltRequest, requestCsr, valueOf } from '../../parsed.ts';
import {
  isControlledBy,
  liveCertificate,
  nextPrivateKey,
  nextRevision,
  ownedRequests,
  requestRevision,
} from '../shared/gather.ts';
import { deleteRequests } from '../shared/delete-requests.ts';
import { annotationsToCopy, certificateRequestName } from '../shared/names.ts';
import { certificateOwnerReference } from '../shared/owner-reference.ts';
import { invalidSpec, requestMatchesSpec } from '../shared/policies.ts';
import { getCondition, hasCondition, REQUEUE } from '../shared/status.ts';

/**
 * certificates-request-manager: once the next private key exists, makes sure there is exactly one
 * CertificateRequest for the next revision that matches the spec and that key, named
 * `<certificate>-<revision>`, deleting owned requests that cannot lead anywhere.
 */

export const REQUEST_MANAGER_CONTROLLER = 'certificates-request-manager';

/** This controller's Event recorder: its Events name it as their source (docs/adr/0903). */
const events = (ctx: ControllerContext) => ctx.recorder.from(REQUEST_MANAGER_CONTROLLER);

/**
 * Whether the request manager may do anything for the Certificate in this state: only while it is issuing.
 * Its event handlers wake it only then (index.ts): the start of an issuance is a Certificate event.
 */
export function requestManagerMayAct(cert: Certificate): boolean {
  return hasCondition(cert, 'Issuing', 'True');
}

export function requestManagerReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert || !requestManagerMayAct(cert)) return;
    // The readiness controller reports invalid specs (Ready=False InvalidSpec); no request is made for one.
    if (invalidSpec(cert)) return;

    const key = await nextPrivateKey(ctx, cert);
    if (!key) return;

    let requests = ownedRequests(ctx, cert);
    const unnumbered = requests.filter((cr) => requestRevision(cr) === undefined);
    await deleteRequests(ctx, unnumbered, signal);
    const revision = nextRevision(cert);
    requests = requests.filter((cr) => requestRevision(cr) === revision);
    requests = await keepMatching(ctx, cert, key, requests, signal);
    requests = await dropFailedInEarlierIssuance(ctx, cert, requests, signal);

    if (requests.length > 1) {
      ctx.log({
        level: 'error',
        msg: 'Multiple matching CertificateRequest resources exist, delete one of them',
        namespace: cert.metadata.namespace,
        name: cert.metadata.name,
      });
      return;
    }
    if (requests.length === 1) return;
    return createRequest(ctx, cert, key, revision, cert.status!.nextPrivateKeySecretName!, signal);
  };
}

/** Requests for the next revision that still match the spec and the next key; the others are deleted. */
async function keepMatching(
  ctx: ControllerContext,
  cert: Certificate,
  key: KeyObject,
  requests: CertificateRequest[],
  signal: AbortSignal,
): Promise<CertificateRequest[]> {
  const keep: CertificateRequest[] = [];
  for (const cr of requests) {
    if (matches(cert, key, cr)) keep.push(cr);
    else await deleteRequests(ctx, [cr], signal);
  }
  return keep;
}

function matches(cert: Certificate, key: KeyObject, cr: CertificateRequest): boolean {
  try {
    return (
      requestMatchesSpec(cr, cert.spec).length === 0 &&
      hasPublicKey(key, valueOf(requestCsr(cr)).publicKeyDigest)
    );
  } catch {
    return false; // an unreadable CSR can never be signed into something usable
  }
}

/**
 * A request for this revision that failed before the current Issuing=True was set belongs to an earlier
 * attempt (the trigger retried after the backoff): delete it so that a fresh one is made.
 */
async function dropFailedInEarlierIssuance(
  ctx: ControllerContext,
  cert: Certificate,
  requests: CertificateRequest[],
  signal: AbortSignal,
): Promise<CertificateRequest[]> {
  const issuingSince = Date.parse(getCondition(cert, 'Issuing')?.lastTransitionTime ?? '');
  const remaining: CertificateRequest[] = [];
  for (const cr of requests) {
    const ready = cr.status?.conditions?.find((c) => c.type === 'Ready');
    const failedAt = Date.parse(cr.status?.failureTime ?? '');
    if (ready?.status === 'False' && ready.reason === 'Failed' && failedAt < issuingSince) {
      await deleteRequests(ctx, [cr], signal);
    } else {
      remaining.push(cr);
    }
  }
  return remaining;
}

async function createRequest(
  ctx: ControllerContext,
  cert: Certificate,
  key: KeyObject,
  revision: number,
  keySecretName: string,
  signal: AbortSignal,
): Promise<Result | undefined> {
  let csrPem: string;
  try {
    // The CSR follows the defaulted spec (usages, encodeUsagesInRequest); the request's own fields are the
    // stored spec's, as cert-manager copies them.
    csrPem = await buildCertificateRequest(applyCertificateDefaults(cert).spec, key);
  } catch (err) {
    events(ctx).warning(
      cert,
      'RequestFailed',
      `Failed to generate CSR: ${(err as Error).message} - will not retry`,
    );
    return;
  }
  const cr = requestObject(cert, revision, keySecretName, csrPem);
  rememberValidRequest(cr.spec.request);
  rememberBuiltRequest(cr.spec.request, key);
  const namespace = cert.metadata.namespace ?? '';
  try {
    const created = await ctx.certificateRequestClient.create(namespace, cr, { signal });
    events(ctx).normal(
      cert,
      'Requested',
      `Created new CertificateRequest resource "${created.metadata.name}"`,
    );
    return;
  } catch (err) {
    if (!isAlreadyExists(err)) {
      events(ctx).warning(
        cert,
        'RequestFailed',
        `Failed to create CertificateRequest: ${(err as Error).message}`,
      );
      throw err;
    }
  }
  // The name is stable, so a request made a moment ago (not yet in the cache) answers AlreadyExists: it is
  // fine if it is ours and matches; otherwise it goes, and the next reconcile makes the right one.
  const existing = await ctx.certificateRequestClient.get(namespace, cr.metadata.name ?? '', { signal });
  if (isControlledBy(existing, cert) && matches(cert, key, existing)) return;
  await deleteRequests(ctx, [existing], signal);
  return REQUEUE;
}

/** The CertificateRequest for `revision`, as requestmanager_controller.go builds it. */
export function requestObject(
  cert: Certificate,
  revision: number,
  keySecretName: string,
  csrPem: string,
): CertificateRequest {
  const name = cert.metadata.name ?? '';
  const annotations: Record<string, string> = {
    ...annotationsToCopy(cert.metadata.annotations),
    [Annotations.certificateRevision]: String(revision),
    [Annotations.privateKeySecretName]: keySecretName,
    [Annotations.certificateName]: name,
  };
  const spec: CertificateRequest['spec'] = {
    issuerRef: { ...cert.spec.issuerRef },
    request: Buffer.from(csrPem).toString('base64'),
  };
  if (cert.spec.duration) spec.duration = cert.spec.duration;
  if (cert.spec.isCA) spec.isCA = true;
  if (cert.spec.usages?.length) spec.usages = [...cert.spec.usages];
  return {
    apiVersion: API_VERSION,
    kind: Kinds.CertificateRequest,
    metadata: {
      name: certificateRequestName(name, revision),
      namespace: cert.metadata.namespace,
      annotations,
      ...(cert.metadata.labels ? { labels: { ...cert.metadata.labels } } : {}),
      ownerReferences: [certificateOwnerReference(cert)],
    },
    spec,
  };
}
