import { isNotFound, type StoredObject } from '@certkit/apimachinery';
import { KUBERNETES_FINALIZER } from '../registry/builtins/namespaces.ts';
import type { Registry } from '../registry/registry.ts';
import { resourcePrefix } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import { ConflictError, type Storage } from '../storage/types.ts';
import { followPrefix } from './storage-follower.ts';

/**
 * The namespace lifecycle, as kube-controller-manager's namespace controller: a deleted namespace is
 * Terminating until every object in it is gone, then its `kubernetes` finalizer is released and it goes.
 */

const RECHECK_MS = 500;

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export class NamespaceController {
  private readonly registry: Registry;
  private readonly storage: Storage;
  private readonly namespaces: ObjectStore;
  private readonly draining = new Set<string>();
  private follower?: { stop(): void };
  private stopped = false;
  onError: (err: unknown) => void = () => {};

  constructor(registry: Registry, storage: Storage) {
    this.registry = registry;
    this.storage = storage;
    this.namespaces = registry.byResource('', 'namespaces')!;
  }

  /** Creates the namespaces every cluster has, once. */
  async ensureDefaults(): Promise<void> {
    for (const name of DEFAULT_NAMESPACES) {
      await this.namespaces.create(undefined, { metadata: { name } }).catch((err) => {
        if ((err as { status?: { reason?: string } }).status?.reason !== 'AlreadyExists') throw err;
      });
    }
  }

  start(): void {
    this.follower = followPrefix(this.storage, resourcePrefix(this.namespaces.def), {
      sync: (kvs) => {
        for (const kv of kvs) this.observe(this.namespaces.decode(kv.value, kv.modRevision));
      },
      event: (ev) => {
        if (ev.type === 'PUT') this.observe(this.namespaces.decode(ev.value, ev.revision));
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.follower?.stop();
  }

  private observe(ns: StoredObject): void {
    if (ns.metadata.deletionTimestamp) void this.drain(ns.metadata.name!);
  }

  private async drain(name: string): Promise<void> {
    if (this.draining.has(name)) return;
    this.draining.add(name);
    try {
      while (!this.stopped) {
        if (await this.deleteContents(name)) break;
        await new Promise((r) => setTimeout(r, RECHECK_MS));
      }
      if (!this.stopped) await this.releaseFinalizer(name);
    } catch (err) {
      if (!isNotFound(err)) this.onError(err);
    } finally {
      this.draining.delete(name);
    }
  }

  /** Deletes everything in the namespace; true once nothing is left (objects with finalizers may linger). */
  private async deleteContents(namespace: string): Promise<boolean> {
    let empty = true;
    for (const store of this.registry.all()) {
      if (!store.def.namespaced) continue;
      const { kvs } = await this.storage.range(`${resourcePrefix(store.def)}${namespace}/`, {});
      for (const kv of kvs) {
        empty = false;
        const obj = store.decode(kv.value, kv.modRevision);
        if (obj.metadata.deletionTimestamp) continue;
        await store
          .delete(namespace, obj.metadata.name!, { propagationPolicy: 'Background' })
          .catch((err) => {
            if (!isNotFound(err)) throw err;
          });
      }
    }
    return empty;
  }

  /**
   * Drops the `kubernetes` spec finalizer (what the namespaces/finalize subresource does); the namespace goes
   * once no finalizer, of the spec or the metadata, is left: another spec finalizer is its owner's to drop.
   */
  private async releaseFinalizer(name: string): Promise<void> {
    const key = `${resourcePrefix(this.namespaces.def)}${name}`;
    for (;;) {
      const kv = await this.storage.get(key);
      if (!kv) return;
      const ns = this.namespaces.decode(kv.value, kv.modRevision);
      const spec = (ns.spec as { finalizers?: string[] }) ?? {};
      const finalizers = (spec.finalizers ?? []).filter((f) => f !== KUBERNETES_FINALIZER);
      if (finalizers.length === (spec.finalizers ?? []).length) return;
      ns.spec = { ...spec, finalizers };
      try {
        if ((ns.metadata.finalizers ?? []).length === 0 && finalizers.length === 0)
          await this.storage.delete(key, kv.modRevision);
        else await this.storage.update(key, this.namespaces.encode(ns), kv.modRevision);
        return;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
  }
}
