import type { KubeObject } from '@certkit/apimachinery';
import { isDeletedFinalStateUnknown } from '@certkit/runtime';
import type { ControllerContext } from '../../context.ts';

/**
 * The CertificateRequests the request manager has created and its request cache may not show yet: client-go's
 * creation "expectations" (ControllerExpectations.ExpectCreations), one request at a time (docs/adr/1215).
 *
 * A request's name is stable (`<certificate>-<revision>`), so a reconcile that runs after the create was
 * answered but before the watch brought the request finds none in the cache and creates it again: the API
 * server answers 409 AlreadyExists, and the request manager reads the request live to check it is its own.
 * In a burst of 500 that was 0.05 of a create and a GET per Certificate, and a CSR built and signed for
 * nothing each time. Instead the request manager records what it created and stands aside until its cache
 * shows it: the request's own event, which the informer delivers once its store holds it, wakes the request
 * manager (index.ts), and the requeue it returns covers a request the cache never shows.
 *
 * Bounded: an entry goes when any event of the created request arrives (add, update or delete: the cache has
 * seen it), when the reconcile finds it cached or lapsed, and lapsed ones are swept as new ones come.
 */

/**
 * How long the request manager stands aside for a request it created. Only a request the cache never shows
 * waits this long (everything else ends with the request's event); what a lapse costs is the AlreadyExists
 * answer and the live read this exists to save, so it need not outlast an outage as the Secret's must.
 */
export const OWN_REQUEST_CREATE_WAIT_MS = 30_000;
/** Past this many entries, lapsed ones are swept on the next create. */
const SWEEP_ABOVE = 256;

interface Expectation {
  /** The uid the API server gave the created request. */
  uid: string;
  /** Date.now() after which the expectation lapses. */
  deadline: number;
}

export class OwnRequestCreates {
  /** By `namespace/name` of the request. */
  readonly #pending = new Map<string, Expectation>();

  /** Records a request the API server has just created, as its answer says. */
  created(namespace: string, name: string, uid: string, now = Date.now()): void {
    if (this.#pending.size > SWEEP_ABOVE) this.#sweep(now);
    this.#pending.set(`${namespace}/${name}`, { uid, deadline: now + OWN_REQUEST_CREATE_WAIT_MS });
  }

  /**
   * How many ms more the request manager should stand aside before judging the requests of `name`, given
   * whether its cache holds a request of that name: undefined once it does, or the expectation lapsed (both
   * forget it), or nothing is expected.
   */
  pendingMs(namespace: string, name: string, cached: boolean, now = Date.now()): number | undefined {
    const key = `${namespace}/${name}`;
    const expected = this.#pending.get(key);
    if (!expected) return undefined;
    if (cached || now >= expected.deadline) {
      this.#pending.delete(key);
      return undefined;
    }
    return expected.deadline - now;
  }

  /** Any event of a request: the cache has seen the one created, if this is it. */
  observed(request: KubeObject): void {
    const key = `${request.metadata?.namespace ?? ''}/${request.metadata?.name ?? ''}`;
    if (this.#pending.get(key)?.uid === request.metadata?.uid) this.#pending.delete(key);
  }

  get size(): number {
    return this.#pending.size;
  }

  #sweep(now: number): void {
    for (const [key, expected] of this.#pending) if (now >= expected.deadline) this.#pending.delete(key);
  }
}

/** Per controller context, the request manager's creations, fed by the context's request events. */
const byContext = new WeakMap<ControllerContext, OwnRequestCreates>();

export function ownRequestCreates(ctx: ControllerContext): OwnRequestCreates {
  let creates = byContext.get(ctx);
  if (!creates) {
    const made = new OwnRequestCreates();
    creates = made;
    byContext.set(ctx, made);
    const observe = (obj: KubeObject | undefined) => {
      if (obj && made.size) made.observed(obj);
    };
    ctx.certificateRequests.addEventHandler({
      onAdd: observe,
      onUpdate: (_old, cr) => observe(cr),
      onDelete: (cr) => observe(isDeletedFinalStateUnknown(cr) ? cr.obj : cr),
    });
  }
  return creates;
}
