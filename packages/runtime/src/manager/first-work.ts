import type { ReconcileActivity } from './burst-end.ts';

/**
 * Notices the first time any of a manager's controllers has work: the first request queued on any of their
 * queues (an informer event for an object a controller watches, a requeue, a timer coming due). Fires once,
 * at that moment, and never again.
 *
 * Why the first request queued and not the first reconcile: informers hand the objects of their initial LIST
 * to the event handlers, which queue them, before the caches have synced and the workers start, so on a
 * cluster with objects this fires at the first object of that LIST and the rest of it is processed after.
 * On an empty cluster nothing is queued at all: starting the informers, their LISTs and watches, leader
 * election and its renewals queue nothing, so an idle controller never fires it.
 */
export class FirstWorkWatch implements ReconcileActivity {
  private readonly onFirstWork: () => void;
  private fired = false;

  constructor(onFirstWork: () => void) {
    this.onFirstWork = onFirstWork;
  }

  get hasFired(): boolean {
    return this.fired;
  }

  queued(): void {
    if (this.fired) return;
    this.fired = true;
    this.onFirstWork();
  }

  // A reconcile follows a queued request, which has fired the watch already, unless it was queued before
  // the watch was attached to its controller.
  begin(): void {
    this.queued();
  }

  end(): void {}
}
