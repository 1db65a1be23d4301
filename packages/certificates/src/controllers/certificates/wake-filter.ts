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

/**
 * For the sub-controllers whose Certificate updates are filtered by what changed (`ignores` in index.ts):
 * which Certificates must get their next update event whatever it changed.
 *
 * A filter may drop an update only because the sub-controller's last reconcile settled on the version before
 * it. That is not so while a reconcile of the Certificate is running (the event is what would run it again
 * once it ends, should it fail), nor after one that did not settle: it threw, asked for a requeue, found its
 * status write superseded (AWAIT_EVENT: the event of the write that won is the one to act on), or started on a copy this
 * process's own status write had replaced (a reconcile that stands aside on it relies on that write's event,
 * docs/adr/1015). Those Certificates are owed their next update event.
 */
export class SettledWakes {
  readonly #running = new Map<string, number>();
  readonly #owed = new Set<string>();

  /**
   * Runs a reconcile of `key`, recording whether it settled. `replaced`: whether it starts on a copy this
   * process's own status write has replaced, on which it stands aside (or is refused).
   */
  async run<T extends Result | void>(
    key: string,
    reconcile: () => Promise<T>,
    replaced: boolean,
  ): Promise<T> {
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    try {
      const result = await reconcile();
      if (replaced || result === AWAIT_EVENT || (result && result.requeue)) this.#owed.add(key);
      return result;
    } catch (err) {
      this.#owed.add(key);
      throw err;
    } finally {
      const n = this.#running.get(key)! - 1;
      if (n) this.#running.set(key, n);
      else this.#running.delete(key);
    }
  }

  /**
   * Whether an update of `key` that the filter would drop must wake the sub-controller anyway; an owed wake
   * is paid by the first update event, whatever it changed.
   */
  owes(key: string): boolean {
    return this.#running.has(key) || this.#owed.delete(key);
  }

  /** A deleted Certificate owes nothing. */
  forget(key: string): void {
    this.#owed.delete(key);
  }

  get owedCount(): number {
    return this.#owed.size;
  }
}
