import { jsonEqual } from '@certkit/apimachinery';
import type { Result } from '@certkit/runtime';
import type { Certificate, CertificateStatus } from '../../api/types.ts';
import { AWAIT_EVENT } from './shared/status.ts';

/**
 * Which events wake a sub-controller that acts in every state, but in some states only on some events (the
 * issuing controller between issuances; docs/adr/1181). Beside `mayAct` (docs/adr/1150), which filters by
 * state alone. The sub-controller's own requeues are not filtered.
 */
export interface WakeFilter {
  /** A Certificate's update, as the event brings it before and after. */
  update(old: Certificate, cert: Certificate): boolean;
  /**
   * An event of something the cached Certificate does not name, but controls: a CertificateRequest, or a
   * Secret other than its spec.secretName (a next key). The Secret it names always wakes it.
   */
  controlled(cert: Certificate): boolean;
}

/**
 * Whether a Certificate update changed nothing but what the readiness controller writes: the Ready condition
 * and the validity dates (notBefore, notAfter, renewalTime), with the resourceVersion and managed fields that
 * come with any write. The key manager, the request manager and the issuing controller during an issuance
 * decide on none of them (docs/adr/1215), so such an update cannot change what their reconcile does.
 */
export function onlyReadinessOutputsChanged(old: Certificate, cert: Certificate): boolean {
  const a = old.metadata;
  const b = cert.metadata;
  if (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !jsonEqual(a.labels, b.labels) ||
    !jsonEqual(a.annotations, b.annotations) ||
    !jsonEqual(a.ownerReferences, b.ownerReferences) ||
    !jsonEqual(a.finalizers, b.finalizers)
  ) {
    return false;
  }
  return jsonEqual(withoutReadinessOutputs(old.status), withoutReadinessOutputs(cert.status));
}

function withoutReadinessOutputs(status: CertificateStatus | undefined): CertificateStatus {
  const { notBefore: _nb, notAfter: _na, renewalTime: _rt, conditions, ...rest } = status ?? {};
  const others = conditions?.filter((c) => c.type !== 'Ready');
  return others?.length ? { ...rest, conditions: others } : rest;
}

/** What SettledWakes needs of the Certificate cache and the controller around a reconcile. */
export interface ReconcileScope {
  /** The resourceVersion of the Certificate as the cache holds it now. */
  cachedVersion(): string | undefined;
  /** Whether the cached copy is one this process's own status write has replaced (docs/adr/1015). */
  replacedByOwnWrite(): boolean;
  /** Queues the Certificate for this sub-controller again. */
  wake(): void;
}

/**
 * For the sub-controllers whose Certificate updates are filtered by what changed (`ignores` and `wakes` in
 * index.ts): which Certificates must get their next update event whatever it changed.
 *
 * A filter may drop an update only because the sub-controller's last reconcile settled on the version before
 * it. Not so after one that threw or asked for a requeue, found its status write superseded (AWAIT_EVENT:
 * the event of the write that won is the one to act on), or started on a copy this process's own status
 * write had replaced (it stood aside, relying on that write's event; docs/adr/1015). Those Certificates are
 * owed their next update event. For the last two, that event may already have come while the reconcile ran,
 * and been dropped: if the cache moved on meanwhile, the Certificate is queued again at once instead.
 */
export class SettledWakes {
  readonly #owed = new Set<string>();

  /** Runs a reconcile of `key`, recording whether it settled. */
  async run<T extends Result | void>(
    key: string,
    scope: ReconcileScope,
    reconcile: () => Promise<T>,
  ): Promise<T> {
    const replaced = scope.replacedByOwnWrite();
    const version = scope.cachedVersion();
    let result: T;
    try {
      result = await reconcile();
    } catch (err) {
      this.#owed.add(key);
      throw err;
    }
    if (replaced || result === AWAIT_EVENT) {
      if (scope.cachedVersion() === version) this.#owed.add(key);
      else scope.wake();
    } else if (result && result.requeue) {
      this.#owed.add(key);
    }
    return result;
  }

  /**
   * Whether an update of `key` that the filter would drop must wake the sub-controller anyway; an owed wake
   * is paid by the first update event, whatever it changed.
   */
  owes(key: string): boolean {
    return this.#owed.size > 0 && this.#owed.delete(key);
  }

  /** A deleted Certificate owes nothing. */
  forget(key: string): void {
    this.#owed.delete(key);
  }
}
