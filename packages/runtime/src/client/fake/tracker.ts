import type { KubeObject, Status, WatchEventType } from '@certkit/apimachinery';
import type { ResourceRef } from '../types.ts';
import { WatchQueue } from './watch.ts';

/**
 * The in-memory client's storage, as client-go's testing.ObjectTracker: objects by resource and
 * `namespace/name`, one revision counter for all of them (as etcd's, so resourceVersions order every write),
 * the history of changes (for watches from a resourceVersion) and the open watches to tell. It stores what it
 * is given; the rules of the API (conflicts, generateName, finalizers…) are the resource client's.
 *
 * Tests of code that must survive a server's bad moments (informers, caches) drive the server side from here:
 * compact the history (old resourceVersions then answer 410 Expired), send bookmarks, and end, fail or break
 * the open watches.
 */

/** The key of a resource in the tracker: `resource.group`. */
export function resourceKey(ref: Pick<ResourceRef, 'group' | 'resource'>): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

export function objectKeyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

interface Change {
  resource: string;
  revision: number;
  type: Exclude<WatchEventType, 'BOOKMARK' | 'ERROR'>;
  object: KubeObject;
}

export class ObjectTracker {
  #revision = 0;
  #compactedRevision = 0;
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #history: Change[] = [];
  readonly #watches = new Map<string, Set<WatchQueue<KubeObject>>>();

  /** The latest revision: the resourceVersion of the last write, and of lists. */
  get revision(): number {
    return this.#revision;
  }

  /** The revision of the last compact(): reads and watches from an older resourceVersion are 410 Expired. */
  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  /** The stored object (the tracker's own: callers copy before handing it out). */
  get(resource: string, key: string): KubeObject | undefined {
    return this.#objects.get(resource)?.get(key);
  }

  /** Every stored object of the resource, in key order. */
  list(resource: string): KubeObject[] {
    const objects = this.#objects.get(resource);
    if (!objects) return [];
    return [...objects.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj);
  }

  /** Stores the object at the next revision (its resourceVersion), telling the resource's watches. */
  put(resource: string, object: KubeObject): KubeObject {
    const revision = ++this.#revision;
    const stored: KubeObject = {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(revision) },
    };
    let objects = this.#objects.get(resource);
    if (!objects) this.#objects.set(resource, (objects = new Map()));
    const key = objectKeyOf(stored.metadata?.namespace, stored.metadata?.name ?? '');
    const type = objects.has(key) ? 'MODIFIED' : 'ADDED';
    objects.set(key, stored);
    this.#record({ resource, revision, type, object: stored });
    return stored;
  }

  /** Removes the object; its last state, at the next revision, is what watches see deleted. */
  remove(resource: string, key: string): KubeObject | undefined {
    const objects = this.#objects.get(resource);
    const old = objects?.get(key);
    if (!objects || !old) return undefined;
    objects.delete(key);
    const revision = ++this.#revision;
    const tombstone: KubeObject = {
      ...old,
      metadata: { ...old.metadata, resourceVersion: String(revision) },
    };
    this.#record({ resource, revision, type: 'DELETED', object: tombstone });
    return tombstone;
  }

  /** Changes of the resource after `revision`, oldest first. */
  changesSince(resource: string, revision: number): Change[] {
    return this.#history.filter((c) => c.resource === resource && c.revision > revision);
  }

  addWatch(resource: string, watch: WatchQueue): void {
    let watches = this.#watches.get(resource);
    if (!watches) this.#watches.set(resource, (watches = new Set()));
    watches.add(watch);
  }

  /** Forgets the history up to the current revision, as etcd's compaction: older resourceVersions are gone. */
  compact(): void {
    this.#compactedRevision = this.#revision;
    this.#history.length = 0;
  }

  /** The watches not yet closed, of one resource or of all. */
  openWatches(resource?: string): WatchQueue[] {
    const sets = resource === undefined ? [...this.#watches.values()] : [this.#watches.get(resource) ?? []];
    return sets.flatMap((watches) => [...watches].filter((watch) => !watch.closed));
  }

  /** Ends every open watch, as a server closing its streams (a watch timeout): informers re-watch. */
  endWatches(): void {
    for (const watch of this.openWatches()) watch.end();
    this.#watches.clear();
  }

  /** Sends a BOOKMARK at the current revision on every open watch that asked for bookmarks. */
  bookmarkWatches(): void {
    for (const watch of this.openWatches()) {
      if (watch.bookmark) watch.push({ type: 'BOOKMARK', object: watch.bookmark(this.#revision) });
    }
  }

  /** Sends an ERROR event (a 410 Expired, say) on every open watch, then ends it, as the API server does. */
  errorWatches(status: Status): void {
    for (const watch of this.openWatches()) {
      watch.push({ type: 'ERROR', object: status });
      watch.end();
    }
  }

  /** Breaks every open watch with a transport error (ECONNRESET, say): the readers' iterators throw it. */
  breakWatches(error: Error): void {
    for (const watch of this.openWatches()) watch.fail(error);
  }

  #record(change: Change): void {
    this.#history.push(change);
    const watches = this.#watches.get(change.resource);
    if (!watches) return;
    for (const watch of watches) {
      if (watch.closed) watches.delete(watch);
      else if (watch.matches(change.object)) {
        watch.push({ type: change.type, object: watch.render(change.object) });
      }
    }
  }
}
