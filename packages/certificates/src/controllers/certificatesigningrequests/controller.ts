import { formatTime, isConflict, type KubeObject } from '@certkit/apimachinery';
import {
  Controller,
  deletionHandlingKey,
  isDeletedFinalStateUnknown,
  type Request,
  type ResourceClient,
  type Result,
  type SharedInformer,
} from '@certkit/runtime';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.d.ts';
import { GROUP } from '../../api/constants.ts';
import type { GenericIssuer } from '../../api/types.ts';
import type { SignOutcome } from '../certificaterequests/signer.ts';
import { signerRateLimiter } from '../certificaterequests/signer.ts';
import type { ControllerContext } from '../context.ts';
import type { EventRecorder } from '../events.ts';
import { isIssuerReady } from '../issuers/conditions.ts';
import { issuerInformer, issuerType, type IssuerHandle, type IssuerKind } from '../issuers/generic.ts';
import { STALE_RETRY_MS, StaleReads } from '../issuers/stale-reads.ts';
import { requesterMayReference } from './reference-check.ts';
import { requestedDuration } from './request.ts';
import { issuerKindOfType, signerIssuerRef } from './signer-name.ts';

/**
 * The part every CertificateSigningRequest signer shares (cert-manager's certificatesigningrequests
 * controller and its Sync): Kubernetes CSRs whose signerName names a cert-manager.io Issuer or ClusterIssuer
 * of this signer's type are signed once approved, and the certificate is written to status.certificate
 * through the status subresource. What stops a request for good is a Failed condition; what only makes it
 * wait (not approved, issuer missing or not Ready, its Secret missing) is an Event, and it is looked at again
 * when the issuer or the Secret changes. cert-manager never approves a CSR: a user or an approval controller
 * does (`kubectl certificate approve`). Each signer is its own runtime Controller, named as cert-manager
 * names it (`certificatesigningrequests-issuer-<type>`).
 */

export type CsrCertificateSigningRequest = CertificateSigningRequest & KubeObject;

export interface CsrSigner {
  type: 'ca' | 'selfsigned' | 'acme';
  /** The Normal CertificateIssued event's message. */
  issuedMessage: string;
  /** Signs for `durationMs` (checked), or says why not. */
  sign(csr: CsrCertificateSigningRequest, handle: IssuerHandle, durationMs: number): Promise<SignOutcome>;
  /** Extra wake-ups (a Secret this signer reads changed): `enqueue` queues a CSR by name. */
  watch?(enqueue: (csr: CsrCertificateSigningRequest) => void): void;
}

/** cert-manager's name of the CSR signer of an issuer type. */
export const csrSignerControllerName = (type: CsrSigner['type']) =>
  `certificatesigningrequests-issuer-${type}`;

/** The signer name a CSR gives to be signed by this issuer. */
export function signerNameOf(kind: IssuerKind, issuer: GenericIssuer): string {
  const { namespace, name } = issuer.metadata ?? {};
  return kind === 'ClusterIssuer'
    ? `clusterissuers.${GROUP}/${name}`
    : `issuers.${GROUP}/${namespace}.${name}`;
}

export const CSR_SIGNER_NAME_INDEX = 'signerName';

const RETRY: Result = { requeue: true };
const hasCondition = (csr: CertificateSigningRequest, type: string) =>
  csr.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

export interface CsrSignerControllerOptions {
  /** Whether this signer records the Events of CSRs whose issuer is missing or untyped (exactly one does). */
  reportIssuerProblems: boolean;
}

export function newCsrSignerController(
  ctx: ControllerContext,
  csrs: SharedInformer<CsrCertificateSigningRequest>,
  csrClient: ResourceClient<CsrCertificateSigningRequest>,
  signer: CsrSigner,
  options: CsrSignerControllerOptions,
): Controller {
  const name = csrSignerControllerName(signer.type);
  const recorder: EventRecorder = ctx.recorder.from(name);
  const stale = new StaleReads();
  // Events name the CSR by kind and version, which objects from a list do not carry.
  const asObject = (csr: CsrCertificateSigningRequest): KubeObject => ({
    ...csr,
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
  });
  const normal = (csr: CsrCertificateSigningRequest, reason: string, message: string) =>
    recorder.normal(asObject(csr), reason, message);
  const warning = (csr: CsrCertificateSigningRequest, reason: string, message: string) =>
    recorder.warning(asObject(csr), reason, message);

  async function reconcile(request: Request): Promise<Result | void> {
    const csr = csrs.getStore().get(request.name);
    if (!csr || csr.metadata?.deletionTimestamp) return;
    if (stale.isStale(request.name, csr.metadata?.resourceVersion)) return { requeueAfter: STALE_RETRY_MS };
    const ref = signerIssuerRef(csr.spec?.signerName ?? '');
    if (!ref || ref.group !== GROUP) return;
    if (hasCondition(csr, 'Failed') || hasCondition(csr, 'Denied')) return;
    if (csr.status?.certificate) return;
    const kind = issuerKindOfType(ref.type);
    if (!kind) return;
    const key = kind === 'Issuer' ? `${ref.namespace}/${ref.name}` : ref.name;
    const issuer = issuerInformer(ctx, kind).getStore().get(key);
    const type = issuer && issuerType(issuer.spec);
    // The signer of the issuer's type speaks for the CSR; one signer speaks for CSRs no signer takes (issuer
    // missing or untyped), so that each Event is recorded once, not once per signer as in cert-manager.
    if (type ? type !== signer.type : !options.reportIssuerProblems) return;
    if (!hasCondition(csr, 'Approved')) {
      normal(csr, 'WaitingApproval', 'Waiting for the Approved condition before issuing');
      return;
    }
    if (!issuer) {
      // Waits for the issuer: its creation wakes the CSRs naming it (watchIssuers).
      warning(csr, 'IssuerNotFound', `Referenced ${kind} ${ref.namespace}/${ref.name} not found`);
      return;
    }
    if (!type) {
      warning(csr, 'IssuerTypeMissing', `Referenced ${kind} ${ref.namespace}/${ref.name} is missing type`);
      return;
    }

    if (kind === 'Issuer' && !(await requesterMayReference(ctx.client, csr, ref.namespace, ref.name))) {
      const message = `Requester may not reference Namespaced Issuer ${ref.namespace}/${ref.name}`;
      return fail(csr, 'DeniedReference', message);
    }
    const duration = requestedDuration(csr);
    if ('problem' in duration) return fail(csr, duration.problem.reason, duration.problem.message);
    if (!isIssuerReady(issuer)) {
      const message = `Referenced ${kind} ${issuer.metadata?.namespace ?? ''}/${issuer.metadata?.name} does not have a Ready status condition`;
      warning(csr, 'IssuerNotReady', message);
      return;
    }

    const outcome = await signer.sign(csr, { kind, issuer }, duration.ms);
    if ('pending' in outcome) {
      // An ACME Order under way: said, and woken by the Order's events, which are certain to come.
      if (outcome.pending.wakeOnEvent) {
        normal(csr, outcome.pending.reason, outcome.pending.message);
        return;
      }
      // Secrets that are missing or cannot sign yet: said as a warning, retried with backoff and woken
      // sooner by the Secret's change (signer.watch).
      warning(csr, outcome.pending.reason, outcome.pending.message);
      return RETRY;
    }
    if ('failed' in outcome) return fail(csr, outcome.failed.reason, outcome.failed.message);
    const written = await writeStatus(csr, {
      ...csr.status,
      certificate: Buffer.from(outcome.issued.certPem).toString('base64'),
    });
    if (written) return written;
    normal(csr, 'CertificateIssued', signer.issuedMessage);
  }

  /** CertificateSigningRequestSetFailed, written through the status subresource, with its Warning. */
  async function fail(
    csr: CsrCertificateSigningRequest,
    reason: string,
    message: string,
  ): Promise<Result | undefined> {
    const now = formatTime(ctx.now());
    const conditions = [
      ...(csr.status?.conditions ?? []).filter((c) => c.type !== 'Failed'),
      { type: 'Failed', status: 'True', reason, message, lastTransitionTime: now, lastUpdateTime: now },
    ];
    const written = await writeStatus(csr, { ...csr.status, conditions });
    if (!written) warning(csr, reason, message);
    return written;
  }

  /** Undefined when written; a quick retry when the cache was behind (409). */
  async function writeStatus(
    csr: CsrCertificateSigningRequest,
    status: CertificateSigningRequest['status'],
  ): Promise<Result | undefined> {
    const name = csr.metadata?.name ?? '';
    try {
      await csrClient.update({ ...csr, status }, { subresource: 'status' });
    } catch (err) {
      if (!isConflict(err)) throw err;
      ctx.log({ level: 'debug', msg: 'status conflict, retrying', controller: name });
      return { requeueAfter: 200 };
    }
    stale.wrote(name, csr.metadata?.resourceVersion);
    return undefined;
  }

  const controller = new Controller({
    name,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: signerRateLimiter(),
    log: ctx.log,
  });
  const enqueue = (csr: CsrCertificateSigningRequest) => {
    // Only what this family signs: the cheap test of the signer name's group, before the queue.
    if (signerIssuerRef(csr.spec?.signerName ?? '')?.group === GROUP)
      controller.enqueue({ name: csr.metadata?.name ?? '' });
  };
  csrs.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, csr) => enqueue(csr),
    onDelete: (csr) => stale.forget(deletionHandlingKey(csr)),
  });
  watchIssuers(ctx, csrs, enqueue);
  signer.watch?.(enqueue);
  return controller;
}

/** The CSRs whose signer name is this issuer's. */
export function csrsForIssuer(
  csrs: SharedInformer<CsrCertificateSigningRequest>,
  kind: IssuerKind,
  issuer: GenericIssuer,
): CsrCertificateSigningRequest[] {
  return csrs.getStore().byIndex(CSR_SIGNER_NAME_INDEX, signerNameOf(kind, issuer));
}

/**
 * An issuer that appears, changes spec or readiness, or goes, wakes the CSRs that name it: they waited
 * without a retry of their own (IssuerNotFound, IssuerNotReady).
 */
function watchIssuers(
  ctx: ControllerContext,
  csrs: SharedInformer<CsrCertificateSigningRequest>,
  enqueue: (csr: CsrCertificateSigningRequest) => void,
): void {
  for (const kind of ['Issuer', 'ClusterIssuer'] as const) {
    const wake = (issuer: GenericIssuer) => {
      for (const csr of csrsForIssuer(csrs, kind, issuer)) enqueue(csr);
    };
    issuerInformer(ctx, kind).addEventHandler({
      onAdd: wake,
      onUpdate: (old, issuer) => {
        if (
          old.metadata?.generation !== issuer.metadata?.generation ||
          isIssuerReady(old) !== isIssuerReady(issuer)
        )
          wake(issuer);
      },
      onDelete: (issuer) => {
        const gone = isDeletedFinalStateUnknown(issuer) ? issuer.obj : issuer;
        if (gone) wake(gone);
      },
    });
  }
}
