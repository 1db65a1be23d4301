import type { Reconciler, Result } from '@certkit/runtime';
import type { Certificate, CertificateCondition, CertificateStatus } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { gatherPolicyInput, liveCertificate, type PolicyInput } from '../shared/gather.ts';
import { secretCertificateDigest, secretCertificateFacts } from '../../parsed.ts';
import { digestToken, isDigestToken } from '../../request-facts.ts';
import { LruMap } from '../../../lru.ts';
import {
  evaluate,
  invalidSpec,
  readinessPolicyChain,
  RenewalWindowsUnsatisfiable,
} from '../shared/policies.ts';
import { awaitingOwnSecretWrite } from '../shared/own-secret-writes.ts';
import { setValidity } from '../shared/validity.ts';
import {
  getCondition,
  hasCondition,
  replacedByOwnWrite,
  resultOf,
  setCertificateCondition,
  type StatusWrite,
  updateStatus,
} from '../shared/status.ts';

/**
 * certificates-readiness: the only writer of a Certificate's Ready condition, as in cert-manager's
 * readiness controller. Ready is computed from the spec (an invalid one is Ready=False InvalidSpec), the
 * Secret, the current revision's CertificateRequest and the readiness policy chain; the validity dates of the
 * certificate in the Secret go out with it (status.notBefore, notAfter and renewalTime). Issuing, which the
 * trigger sets and the issuing controller ends, is not this controller's.
 */

export const READINESS_CONTROLLER = 'certificates-readiness';

/** This controller's Event recorder: its Events name it as their source (docs/adr/0903). */
const events = (ctx: ControllerContext) => ctx.recorder.from(READINESS_CONTROLLER);

export const READY_MESSAGE = 'Certificate is up to date and has not expired';

export function readinessReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert) return;
    // Woken again (by a Secret or a request) before the watch brought a status write of this process:
    // its write would be refused, and the write's event brings the Certificate back (docs/adr/1015).
    if (replacedByOwnWrite(ctx, cert)) return;
    // Ready judged from the Secret as it was before the issuing controller's write reached the cache would be
    // taken back at once; the Secret's event brings the Certificate back (docs/adr/1181).
    const awaiting = await awaitingOwnSecretWrite(ctx, cert.metadata.namespace ?? '', cert.spec.secretName);
    if (awaiting) return awaiting;
    const input = await gatherPolicyInput(ctx, cert);
    if (completingIssuance(input)) return;
    const ready = getCondition(cert, 'Ready');
    const write = await updateStatus(ctx, cert, (status) => applyReadiness(status, input), signal);
    if (write === 'written' || write === 'unchanged') {
      warnInvalidSpec(ctx, cert, ready, write);
      warnUnsatisfiableWindows(ctx, input);
    }
    return resultOf(write) ?? untilExpiry(input);
  };
}

/**
 * The issuing controller has written the new certificate to the Secret and is about to move the revision
 * on: judging the new Secret against the old revision now would only race that write (a conflict, a re-read
 * and a retry for one of the two) and show a Ready that the revision bump changes again at once.
 */
function completingIssuance({ certificate, secret, nextRevisionRequest }: PolicyInput): boolean {
  const issued = nextRevisionRequest?.status?.certificate;
  const written = secretCertificateDigest(secret);
  if (!hasCondition(certificate, 'Issuing', 'True') || issued === undefined || written === undefined)
    return false;
  // An issued request is cached with a digest of its certificate (docs/adr/1114), a certificate Secret with
  // the digest among its facts (docs/adr/1140).
  return (isDigestToken(issued) ? issued : digestToken(issued)) === written;
}

/**
 * The Ready condition, and the validity dates of the certificate in the Secret. A spec the webhook would have
 * refused is Ready=False InvalidSpec with the field errors (no webhook guards our API server); otherwise the
 * first violation of the renewal windows or the readiness chain is Ready=False with its reason, and none is
 * Ready=True.
 */
export function applyReadiness(status: CertificateStatus, input: PolicyInput): void {
  const cert = input.certificate;
  const violation =
    invalidSpec(cert) ?? RenewalWindowsUnsatisfiable(input) ?? evaluate(readinessPolicyChain, input);
  const ready = violation
    ? { type: 'Ready' as const, status: 'False' as const, ...violation }
    : { type: 'Ready' as const, status: 'True' as const, reason: 'Ready', message: READY_MESSAGE };
  setCertificateCondition(status, ready, cert.metadata.generation, input.now);
  const parsed = input.secret?.data ? secretCertificateFacts(input.secret) : undefined;
  setValidity(status, parsed && 'value' in parsed ? parsed.value : undefined, cert.spec);
}

/** One Warning event when an invalid spec becomes the Certificate's state (reason or message changed). */
function warnInvalidSpec(
  ctx: ControllerContext,
  cert: Certificate,
  before: CertificateCondition | undefined,
  write: StatusWrite,
): void {
  const violation = invalidSpec(cert);
  if (!violation || write !== 'written') return;
  if (before?.reason === violation.reason && before.message === violation.message) return;
  events(ctx).warning(cert, violation.reason, violation.message);
}

/** Per controller context: the window error last warned about, by Certificate uid. */
const warnedWindowErrors = new WeakMap<ControllerContext, LruMap<string, string | undefined>>();

/**
 * The readiness controller's Warning for renewal windows that cannot be honoured. Upstream records one at
 * every reconcile and client-go folds the repeats into one Event, patching its count each time; the runtime's
 * recorder folds them too, but a Certificate is warned once per distinct message here, which spares that
 * patch on every reconcile (the Event's count then stays 1 where upstream's grows).
 */
function warnUnsatisfiableWindows(ctx: ControllerContext, input: PolicyInput): void {
  const cert = input.certificate;
  const violation = invalidSpec(cert) ? undefined : RenewalWindowsUnsatisfiable(input);
  let warned = warnedWindowErrors.get(ctx);
  if (!warned) warnedWindowErrors.set(ctx, (warned = new LruMap(4096)));
  const uid = cert.metadata.uid ?? `${cert.metadata.namespace}/${cert.metadata.name}`;
  if (warned.get(uid) === violation?.message) return;
  warned.set(uid, violation?.message);
  if (violation) events(ctx).warning(cert, violation.reason, violation.message);
}

/** Look again when the certificate expires, so that Ready turns False even if nothing else happens. */
function untilExpiry(input: PolicyInput): Result | undefined {
  const parsed = input.secret?.data ? secretCertificateFacts(input.secret) : undefined;
  if (!parsed || 'error' in parsed) return undefined;
  const ms = parsed.value.notAfter.getTime() - input.now.getTime() + 1000;
  return ms > 0 ? { requeueAfter: ms } : undefined;
}
