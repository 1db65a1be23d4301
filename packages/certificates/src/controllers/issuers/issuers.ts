import { isConflict } from '@certkit/apimachinery';
import {
  Controller,
  deletionHandlingKey,
  isDeletedFinalStateUnknown,
  ItemExponentialFailureRateLimiter,
  type Request,
  type Result,
} from '@certkit/runtime';
import { API_VERSION } from '../../api/constants.ts';
import type { ACMEIssuerStatus, GenericIssuer, IssuerCondition } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { acmeIssuersForSecret } from './acme-secrets.ts';
import { issuersForSecret } from './ca-secret.ts';
import { setCondition } from '../conditions.ts';
import { issuerReadyCondition } from './conditions.ts';
import {
  describeIssuer,
  issuerClient,
  issuerInformer,
  type IssuerHandle,
  type IssuerKind,
} from './generic.ts';
import { issuerReadiness, type Readiness, ReadinessReasons } from './readiness.ts';
import { STALE_RETRY_MS, StaleReads } from './stale-reads.ts';

/**
 * Issuer and ClusterIssuer readiness (cert-manager's `issuers` and `clusterissuers` controllers): each
 * reconcile computes the Ready condition and writes it, with the generation it was computed for, when it
 * changed. A not-ready issuer is retried with backoff (5 s → 5 min), but what usually fixes it, its CA Secret
 * appearing or changing, reconciles it at once through the Secret events. A CA certificate's notAfter (and
 * a future notBefore) is a change no event announces, so the issuer is reconciled again at that moment.
 */

export const CONTROLLER_NAMES: Record<IssuerKind, string> = {
  Issuer: 'issuers',
  ClusterIssuer: 'clusterissuers',
};

/** How long to wait before retrying a status write that lost a race. */
const CONFLICT_RETRY_MS = 200;

function readyCondition(
  issuer: GenericIssuer,
  readiness: Readiness,
): Omit<IssuerCondition, 'lastTransitionTime'> {
  const condition: Omit<IssuerCondition, 'lastTransitionTime'> = {
    type: 'Ready',
    status: readiness.ready ? 'True' : 'False',
    reason: readiness.reason,
  };
  if (readiness.message) condition.message = readiness.message;
  const generation = issuer.metadata?.generation;
  if (generation !== undefined) condition.observedGeneration = generation;
  return condition;
}

function sameCondition(
  a: IssuerCondition | undefined,
  b: Omit<IssuerCondition, 'lastTransitionTime'>,
): boolean {
  return (
    a !== undefined &&
    a.status === b.status &&
    a.reason === b.reason &&
    (a.message ?? '') === (b.message ?? '') &&
    a.observedGeneration === b.observedGeneration
  );
}

/** `status.acme` fields as Go's omitempty writes them: empty strings are left out. */
function withoutEmpty(acme: ACMEIssuerStatus): ACMEIssuerStatus {
  return Object.fromEntries(Object.entries(acme).filter(([, v]) => v !== undefined && v !== ''));
}

function sameAcmeStatus(a: ACMEIssuerStatus | undefined, b: ACMEIssuerStatus): boolean {
  const x = withoutEmpty(a ?? {});
  const y = withoutEmpty(b);
  return (
    x.uri === y.uri &&
    x.lastRegisteredEmail === y.lastRegisteredEmail &&
    x.lastPrivateKeyHash === y.lastPrivateKeyHash
  );
}

/** Our own status write needs no reconcile; a spec change, or a Ready condition gone stale or missing, does. */
function needsReconcile(old: GenericIssuer, issuer: GenericIssuer): boolean {
  if (old.metadata?.generation !== issuer.metadata?.generation) return true;
  const ready = issuerReadyCondition(issuer);
  return ready === undefined || ready.observedGeneration !== issuer.metadata?.generation;
}

export function newIssuerController(ctx: ControllerContext, kind: IssuerKind): Controller {
  const name = CONTROLLER_NAMES[kind];
  const informer = issuerInformer(ctx, kind);
  const client = issuerClient(ctx, kind);

  const stale = new StaleReads();

  async function reconcile(request: Request): Promise<Result | void> {
    const key = request.namespace ? `${request.namespace}/${request.name}` : request.name;
    const issuer = informer.getStore().get(key);
    // A deleted or deleting issuer's status is no longer anyone's concern.
    if (!issuer || issuer.metadata?.deletionTimestamp) return;
    // Whatever queued this is looked at once the cache has our write.
    if (stale.isStale(key, issuer.metadata?.resourceVersion)) return { requeueAfter: STALE_RETRY_MS };
    const handle: IssuerHandle = { kind, issuer };
    const readiness = await issuerReadiness(ctx, handle);
    const condition = readyCondition(issuer, readiness);
    const previous = issuerReadyCondition(issuer);
    const acmeChanged = readiness.acme !== undefined && !sameAcmeStatus(issuer.status?.acme, readiness.acme);
    if (!sameCondition(previous, condition) || acmeChanged) {
      const updated = structuredClone(issuer);
      updated.status = {
        ...updated.status,
        conditions: setCondition(issuer.status?.conditions, condition, ctx.now()),
      };
      if (acmeChanged) updated.status.acme = withoutEmpty(readiness.acme ?? {});
      try {
        await client.update({ ...updated, apiVersion: API_VERSION, kind }, { subresource: 'status' });
      } catch (err) {
        if (isConflict(err)) return { requeueAfter: CONFLICT_RETRY_MS };
        throw err;
      }
      stale.wrote(key, issuer.metadata?.resourceVersion);
      // An event per change of state, not per retry: a broken CA Secret retried for hours stays one event.
      if (previous?.status !== condition.status || previous?.reason !== condition.reason) {
        record(issuer, readiness);
      }
      ctx.log({
        level: 'info',
        msg: 'issuer readiness changed',
        issuer: describeIssuer(handle),
        ...condition,
      });
    }
    if (readiness.changesAt) {
      return { requeueAfter: Math.max(1, readiness.changesAt.getTime() - ctx.now().getTime()) };
    }
    return readiness.ready || readiness.retry === false ? undefined : { requeue: true };
  }

  function record(issuer: GenericIssuer, readiness: Readiness): void {
    const involved = { ...issuer, apiVersion: API_VERSION, kind };
    // SelfSigned's IsReady carries no message and, as in cert-manager, no event.
    const recorder = ctx.recorder.from(name);
    if (readiness.message && readiness.event !== false) {
      if (readiness.ready) recorder.normal(involved, readiness.reason, readiness.message);
      else recorder.warning(involved, readiness.reason, readiness.message);
    }
    // cert-manager's Sync adds its own Warning for an error Setup returned, after Setup's.
    if (readiness.initError)
      recorder.warning(
        involved,
        ReadinessReasons.ErrInitIssuer,
        `Error initializing issuer: ${readiness.initError}`,
      );
  }

  const controller = new Controller({
    name,
    reconcile,
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: new ItemExponentialFailureRateLimiter<string>(5_000, 5 * 60_000),
    log: ctx.log,
  });
  const enqueue = (issuer: GenericIssuer) =>
    controller.enqueue({ namespace: issuer.metadata?.namespace, name: issuer.metadata?.name ?? '' });

  informer.addEventHandler({
    onAdd: enqueue,
    onUpdate: (old, issuer) => {
      if (needsReconcile(old, issuer)) enqueue(issuer);
    },
    onDelete: (issuer) => {
      stale.forget(deletionHandlingKey(issuer));
      // A deleted ACME issuer's client (and its connections) goes with it.
      const uid = (isDeletedFinalStateUnknown(issuer) ? issuer.obj : issuer)?.metadata?.uid;
      if (uid) ctx.acmeAccounts.remove(uid);
    },
  });
  // Unlabelled Secrets arrive as metadata stubs: their namespace and name are all the lookup needs
  // (cert-manager's ToSecret), so a CA Secret created after its issuer makes it Ready without waiting.
  ctx.secrets.onChange((secret) => {
    const { namespace, name } = secret.metadata ?? {};
    if (!namespace || !name) return;
    for (const handle of [
      ...issuersForSecret(ctx, namespace, name),
      ...acmeIssuersForSecret(ctx, namespace, name),
    ]) {
      if (handle.kind === kind) enqueue(handle.issuer);
    }
  });
  return controller;
}
