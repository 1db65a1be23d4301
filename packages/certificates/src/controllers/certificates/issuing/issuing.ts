import { formatTime, isNotFound, type KubeObject } from '@certkit/apimachinery';
import type { Reconciler, Result } from '@certkit/runtime';
import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Annotations, SecretKeys } from '../../../api/constants.ts';
import type {
  Certificate,
  CertificateRequest,
  CertificateRequestCondition,
  CleanupPolicy,
} from '../../../api/types.ts';
import { encodePrivateKey, privateKeySpecViolations } from '../../../pki/index.ts';
import type { ControllerContext } from '../../context.ts';
import type { WakeFilter } from '../wake-filter.ts';
import {
  rememberPrivateKey,
  requestCertificate,
  certificateHasPublicKey,
  hasPublicKey,
  requestCsr,
  secretBytes,
  secretCertificate,
  secretCertificateFacts,
  valueOf,
} from '../../parsed.ts';
import { isStrippedRequest } from '../../request-facts.ts';
import { isStrippedSecret } from '../../secret-facts.ts';
import {
  liveCertificate,
  nextPrivateKey,
  nextRevision,
  ownedRequests,
  requestRevision,
} from '../shared/gather.ts';
import { ISSUING_CONTROLLER } from './controller-name.ts';
import { KeystoreError, keystorePasswords, keystoresToWrite, warnOnKeystoreError } from './keystores.ts';
import { effectiveCleanupPolicy, ownerReferenceMismatch } from '../shared/owner-reference.ts';
import { requestMatchesSpec } from '../shared/policies.ts';
import {
  buildCertificateSecret,
  secretDiffers,
  secretMetadataDiffers,
  writeIssuedSecret,
  writeSecret,
  type SecretContents,
} from './secret.ts';
import { strippedBytes } from '../../stripped-bytes.ts';
import { ensureTemporaryCertificate } from './temporary-certificate.ts';
import { setValidity } from '../shared/validity.ts';
import { awaitingOwnSecretWrite } from '../shared/own-secret-writes.ts';
import {
  getCondition,
  hasCondition,
  removeCondition,
  replacedByOwnWrite,
  resultOf,
  setCertificateCondition,
  setField,
  updateStatus,
} from '../shared/status.ts';

/**
 * certificates-issuing: while Issuing=True, waits for the CertificateRequest of the next revision to finish
 * (meanwhile writing a temporary certificate when the Certificate asks for one); a failure ends the issuance
 * with backoff bookkeeping, a certificate is checked and written to the Secret together with the next
 * private key, and the revision moves on. When not issuing, it keeps the Secret's metadata, extra output
 * formats, keystores and owner reference in line with the spec and the cleanup policy, without issuing
 * anything.
 *
 * Its contract with the other sub-controllers is the Certificate's status, as in cert-manager: it reads the
 * key the key manager made from status.nextPrivateKeySecretName, and ends an issuance by setting Issuing=False
 * (failure) or removing Issuing and clearing status.nextPrivateKeySecretName (success); the key manager,
 * seeing no issuance, deletes its next-key Secrets, and the readiness controller sets Ready from the new
 * revision. It never writes Ready.
 */

export { ISSUING_CONTROLLER };

/** This controller's Event recorder: its Events name it as their source (docs/adr/0903). */
const events = (ctx: ControllerContext) => ctx.recorder.from(ISSUING_CONTROLLER);

const isIssuing = (cert: Certificate) => hasCondition(cert, 'Issuing', 'True');

/**
 * Certificates whose reconcile stood aside on a copy this process's own status write replaced: that write's
 * event must wake the issuing controller, whatever it changed (docs/adr/1015). Per controller context; an
 * entry goes with that event (or the Certificate), a moment later.
 */
const owedWakes = new WeakMap<ControllerContext, Set<string>>();

function owedWakesOf(ctx: ControllerContext): Set<string> {
  let owed = owedWakes.get(ctx);
  if (!owed) owedWakes.set(ctx, (owed = new Set()));
  return owed;
}

const keyOf = (cert: Certificate) => `${cert.metadata.namespace}/${cert.metadata.name}`;

/**
 * The events that may change what the reconcile does (index.ts). While issuing, all of them. Between
 * issuances it only keeps the Secret it names in line with the spec (ensureSecretData): the Secret's own
 * events, a change of spec (the generation), a deletion or the start or end of an issuance may change that;
 * another controller's status write, a request's event or a next key's cannot (docs/adr/1181), unless a
 * reconcile stood aside waiting for that write. Each issuance brings half a dozen such events, and a worker
 * freed sooner would run each of them.
 */
export function issuingWakes(ctx: ControllerContext): WakeFilter {
  const owed = owedWakesOf(ctx);
  return {
    update: (old, cert) =>
      owed.delete(keyOf(cert)) ||
      isIssuing(old) ||
      isIssuing(cert) ||
      old.metadata.generation !== cert.metadata.generation ||
      cert.metadata.deletionTimestamp !== undefined,
    controlled: isIssuing,
  };
}

export function issuingReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert) {
      owedWakesOf(ctx).delete(`${request.namespace}/${request.name}`);
      return;
    }
    // Writing the Secret wakes this controller again while it completes an issuance, and that reconcile
    // starts before the watch brings the Certificate its status write made: on the replaced copy it would
    // complete the issuance a second time (the request read live, the write refused). The write's event
    // brings the Certificate back (docs/adr/1015), whatever the wake-up filter says of it.
    if (replacedByOwnWrite(ctx, cert)) {
      owedWakesOf(ctx).add(keyOf(cert));
      return;
    }
    // A Secret this process has just written, not yet in the cache: judged now, it would be written again
    // (docs/adr/1181). Its event brings the Certificate back.
    const awaiting = await awaitingOwnSecretWrite(ctx, cert.metadata.namespace ?? '', cert.spec.secretName);
    if (awaiting) return awaiting;
    if (!isIssuing(cert)) return ensureSecretData(ctx, cert, signal);

    const key = await nextPrivateKey(ctx, cert);
    if (!key || privateKeySpecViolations(key, cert.spec.privateKey ?? {}).length) return;

    const revision = nextRevision(cert);
    const requests = ownedRequests(ctx, cert).filter((cr) => requestRevision(cr) === revision);
    // None yet, or duplicates the request manager is cleaning up.
    if (requests.length !== 1) return;
    const cr = requests[0];
    // A request for another spec or key is the request manager's to replace: its outcome means nothing.
    if (requestMatchesSpec(cr, cert.spec).length) return;
    const csr = valueOf(requestCsr(cr));
    if (!hasPublicKey(key, csr.publicKeyDigest)) return;

    const ready = requestCondition(cr, 'Ready');
    if (failedInEarlierIssuance(cert, cr, ready)) return; // the request manager deletes it

    // Denied wins over anything a non-compliant signer may also have set.
    const denied = requestCondition(cr, 'Denied');
    if (denied?.status === 'True') return failIssuance(ctx, cert, denied, signal);
    const invalid = requestCondition(cr, 'InvalidRequest');
    if (invalid?.status === 'True') return failIssuance(ctx, cert, invalid, signal);
    if (ready?.reason === 'Failed') return failIssuance(ctx, cert, ready, signal);
    if (ready?.reason !== 'Issued') {
      // Still pending: the Secret may get a temporary certificate meanwhile.
      await ensureTemporaryCertificate(ctx, cert, key, signal);
      return;
    }

    // The cache keeps an issued request without its certificate (docs/adr/1114): it is read live here, the
    // one place that needs its bytes.
    const issuedRequest = await liveIssuedRequest(ctx, cr, signal);
    if (!issuedRequest) return;
    const parsed = requestCertificate(issuedRequest);
    if ('error' in parsed) {
      return failIssuance(
        ctx,
        cert,
        invalidCertificate(
          `Issuer returned an invalid certificate: failed to decode: ${parsed.error.message}`,
        ),
        signal,
      );
    }
    const issued = parsed.value;
    if (!certificateHasPublicKey(issued, csr.publicKeyDigest)) {
      return failIssuance(
        ctx,
        cert,
        invalidCertificate(
          'Issuer returned a certificate with a public key that does not match the CSR. This usually indicates a misconfigured issuer.',
        ),
        signal,
      );
    }
    if (ctx.now().getTime() > issued.notAfter.getTime()) {
      return failIssuance(
        ctx,
        cert,
        invalidCertificate(
          `Issuer returned an already expired certificate (notAfter: ${formatTime(issued.notAfter)}). This usually indicates an expired CA certificate in the issuer.`,
        ),
        signal,
      );
    }
    return completeIssuance(ctx, cert, issuedRequest, key, revision, signal);
  };
}

/**
 * The request as the API server has it, with its certificate; undefined when it is gone or is no longer the
 * cached one (the cache will catch up and bring the Certificate back).
 */
async function liveIssuedRequest(
  ctx: ControllerContext,
  cached: CertificateRequest,
  signal: AbortSignal,
): Promise<CertificateRequest | undefined> {
  if (!isStrippedRequest(cached)) return cached;
  // Its bytes as the cache transform received them, while they are held: the request at this version.
  const restored = strippedBytes.restore(cached);
  if (restored) return restored;
  let live: CertificateRequest;
  try {
    live = await ctx.certificateRequestClient.get(cached.metadata.namespace, cached.metadata.name ?? '', {
      signal,
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  return live.metadata.uid === cached.metadata.uid && live.status?.certificate ? live : undefined;
}

function requestCondition(cr: CertificateRequest, type: string): CertificateRequestCondition | undefined {
  return cr.status?.conditions?.find((c) => c.type === type);
}

function invalidCertificate(message: string): CertificateRequestCondition {
  return { type: 'Ready', status: 'False', reason: 'InvalidCertificate', message };
}

/** A request that failed before this issuance began (Issuing=True's lastTransitionTime) is a leftover. */
function failedInEarlierIssuance(
  cert: Certificate,
  cr: CertificateRequest,
  ready: CertificateRequestCondition | undefined,
): boolean {
  const failedAt = Date.parse(cr.status?.failureTime ?? '');
  const issuingSince = Date.parse(getCondition(cert, 'Issuing')?.lastTransitionTime ?? '');
  return ready?.reason === 'Failed' && failedAt < issuingSince;
}

/**
 * failIssueCertificate: Issuing=False with the request's reason, one more failed attempt and the failure
 * time, from which the trigger computes its backoff.
 */
async function failIssuance(
  ctx: ControllerContext,
  cert: Certificate,
  condition: CertificateRequestCondition,
  signal: AbortSignal,
): Promise<Result | undefined> {
  const now = ctx.now();
  const reason = condition.reason ?? 'Failed';
  const message = `The certificate request has failed to complete and will be retried: ${condition.message ?? ''}`;
  const write = await updateStatus(
    ctx,
    cert,
    (status) => {
      status.lastFailureTime = formatTime(now);
      status.failedIssuanceAttempts = (cert.status?.failedIssuanceAttempts ?? 0) + 1;
      setCertificateCondition(
        status,
        { type: 'Issuing', status: 'False', reason, message },
        cert.metadata.generation,
        now,
      );
    },
    signal,
  );
  if (write === 'written') events(ctx).warning(cert, reason, message);
  return resultOf(write);
}

/** The certificate goes into the Secret with the next key; then the revision moves on. */
async function completeIssuance(
  ctx: ControllerContext,
  cert: Certificate,
  cr: CertificateRequest,
  key: KeyObject,
  revision: number,
  signal: AbortSignal,
): Promise<Result | undefined> {
  const privateKey = encodePrivateKey(key, cert.spec.privateKey?.encoding ?? 'PKCS1');
  // The readiness checks that follow look at this key in the Secret: known, not parsed again.
  rememberPrivateKey(privateKey, key);
  const contents: SecretContents = {
    privateKey,
    certificate: Buffer.from(cr.status?.certificate ?? '', 'base64').toString(),
    // Parsed (and checked) by the reconciler already.
    parsed: valueOf(requestCertificate(cr)),
  };
  const ca = cr.status?.ca ? Buffer.from(cr.status.ca, 'base64').toString() : '';
  if (ca) contents.ca = ca;
  const ref = cr.spec.issuerRef;
  const provenance = {
    certificateName: cert.metadata.name,
    issuerName: ref?.name,
    issuerKind: ref?.kind,
    issuerGroup: ref?.group,
  };
  // The trigger and readiness look at the cached Secret as soon as the status below lands: writeIssuedSecret
  // records what it wrote, and they stand aside until their cache shows it (docs/adr/1181), so that they do
  // not judge the new revision by the old certificate. This worker does not wait for the cache.
  await writeIssuedSecret(ctx, cert, contents, provenance, signal);

  // The issuance is over: the revision moves on with the new certificate's dates, Issuing goes, and the
  // next key is released (the key manager deletes its Secret once it sees no issuance). Ready is the readiness
  // controller's, which judges the new revision when this write reaches it.
  const write = await updateStatus(
    ctx,
    cert,
    (status) => {
      status.revision = revision;
      removeCondition(status, 'Issuing');
      setField(status, 'failedIssuanceAttempts', undefined);
      setField(status, 'lastFailureTime', undefined);
      setField(status, 'nextPrivateKeySecretName', undefined);
      setValidity(status, contents.parsed, cert.spec);
    },
    signal,
  );
  if (write === 'written')
    events(ctx).normal(cert, 'Issuing', 'The certificate has been successfully issued');
  return resultOf(write);
}

/** The Secret's contents as they are, when it has both a key and a certificate. */
function currentContents(secret: Secret | undefined): SecretContents | undefined {
  const key = secretBytes(secret, SecretKeys.tlsKey);
  const crt = secretBytes(secret, SecretKeys.tlsCert);
  if (!key || !crt) return undefined;
  const ca = secretBytes(secret, SecretKeys.ca);
  const parsed = secretCertificate(secret!);
  return {
    privateKey: key.toString(),
    certificate: crt.toString(),
    ...(ca ? { ca: ca.toString() } : {}),
    ...('value' in parsed ? { parsed: parsed.value } : {}),
  };
}

/**
 * Whether ensureSecretData may have something to write to a Secret cached as facts: output formats or
 * keystores the spec wants (such a Secret has none), or labels, annotations or owner references not as they
 * should be for its certificate.
 */
function factsDrifted(secret: Secret, cert: Certificate, policy: CleanupPolicy): boolean {
  if (cert.spec.additionalOutputFormats?.length) return true;
  if (keystoresToWrite(cert, secret, false).length) return true;
  const names = secretCertificateFacts(secret);
  return 'error' in names || secretMetadataDiffers(secret, cert, names.value, policy);
}

/**
 * ensureSecretData: between issuances, re-applies the fao label, certificate-detail annotations,
 * secretTemplate, additional output formats, missing or unwanted keystores and the cleanup policy's owner
 * reference when they drifted, from the Secret's own key and certificate. A Secret without both is left to
 * the trigger (it re-issues).
 */
async function ensureSecretData(
  ctx: ControllerContext,
  cert: Certificate,
  signal: AbortSignal,
): Promise<void> {
  const namespace = cert.metadata.namespace ?? '';
  const name = cert.spec.secretName;
  const policy = effectiveCleanupPolicy(cert, ctx.options);
  const cached = await ctx.secrets.get(namespace, name);
  // A Secret issued for another Certificate (two naming the same Secret) is that one's to maintain; the
  // trigger's IncorrectCertificate check deals with this one.
  const issuedFor = cached?.metadata?.annotations?.[Annotations.certificateName];
  if (issuedFor !== undefined && issuedFor !== cert.metadata.name) return;
  // A Secret cached as facts (docs/adr/1140) is judged by them, and read live only when something drifted.
  if (isStrippedSecret(cached) && !factsDrifted(cached!, cert, policy)) return;
  const secret = isStrippedSecret(cached) ? await ctx.secrets.getWithData(namespace, name) : cached;
  await warnOnKeystoreError(ctx, cert, async () => {
    // Passwords are read only when a keystore is missing, not on every reconcile.
    const formats = currentContents(secret) ? keystoresToWrite(cert, secret, false) : [];
    const passwords = formats.length ? await keystorePasswords(ctx, cert, formats) : {};
    const build = (existing: Secret | undefined) => {
      const contents = currentContents(existing);
      return existing && contents
        ? buildCertificateSecret(existing, cert, contents, {}, policy, passwords)
        : undefined;
    };
    let desired: Secret | undefined;
    try {
      desired = build(secret);
    } catch (err) {
      if (err instanceof KeystoreError) throw err;
      // An unreadable certificate or key: nothing sensible to derive; the trigger re-issues.
      ctx.log({ level: 'debug', msg: 'cannot derive Secret data', namespace, name, err: String(err) });
      return;
    }
    if (!secret || !desired || !secretDiffers(secret, desired)) return;
    ctx.log({
      level: 'info',
      msg: 'updating Secret metadata, output formats and keystores',
      namespace,
      name,
      ownerReference: ownerReferenceMismatch(secret as KubeObject, cert, policy),
    });
    await writeSecret(ctx, namespace, name, build, signal);
  });
}
