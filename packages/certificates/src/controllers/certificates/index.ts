import type { KubeObject } from '@certkit/apimachinery';
import {
  Controller,
  type DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  ItemExponentialFailureRateLimiter,
  type Reconciler,
  type Request,
} from '@certkit/runtime';
import { isSecretStub } from '../../secrets/metadata-stub.ts';
import type { ControllerContext } from '../context.ts';
import type { Certificate } from '../../api/types.ts';
import { certificatesForSecret, controllingCertificate, liveCertificate } from './shared/gather.ts';
import { onlyPendingMessageChanged } from './shared/request-events.ts';
import type { WakeFilter } from './wake-filter.ts';
import { ISSUING_CONTROLLER, issuingReconciler, issuingWakes } from './issuing/issuing.ts';
import { KEY_MANAGER_CONTROLLER, keyManagerReconciler } from './keymanager/keymanager.ts';
import { READINESS_CONTROLLER, readinessReconciler } from './readiness/readiness.ts';
import {
  REQUEST_MANAGER_CONTROLLER,
  requestManagerMayAct,
  requestManagerReconciler,
} from './requestmanager/requestmanager.ts';
import {
  REVISION_MANAGER_CONTROLLER,
  revisionManagerMayAct,
  revisionManagerReconciler,
} from './revisionmanager/revisionmanager.ts';
import { TRIGGER_CONTROLLER, triggerMayAct, triggerReconciler } from './trigger/trigger.ts';

/**
 * The Certificate sub-controllers (cert-manager's certificates/*), each a runtime Controller reconciling Certificates by
 * `{namespace, name}`, and the event handlers that map Certificate, CertificateRequest and Secret events to
 * the Certificates to reconcile. The caller runs them (a Manager, or a test).
 */

export { ISSUING_CONTROLLER } from './issuing/issuing.ts';
export { KEY_MANAGER_CONTROLLER } from './keymanager/keymanager.ts';
export { READINESS_CONTROLLER } from './readiness/readiness.ts';
export { REQUEST_MANAGER_CONTROLLER } from './requestmanager/requestmanager.ts';
export { REVISION_MANAGER_CONTROLLER } from './revisionmanager/revisionmanager.ts';
export { TRIGGER_CONTROLLER } from './trigger/trigger.ts';
export { effectiveCleanupPolicy } from './shared/owner-reference.ts';
export { SECRET_TEMPLATE_KEYS_ANNOTATION } from './issuing/secret.ts';

/** What events wake a sub-controller, besides its own Certificates' (as upstream's informers). */
interface Watches {
  /** CertificateRequest events wake the controlling Certificate. */
  requests: boolean;
  /** Secret events wake the Certificates naming the Secret and the Certificate controlling it. */
  secrets: boolean;
}

interface SubController {
  name: string;
  /** `requeue` queues a Certificate for this controller again, for work that finishes off its workers. */
  reconciler: (ctx: ControllerContext, requeue: (request: Request) => void) => Reconciler;
  watches: Watches;
  /**
   * For a sub-controller whose reconcile returns at once unless its Certificate is in some state: that
   * state, the very test its reconcile starts with. Events wake it only for a Certificate in that state (the
   * one the event brings, or the cached one for a request's or a Secret's event), never for a deleted one:
   * a reconcile would find nothing to do, and the Certificate's change into that state is itself an event
   * that wakes it (docs/adr/1150). Its own requeues are not filtered.
   */
  mayAct?: (cert: Certificate) => boolean;
  /**
   * For a sub-controller that acts in every state, but in some states only on some events (the issuing
   * controller between issuances): which events may change what its reconcile does (docs/adr/1181).
   */
  wakes?: (ctx: ControllerContext) => WakeFilter;
}

const SUB_CONTROLLERS: readonly SubController[] = [
  {
    name: TRIGGER_CONTROLLER,
    reconciler: triggerReconciler,
    watches: { requests: true, secrets: true },
    mayAct: triggerMayAct,
  },
  {
    name: KEY_MANAGER_CONTROLLER,
    reconciler: keyManagerReconciler,
    watches: { requests: false, secrets: true },
  },
  {
    name: REQUEST_MANAGER_CONTROLLER,
    reconciler: requestManagerReconciler,
    watches: { requests: true, secrets: true },
    mayAct: requestManagerMayAct,
  },
  {
    name: ISSUING_CONTROLLER,
    reconciler: issuingReconciler,
    watches: { requests: true, secrets: true },
    wakes: issuingWakes,
  },
  { name: READINESS_CONTROLLER, reconciler: readinessReconciler, watches: { requests: true, secrets: true } },
  {
    name: REVISION_MANAGER_CONTROLLER,
    reconciler: revisionManagerReconciler,
    watches: { requests: true, secrets: false },
    mayAct: revisionManagerMayAct,
  },
];

/** cert-manager's DefaultCertificateRateLimiter: per-item backoff from 1 s up to 30 s. */
function certificateRateLimiter() {
  return new ItemExponentialFailureRateLimiter<string>(1000, 30_000);
}

function objectOf<T extends KubeObject>(value: T | DeletedFinalStateUnknown<T>): T | undefined {
  return isDeletedFinalStateUnknown(value) ? value.obj : value;
}

/**
 * Creates the six Certificate controllers and registers their event handlers on the context's informers.
 * Controllers are returned unstarted; start each with `controller.start(signal)` once the context is.
 */
export function registerCertificateControllers(
  ctx: ControllerContext,
  enabled: (name: string) => boolean = () => true,
): Controller[] {
  const entries = SUB_CONTROLLERS.filter((sub) => enabled(sub.name)).map((sub) => {
    const controller: Controller = new Controller({
      name: sub.name,
      reconcile: sub.reconciler(ctx, (request) => controller.enqueue(request)),
      maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
      rateLimiter: certificateRateLimiter(),
      log: ctx.log,
    });
    return { sub, controller, wakes: sub.wakes?.(ctx) };
  });
  type Entry = (typeof entries)[number];
  const watching = (what: keyof Watches) => entries.filter((e) => e.sub.watches[what]);
  const forRequests = watching('requests');
  const forSecrets = watching('secrets');
  /**
   * Queues the Certificate for each of `subs` that may act on it: `cert` is the Certificate as the event
   * brought it, null for a deleted one, undefined to look it up in the cache (for a request's or a Secret's
   * event); `event`, for the `wakes` filters: the Certificate before an update, or that the event is of an
   * object the Certificate controls (a request, a Secret other than the one it names).
   */
  const enqueue = (
    subs: readonly Entry[],
    request: Request | undefined,
    cert?: Certificate | null,
    event: { old?: Certificate; controlled?: boolean } = {},
  ) => {
    if (!request?.name) return;
    let state = cert;
    for (const { sub, controller, wakes } of subs) {
      if (sub.mayAct || (wakes && event.controlled)) {
        if (state === undefined) state = liveCertificate(ctx, request) ?? null;
        if (sub.mayAct && (state === null || !sub.mayAct(state))) continue;
        if (wakes && event.controlled && state && !wakes.controlled(state)) continue;
      }
      if (wakes && event.old && state && !wakes.update(event.old, state)) continue;
      controller.enqueue(request);
    }
  };
  const certificateRequest = (obj: KubeObject | undefined): Request | undefined =>
    obj?.metadata?.name ? { namespace: obj.metadata.namespace, name: obj.metadata.name } : undefined;
  const present = (cert: Certificate) => (cert.metadata.deletionTimestamp ? null : cert);

  ctx.certificates.addEventHandler({
    onAdd: (cert) => enqueue(entries, certificateRequest(cert), present(cert)),
    onUpdate: (old, cert) => enqueue(entries, certificateRequest(cert), present(cert), { old }),
    onDelete: (cert) => enqueue(entries, certificateRequest(objectOf(cert)), null),
  });

  const onRequest = (cr: KubeObject | undefined) =>
    enqueue(forRequests, cr && controllingCertificate(cr), undefined, { controlled: true });
  ctx.certificateRequests.addEventHandler({
    onAdd: (cr) => onRequest(cr),
    onUpdate: (old, cr) => {
      if (!onlyPendingMessageChanged(old, cr)) onRequest(cr);
    },
    onDelete: (cr) => onRequest(objectOf(cr)),
  });

  ctx.secrets.onChange((secret) => {
    // Metadata-only stubs (unlabelled Secrets) are skipped, as cert-manager ≥ 1.21.1 does: every Secret
    // these controllers read or write carries the fao label and arrives in full.
    if (isSecretStub(secret) || !secret.metadata?.name) return;
    const namespace = secret.metadata.namespace ?? '';
    for (const cert of certificatesForSecret(ctx, namespace, secret.metadata.name)) {
      enqueue(forSecrets, certificateRequest(cert), present(cert));
    }
    // A Certificate that also names the Secret was queued above, whatever its filter says.
    enqueue(forSecrets, controllingCertificate(secret as KubeObject), undefined, { controlled: true });
  });

  return entries.map((e) => e.controller);
}
