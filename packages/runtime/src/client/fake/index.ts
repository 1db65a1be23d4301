import { formatTime, type KubeObject } from '@certkit/apimachinery';
import type { Client, ReadMode, ResourceClient, ResourceRef } from '../types.ts';
import { type FakeAction, TrackedResourceClient } from './resource-client.ts';
import { ObjectTracker, resourceKey } from './tracker.ts';

/**
 * An in-memory Kubernetes client for controllers' unit tests, as controller-runtime's `pkg/client/fake`: it
 * implements the same `Client` the controllers are given (`resource(ref, mode)` → `ResourceClient`), so a
 * reconciler, an informer or a cache runs on it unchanged and a test needs no API server. Its answers follow
 * the API server's where controllers depend on them (see resource-client.ts); `actions` records what was
 * asked and written, for tests to assert on.
 *
 *     const client = new FakeClient({ statusSubresources: [certificatesRef] });
 *     client.add(certificatesRef, certificate);          // seeded as given, status included
 *     await reconcile(request, signal);                   // code under test, built on `client`
 *     assert.deepEqual(client.writes().map((a) => a.verb), ['update']);
 */

export type { FakeAction } from './resource-client.ts';
export { TrackedResourceClient } from './resource-client.ts';
export { ObjectTracker, objectKeyOf, resourceKey } from './tracker.ts';
export { WatchQueue } from './watch.ts';

export interface FakeClientOptions {
  /** Resources whose `status` is a subresource (most custom resources are; Secrets, ConfigMaps are not). */
  statusSubresources?: readonly Pick<ResourceRef, 'group' | 'resource'>[];
  /** The clock of creationTimestamp and deletionTimestamp (default: the wall clock). */
  now?: () => Date;
  /**
   * Whether watches may ask for initial events, the WatchList feature (default true); false answers them
   * 422, as an older API server does, so that a reflector's fallback to list-then-watch can be tested.
   */
  watchList?: boolean;
}

export class FakeClient implements Client {
  readonly tracker = new ObjectTracker();
  /** Every call answered, oldest first (see FakeAction). */
  readonly actions: FakeAction[] = [];
  readonly #statusSubresources: Set<string>;
  readonly #now: () => Date;
  readonly #watchList: boolean;

  constructor(options: FakeClientOptions = {}) {
    this.#statusSubresources = new Set((options.statusSubresources ?? []).map(resourceKey));
    this.#now = options.now ?? (() => new Date());
    this.#watchList = options.watchList ?? true;
  }

  /** The namespace a KubeClient falls back to. */
  get namespace(): string {
    return 'default';
  }

  resource<T extends KubeObject = KubeObject>(ref: ResourceRef, mode: ReadMode = 'full'): ResourceClient<T> {
    return new TrackedResourceClient<T>(this.tracker, ref, mode, {
      statusSubresource: this.#statusSubresources.has(resourceKey(ref)),
      watchList: this.#watchList,
      now: this.#now,
      record: (action) => this.actions.push(action),
    });
  }

  /**
   * Stores objects as they are given, status and all (as controller-runtime's WithObjects), bypassing the
   * API's rules: the state a test starts from. A uid and creationTimestamp are filled in when missing; the
   * resourceVersion is always the tracker's. Not recorded as actions.
   */
  add<T extends KubeObject>(ref: ResourceRef, ...objects: T[]): T[] {
    return objects.map((obj) => {
      const metadata = { ...obj.metadata };
      metadata.uid ??= crypto.randomUUID();
      metadata.creationTimestamp ??= formatTime(this.#now());
      const apiVersion = ref.group ? `${ref.group}/${ref.version}` : ref.version;
      const seeded = { apiVersion, kind: ref.kind, ...structuredClone(obj), metadata };
      return structuredClone(this.tracker.put(resourceKey(ref), seeded)) as T;
    });
  }

  /** The writes among the actions (create, update, patch, delete), oldest first. */
  writes(): FakeAction[] {
    return this.actions.filter((a) => a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch');
  }

  /** Ends every open watch, as an API server closing its streams (informers re-list). */
  close(): void {
    this.tracker.endWatches();
  }
}
