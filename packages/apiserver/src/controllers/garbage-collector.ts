import {
  isConflict,
  isNotFound,
  jsonEqual,
  type OwnerReference,
  parseApiVersion,
  type StoredObject,
} from '@certkit/apimachinery';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../registry/metadata.ts';
import { metadataJson, parseMetadata, sameMetadataAs } from '../registry/metadata-text.ts';
import type { Registry } from '../registry/registry.ts';
import { objectKey } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { KeyValue, Storage, StorageEvent } from '../storage/types.ts';
import { followPrefix } from './storage-follower.ts';

type ObjectMeta = StoredObject['metadata'];

/**
 * Garbage collection of owner references, as kube-controller-manager's collector does it:
 * - background: a dependent whose owners are all gone (checked by a live read, name and uid) is deleted;
 *   owners that are gone are dropped from a dependent that still has a live owner;
 * - foreground: an owner with the `foregroundDeletion` finalizer has its dependents deleted, and loses the
 *   finalizer (and so goes) once no dependent with blockOwnerDeletion remains;
 * - orphan: an owner with the `orphan` finalizer has its references removed from its dependents, then the
 *   finalizer is released.
 * It follows every object in storage but keeps in memory only the owner → dependents graph.
 */

interface Dependent {
  key: string;
  owners: OwnerReference[];
}

const RETRY_MS = 500;

export class GarbageCollector {
  private readonly registry: Registry;
  private readonly storage: Storage;
  /** Owner uid → keys of objects that name it. */
  private readonly dependentsOf = new Map<string, Set<string>>();
  /** Key → owner references of that object (only objects that have some). */
  private readonly ownersOf = new Map<string, Dependent>();
  private readonly queue = new Map<string, 'dependent' | 'owner'>();
  private running = false;
  private stopped = false;
  private follower?: { stop(): void };
  onError: (err: unknown) => void = () => {};

  constructor(registry: Registry, storage: Storage) {
    this.registry = registry;
    this.storage = storage;
  }

  start(): void {
    this.follower = followPrefix(this.storage, '/registry/', {
      sync: (kvs) => this.sync(kvs),
      event: (ev) => this.event(ev),
    });
  }

  stop(): void {
    this.stopped = true;
    this.follower?.stop();
  }

  private sync(kvs: KeyValue[]): void {
    this.dependentsOf.clear();
    this.ownersOf.clear();
    for (const kv of kvs) {
      const meta = parse(kv.value);
      if (!meta) continue;
      this.index(kv.key, meta);
      // Owners may have gone while nobody watched: check every dependent once.
      if (this.ownersOf.has(kv.key)) this.enqueue(kv.key, 'dependent');
      if (holdsGcFinalizer(meta)) this.enqueue(kv.key, 'owner');
    }
  }

  private event(ev: StorageEvent): void {
    if (ev.type === 'DELETE') {
      const meta = parse(ev.value);
      this.unindex(ev.key);
      const uid = meta?.uid;
      if (uid) for (const key of this.dependentsOf.get(uid) ?? []) this.enqueue(key, 'dependent');
      return;
    }
    // Only the metadata matters here, and it is a fraction of the text to look through (or parse).
    const metadata = metadataJson(ev.value);
    const text = metadata ?? ev.value;
    // Most objects have no owner references and are not deleting: skip parsing them.
    const deleting = text.includes('"deletionTimestamp"');
    if (!deleting && !text.includes('"ownerReferences"')) {
      if (this.ownersOf.has(ev.key)) this.unindex(ev.key);
      return;
    }
    // An update of a live object that left its metadata as it was (a status update) changes nothing here:
    // its owners were indexed from the previous value.
    if (
      !deleting &&
      metadata !== undefined &&
      ev.prevValue !== undefined &&
      sameMetadataAs(ev.value, metadata, ev.prevValue)
    )
      return;
    const meta = parse(ev.value, metadata);
    if (!meta) return;
    const before = this.ownersOf.get(ev.key);
    this.index(ev.key, meta);
    const after = this.ownersOf.get(ev.key);
    if (after && !jsonEqual(before?.owners, after.owners)) this.enqueue(ev.key, 'dependent');
    if (holdsGcFinalizer(meta)) this.enqueue(ev.key, 'owner');
    // A dependent leaving (or being deleted) may unblock a foreground owner waiting for it.
    if (meta.deletionTimestamp) {
      for (const ref of meta.ownerReferences ?? []) this.enqueueOwnerByUid(ref.uid);
    }
  }

  private index(key: string, meta: ObjectMeta): void {
    this.unindex(key);
    const owners = meta.ownerReferences ?? [];
    if (owners.length === 0) return;
    this.ownersOf.set(key, { key, owners });
    for (const ref of owners) {
      const set = this.dependentsOf.get(ref.uid) ?? new Set<string>();
      set.add(key);
      this.dependentsOf.set(ref.uid, set);
    }
  }

  private unindex(key: string): void {
    const existing = this.ownersOf.get(key);
    if (!existing) return;
    this.ownersOf.delete(key);
    for (const ref of existing.owners) {
      const set = this.dependentsOf.get(ref.uid);
      set?.delete(key);
      if (set?.size === 0) this.dependentsOf.delete(ref.uid);
      this.enqueueOwnerByUid(ref.uid);
    }
  }

  /** Owners are found by uid among deleting objects only when they wait on their dependents. */
  private readonly waitingOwners = new Map<string, string>();

  private enqueueOwnerByUid(uid: string): void {
    const key = this.waitingOwners.get(uid);
    if (key) this.enqueue(key, 'owner');
  }

  private enqueue(key: string, kind: 'dependent' | 'owner'): void {
    if (this.stopped) return;
    // An owner check also covers its own owner references, so it wins when both are queued.
    if (this.queue.get(key) !== 'owner') this.queue.set(key, kind);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [key, kind] = this.queue.entries().next().value as [string, 'dependent' | 'owner'];
        this.queue.delete(key);
        try {
          if (kind === 'owner') await this.processOwner(key);
          await this.processDependent(key);
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) this.onError(err);
          setTimeout(() => this.enqueue(key, kind), RETRY_MS).unref();
        }
      }
    } finally {
      this.running = false;
    }
  }

  private storeForKey(key: string): ObjectStore | undefined {
    for (const store of this.registry.all()) if (key.startsWith(store.prefix)) return store;
    return undefined;
  }

  /** An object's metadata as it is now: all the collector looks at, and a fraction of the object to parse. */
  private async read(key: string): Promise<{ store: ObjectStore; meta: ObjectMeta } | undefined> {
    const store = this.storeForKey(key);
    if (!store) return undefined;
    const kv = await this.storage.get(key);
    const meta = kv && parse(kv.value);
    return meta ? { store, meta } : undefined;
  }

  /** The owner's metadata as it is now, if it still exists with the referenced uid. */
  private async liveOwner(dependent: ObjectMeta, ref: OwnerReference): Promise<ObjectMeta | undefined> {
    const { group } = parseApiVersion(ref.apiVersion);
    const store = this.registry.byKind(group, ref.kind);
    if (!store) return undefined;
    const kv = await this.storage.get(
      objectKey(store.def, store.def.namespaced ? dependent.namespace : undefined, ref.name),
    );
    const owner = kv && parse(kv.value);
    return owner?.uid === ref.uid ? owner : undefined;
  }

  private async processDependent(key: string): Promise<void> {
    const found = await this.read(key);
    if (!found) return;
    const { store, meta } = found;
    const refs = meta.ownerReferences ?? [];
    if (refs.length === 0 || (meta.deletionTimestamp && !holdsGcFinalizer(meta))) return;
    const live: OwnerReference[] = [];
    let foregroundOwner = false;
    for (const ref of refs) {
      const owner = await this.liveOwner(meta, ref);
      if (!owner) continue;
      live.push(ref);
      if (
        owner.deletionTimestamp &&
        owner.finalizers?.includes(FOREGROUND_FINALIZER) &&
        ref.blockOwnerDeletion
      ) {
        foregroundOwner = true;
      }
    }
    const name = meta.name!;
    const namespace = meta.namespace;
    if (live.length === 0) {
      await store.delete(namespace, name, {
        propagationPolicy: 'Background',
        preconditions: { uid: meta.uid },
      });
    } else if (foregroundOwner && live.length === refs.length && !meta.deletionTimestamp) {
      await store.delete(namespace, name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: meta.uid },
      });
    } else if (live.length < refs.length) {
      const liveUids = new Set(live.map((r) => r.uid));
      await store.guaranteedUpdate(namespace, name, (current) => ({
        ...current,
        metadata: {
          ...current.metadata,
          ownerReferences: (current.metadata.ownerReferences ?? []).filter((r) => liveUids.has(r.uid)),
        },
      }));
    }
  }

  private async processOwner(key: string): Promise<void> {
    const found = await this.read(key);
    if (!found) return;
    const { store, meta } = found;
    const uid = meta.uid!;
    if (!meta.deletionTimestamp || !holdsGcFinalizer(meta)) {
      this.waitingOwners.delete(uid);
      return;
    }
    const finalizers = meta.finalizers ?? [];
    const dependents = [...(this.dependentsOf.get(uid) ?? [])];
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const depKey of dependents) await this.orphan(depKey, uid);
      await this.release(store, meta, ORPHAN_FINALIZER);
      return;
    }
    // Foreground: delete dependents; the owner goes once none that blocks it remains.
    this.waitingOwners.set(uid, key);
    let blocking = 0;
    for (const depKey of dependents) {
      const dep = await this.read(depKey);
      if (!dep) continue;
      const ref = dep.meta.ownerReferences?.find((r) => r.uid === uid);
      if (!ref) continue;
      if (ref.blockOwnerDeletion && (await this.inCycle(dep.meta))) {
        // It waits for a dependent that waits in turn (an owner reference cycle, an object owning itself):
        // nobody would ever go. As kube's collector, its references stop blocking, and the deletion goes on.
        await this.unblockOwnerReferences(dep.store, dep.meta);
        continue;
      }
      if (ref.blockOwnerDeletion) blocking++;
      if (!dep.meta.deletionTimestamp) {
        await dep.store
          .delete(dep.meta.namespace, dep.meta.name!, {
            propagationPolicy: 'Foreground',
            preconditions: { uid: dep.meta.uid },
          })
          .catch((err) => {
            if (!isNotFound(err)) throw err;
          });
      }
    }
    if (blocking === 0) {
      this.waitingOwners.delete(uid);
      await this.release(store, meta, FOREGROUND_FINALIZER);
    }
  }

  /**
   * kube's cycle detection (attemptToDeleteItem): a dependent that is itself deleting its dependents in the
   * foreground, with one of its own dependents doing the same, may be waiting, through them, for its owner.
   * Like upstream's, it may see a cycle where there is only a chain; the cost is an owner going first.
   */
  private async inCycle(dependent: ObjectMeta): Promise<boolean> {
    if (!isDeletingDependents(dependent)) return false;
    for (const key of this.dependentsOf.get(dependent.uid!) ?? []) {
      const next = await this.read(key);
      if (next && isDeletingDependents(next.meta)) return true;
    }
    return false;
  }

  private async unblockOwnerReferences(store: ObjectStore, meta: ObjectMeta): Promise<void> {
    await store.guaranteedUpdate(meta.namespace, meta.name!, (current) => {
      if (current.metadata.uid !== meta.uid) return current;
      return {
        ...current,
        metadata: {
          ...current.metadata,
          ownerReferences: (current.metadata.ownerReferences ?? []).map((r) =>
            r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r,
          ),
        },
      };
    });
  }

  private async orphan(dependentKey: string, ownerUid: string): Promise<void> {
    const dep = await this.read(dependentKey);
    if (!dep) return;
    await dep.store.guaranteedUpdate(dep.meta.namespace, dep.meta.name!, (current) => ({
      ...current,
      metadata: {
        ...current.metadata,
        ownerReferences: (current.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid),
      },
    }));
  }

  private async release(store: ObjectStore, owner: ObjectMeta, finalizer: string): Promise<void> {
    await store.guaranteedUpdate(owner.namespace, owner.name!, (current) => {
      if (current.metadata.uid !== owner.uid) return current;
      return {
        ...current,
        metadata: {
          ...current.metadata,
          finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== finalizer),
        },
      };
    });
  }
}

function isDeletingDependents(meta: ObjectMeta): boolean {
  return meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).includes(FOREGROUND_FINALIZER);
}

function holdsGcFinalizer(meta: ObjectMeta): boolean {
  const f = meta.finalizers ?? [];
  return (
    meta.deletionTimestamp !== undefined && (f.includes(FOREGROUND_FINALIZER) || f.includes(ORPHAN_FINALIZER))
  );
}

/**
 * A stored object's metadata (from the JSON of its metadata when that was cut out already), or undefined for
 * a value that is not an object with metadata.
 */
function parse(value: string, metadataText?: string): ObjectMeta | undefined {
  try {
    const meta = (metadataText !== undefined ? JSON.parse(metadataText) : parseMetadata(value)) as
      ObjectMeta | undefined;
    return meta !== null && typeof meta === 'object' ? meta : undefined;
  } catch {
    return undefined;
  }
}
