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
import { certificatesForSecret, controllingCertificate } from './shared/gather.ts';
import { onlyPendingMessageChanged } from './shared/request-events.ts';
import { ISSUING_CONTROLLER, issuingReconciler } from './issuing/issuing.ts';
import { KEY_MANAGER_CONTROLLER, keyManagerReconciler } from './keymanager/keymanager.ts';
import { READINESS_CONTROLLER, readinessReconciler } from './readiness/readiness.ts';
import { REQUEST_MANAGER_CONTROLLER, requestManagerReconciler } from './requestmanager/requestmanager.ts';
import { REVISION_MANAGER_CONTROLLER, revisionManagerReconciler } from './revisionmanager/revisionmanager.ts';
import { TRIGGER_CONTROLLER, triggerReconciler } from './trigger/trigger.ts';

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
}

const SUB_CONTROLLERS: readonly SubController[] = [
  { name: TRIGGER_CONTROLLER, reconciler: triggerReconciler, watches: { requests: true, secrets: true } },
  {
    name: KEY_MANAGER_CONTROLLER,
    reconciler: keyManagerReconciler,
    watches: { requests: false, secrets: true },
  },
  {
    name: REQUEST_MANAGER_CONTROLLER,
    reconciler: requestManagerReconciler,
    watches: { requests: true, secrets: true },
  },
  { name: ISSUING_CONTROLLER, reconciler: issuingReconciler, watches: { requests: true, secrets: true } },
  { name: READINESS_CONTROLLER, reconciler: readinessReconciler, watches: { requests: true, secrets: true } },
  {
    name: REVISION_MANAGER_CONTROLLER,
    reconciler: revisionManagerReconciler,
    watches: { requests: true, secrets: false },
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
export function registerCertificateControllers(ctx: ControllerContext): Controller[] {
  const entries = SUB_CONTROLLERS.map((sub) => {
    const controller: Controller = new Controller({
      name: sub.name,
      reconcile: sub.reconciler(ctx, (request) => controller.enqueue(request)),
      maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
      rateLimiter: certificateRateLimiter(),
      log: ctx.log,
    });
    return { sub, controller };
  });
  const all = entries.map((e) => e.controller);
  const watching = (what: keyof Watches) =>
    entries.filter((e) => e.sub.watches[what]).map((e) => e.controller);
  const forRequests = watching('requests');
  const forSecrets = watching('secrets');
  const enqueue = (controllers: readonly Controller[], request: Request | undefined) => {
    if (request?.name) for (const c of controllers) c.enqueue(request);
  };
  const certificateRequest = (obj: KubeObject | undefined): Request | undefined =>
    obj?.metadata?.name ? { namespace: obj.metadata.namespace, name: obj.metadata.name } : undefined;

  ctx.certificates.addEventHandler({
    onAdd: (cert) => enqueue(all, certificateRequest(cert)),
    onUpdate: (_old, cert) => enqueue(all, certificateRequest(cert)),
    onDelete: (cert) => enqueue(all, certificateRequest(objectOf(cert))),
  });

  const onRequest = (cr: KubeObject | undefined) => enqueue(forRequests, cr && controllingCertificate(cr));
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
      enqueue(forSecrets, certificateRequest(cert));
    }
    enqueue(forSecrets, controllingCertificate(secret as KubeObject));
  });

  return all;
}
