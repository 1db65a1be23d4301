import type { KubeObject } from '@certkit/apimachinery';
import type { HandlerRegistration, ResourceEventHandler } from '../informers/handlers.ts';
import type { Indexers } from '../informers/store.ts';

/**
 * What Cache.getInformer returns (controller-runtime's cache.Informer): a SharedInformer, or for a cache
 * split by namespace, one informer fanning out to the informers of every namespace.
 */
export interface Informer<T extends KubeObject = KubeObject> {
  /** Adds a handler; it receives the objects already in the store as adds first. */
  addEventHandler(handler: ResourceEventHandler<T>, resyncMs?: number): HandlerRegistration;
  /** Removes a handler added by `addEventHandler`. */
  removeEventHandler(registration: HandlerRegistration): void;
  /** Allowed after start: existing objects are indexed at once. */
  addIndexers(indexers: Indexers): void;
  /** True once the initial list has been stored. */
  hasSynced(): boolean;
  /** True once the informer has stopped (its cache stopped, or it was removed). */
  isStopped(): boolean;
  /** Resolves true once synced, false if the signal aborts (or the informer stops) first. */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
}

/** multiNamespaceInformer: every call goes to each namespace's informer. */
export class MultiNamespaceInformer<T extends KubeObject = KubeObject> implements Informer<T> {
  readonly informers: ReadonlyMap<string, Informer<T>>;

  constructor(informers: Map<string, Informer<T>>) {
    this.informers = informers;
  }

  addEventHandler(handler: ResourceEventHandler<T>, resyncMs?: number): HandlerRegistration {
    const registrations = new Map<string, HandlerRegistration>();
    for (const [ns, informer] of this.informers)
      registrations.set(ns, informer.addEventHandler(handler, resyncMs));
    return new MultiNamespaceRegistration(registrations);
  }

  /** Needs the registration addEventHandler returned (the composite one). */
  removeEventHandler(registration: HandlerRegistration): void {
    if (!(registration instanceof MultiNamespaceRegistration)) {
      throw new Error('registration was not returned by this multi-namespace informer');
    }
    for (const [ns, informer] of this.informers) {
      const own = registration.registrations.get(ns);
      if (own) informer.removeEventHandler(own);
    }
  }

  addIndexers(indexers: Indexers): void {
    for (const informer of this.informers.values()) informer.addIndexers(indexers);
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  isStopped(): boolean {
    return [...this.informers.values()].every((i) => i.isStopped());
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }
}

class MultiNamespaceRegistration implements HandlerRegistration {
  readonly registrations: ReadonlyMap<string, HandlerRegistration>;
  readonly synced: Promise<void>;

  constructor(registrations: Map<string, HandlerRegistration>) {
    this.registrations = registrations;
    this.synced = Promise.all([...registrations.values()].map((r) => r.synced)).then(() => undefined);
  }

  hasSynced(): boolean {
    return [...this.registrations.values()].every((r) => r.hasSynced());
  }
}
