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
import { onlyReadinessOutputsChanged, SettledWakes, type WakeFilter } from './wake-filter.ts';
import { replacedByOwnWrite } from './shared/status.ts';
import { ISSUING_CONTROLLER, issuingReconciler, issuingWakes } from './issuing/issuing.ts';
import { KEY_MANAGER_CONTROLLER, keyManagerReconciler } from './keymanager/keymanager.ts';
import { READINESS_CONTROLLER, readinessIgnores, readinessReconciler } from './readiness/readiness.ts';
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

/**
 * What events wake a sub-controller, besides its own Certificates', as upstream's event handlers do: each
 * watches only the Secrets it reads (docs/adr/1215).
 */
interface Watches {
  /** CertificateRequest events wake the controlling Certificate. */
  requests: boolean;
  /** A Secret's events wake the Certificates naming it in spec.secretName. */
  namedSecrets: boolean;
  /** A Secret's events wake the Certificate controlling it (a next key). */
  controlledSecrets: boolean;
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
  /**
   * The Certificate updates this sub-controller cannot act on once its reconcile settled on the version
   * before: ones that change nothing it decides on. Dropped, unless its last reconcile of the Certificate did
   * not settle (SettledWakes; docs/adr/1215). cert-manager queues every update; the difference is only
   * reconciles that would find nothing to do.
   */
  ignores?: (ctx: ControllerContext) => (old: Certificate, cert: Certificate) => boolean;
}

const SUB_CONTROLLERS: readonly SubController[] = [
  {
    name: TRIGGER_CONTROLLER,
    reconciler: triggerReconciler,
    watches: { requests: true, namedSecrets: true, controlledSecrets: false },
    mayAct: triggerMayAct,
  },
  {
    name: KEY_MANAGER_CONTROLLER,
    reconciler: keyManagerReconciler,
    watches: { requests: false, namedSecrets: true, controlledSecrets: true },
    ignores: () => onlyReadinessOutputsChanged,
  },
  {
    name: REQUEST_MANAGER_CONTROLLER,
    reconciler: requestManagerReconciler,
    watches: { requests: true, namedSecrets: false, controlledSecrets: true },
    mayAct: requestManagerMayAct,
    ignores: () => onlyReadinessOutputsChanged,
  },
  {
    name: ISSUING_CONTROLLER,
    reconciler: issuingReconciler,
    watches: { requests: true, namedSecrets: true, controlledSecrets: true },
    wakes: issuingWakes,
  },
  {
    name: READINESS_CONTROLLER,
    reconciler: readinessReconciler,
    watches: { requests: true, namedSecrets: true, controlledSecrets: false },
    ignores: readinessIgnores,
  },
  {
    name: REVISION_MANAGER_CONTROLLER,
    reconciler: revisionManagerReconciler,
    watches: { requests: true, namedSecrets: false, controlledSecrets: false },
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
    const reconcile = sub.reconciler(ctx, (request) => controller.enqueue(request));
    // Whether each reconcile settled, for the filters that drop updates (SettledWakes).
    const settled = sub.ignores || sub.wakes ? new SettledWakes() : undefined;
    const controller: Controller = new Controller({
      name: sub.name,
      reconcile: settled
        ? (request, signal) => {
            const key = `${request.namespace ?? ''}/${request.name}`;
            const cached = () => ctx.certificates.getStore().get(key);
            const scope = {
              cachedVersion: () => cached()?.metadata.resourceVersion,
              replacedByOwnWrite: () => {
                const cert = cached();
                return cert !== undefined && replacedByOwnWrite(ctx, cert);
              },
              wake: () => controller.enqueue(request),
            };
            return settled.run(key, scope, async () => reconcile(request, signal));
          }
        : reconcile,
      maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
      rateLimiter: certificateRateLimiter(),
      log: ctx.log,
    });
    return { sub, controller, wakes: sub.wakes?.(ctx), ignores: sub.ignores?.(ctx), settled };
  });
  type Entry = (typeof entries)[number];
  const watching = (what: keyof Watches) => entries.filter((e) => e.sub.watches[what]);
  const forRequests = watching('requests');
  const forNamedSecrets = watching('namedSecrets');
  const forControlledSecrets = watching('controlledSecrets');
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
    const key = `${request.namespace ?? ''}/${request.name}`;
    let state = cert;
    for (const { sub, controller, wakes, ignores, settled } of subs) {
      // A deleted Certificate owes nothing (whether or not the deletion wakes this sub-controller).
      if (cert === null) settled?.forget(key);
      if (sub.mayAct || (wakes && event.controlled)) {
        if (state === undefined) state = liveCertificate(ctx, request) ?? null;
        if (sub.mayAct && (state === null || !sub.mayAct(state))) continue;
        if (wakes && event.controlled && state && !wakes.controlled(state)) continue;
      }
      if (event.old && state && settled) {
        const owed = settled.owes(key);
        if (!owed && wakes && !wakes.update(event.old, state)) continue;
        if (!owed && ignores?.(event.old, state)) continue;
      }
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
      enqueue(forNamedSecrets, certificateRequest(cert), present(cert));
    }
    // A Certificate that also names the Secret was queued above, whatever its filter says.
    const controlling = controllingCertificate(secret as KubeObject);
    enqueue(forControlledSecrets, controlling, undefined, { controlled: true });
  });

  return entries.map((e) => e.controller);
}
